"""Shared vocabulary of the emulator acceptance corpus (no `pypto` import here).

Every corpus file defines module-level functions named ``case_<name>()`` that return a `KernelCase`:
one or more kernel calls on numpy arrays, what every written argument must hold afterwards (a numpy
reference computed independently of the emulator, from the spec's semantics), and the tolerance that
fits the dtypes involved. `tests/emulator/test_corpus.py` discovers the ``case_*`` names statically (so
test ids exist even when the emulator cannot be imported) and runs each case in a fresh emulator session.

Why a case object rather than asserts inside the corpus files: the corpus files stay plain PyPTO code
plus references, and one runner applies the same checks to all of them (no NaN poison in results,
inputs untouched, no error diagnostics, no warnings unless the case expects some).
"""

import importlib.util
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
I32 = np.dtype(np.int32)


@dataclass(frozen=True)
class Tol:
    """Absolute/relative tolerance for one compared argument (``|a-e| <= atol + rtol*|e|``)."""

    atol: float
    rtol: float


EXACT = Tol(0.0, 0.0)
FP32 = Tol(1e-5, 1e-5)
FP32_LOOSE = Tol(1e-4, 1e-4)  # transcendental chains, long fp32 reductions in a different order
FP16 = Tol(2e-3, 2e-3)  # about two fp16 ulps near 1
BF16_TOL = Tol(1.6e-2, 1.6e-2)  # about two bf16 ulps near 1


@dataclass
class Call:
    """One kernel call. ``expect`` maps an argument position to its required content after the call."""

    kernel: Callable[..., Any]
    args: tuple
    expect: dict[int, np.ndarray]
    tol: Tol | dict[int, Tol] = FP32
    kwargs: dict[str, Any] = field(default_factory=dict)

    def tol_for(self, pos: int) -> Tol:
        return self.tol[pos] if isinstance(self.tol, dict) else self.tol


@dataclass
class KernelCase:
    """A corpus entry: calls made in order inside one emulator session, and extra expectations.

    Attributes:
        calls: the kernel calls; each is checked right after it returns.
        clean: when True the session must end without any warning diagnostic; False for kernels that use
            something the spec says the emulator should warn about (multi-value unroll_list ...).
        warn_lines: kernel lines (file, line) where a warning diagnostic is required.
        check: extra assertion on the session after all calls (e.g. how often the body was traced).
        spec: the spec section(s) the case comes from, printed on failure.
        npuarch: the device the case runs on (``Options.npuarch``; None = the default, A2/A3): the numerics of
            BF16 chains depend on it (A2/A3 keeps them in FP32, the Ascend 950 rounds after every op).
    """

    calls: list[Call]
    clean: bool = True
    warn_lines: list[tuple[str, int]] = field(default_factory=list)
    check: Callable[[Any], None] | None = None
    spec: str = ""
    npuarch: str | None = None


def single(kernel: Callable[..., Any], args: tuple, expect: dict[int, np.ndarray],
           tol: Tol | dict[int, Tol] = FP32, *, spec: str = "", clean: bool = True,
           kwargs: dict[str, Any] | None = None, **extra: Any) -> KernelCase:
    """A case with one call."""
    return KernelCase(calls=[Call(kernel, args, expect, tol, kwargs or {})], spec=spec, clean=clean, **extra)


def rng(seed: int) -> np.random.Generator:
    """The seeded generator every input builder uses."""
    return np.random.default_rng(seed)


def uniform(r: np.random.Generator, shape: tuple[int, ...], lo: float = -1.0, hi: float = 1.0,
            dtype: np.dtype = F32) -> np.ndarray:
    """Uniform values, rounded to ``dtype`` (bf16 via ml_dtypes)."""
    return r.uniform(lo, hi, size=shape).astype(np.float32).astype(dtype)


def sentinel(shape: tuple[int, ...], dtype: np.dtype = F32, value: float = -777.0) -> np.ndarray:
    """A preallocated output filled with a recognisable value (to see which parts a kernel wrote)."""
    return np.full(shape, value, dtype=np.float32).astype(dtype)


def f32(a: np.ndarray) -> np.ndarray:
    """Float32 copy (bf16/fp16 widen exactly)."""
    return np.asarray(a).astype(np.float32)


def rnd(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Round a float32/float64 result to ``dtype`` and widen back to float32 (per-op device rounding)."""
    return np.asarray(a, dtype=np.float32).astype(dtype).astype(np.float32)


def marker_line(path: str, tag: str) -> int:
    """1-based line of the first line in ``path`` containing ``tag`` (kernels mark lines with comments)."""
    with open(path, encoding="utf-8") as fh:
        for n, text in enumerate(fh, start=1):
            if tag in text:
                return n
    raise LookupError(f"marker {tag!r} not found in {path}")


def chain_kernel(tmp_path: Path, template: str, steps: list[str], indent: int, stem: str) -> Callable[..., Any]:
    """The jit kernel ``k`` of ``template`` with ``steps`` (lines of a random op chain) as its ``{body}``, indented by
    ``indent``, written to ``tmp_path/<stem>.py`` and imported: a property test's kernel is a real file, as the
    parser reads kernels from their source."""
    body = textwrap.indent("\n".join(steps), " " * indent)
    path = tmp_path / f"{stem}.py"
    path.write_text(template.format(body=body))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None, path
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod.k
