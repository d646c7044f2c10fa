"""Test modes that prove a recorded run replays on another machine: ulp noise and a forced no-userns sandbox.

Why: float32 results (BLAS matmul kernels, SIMD ufuncs, reductions) differ in their last bits between CPUs,
and the candidate sandbox may or may not get user namespaces. A recorded run must replay byte-identically
anyway (ARCHITECTURE §0.2), so the tests simulate "another machine" on this one:

* **ulp noise** (:func:`ulp_noise`): every float32/float64 result of an emulator op, of the golden's numpy
  matmul / ufunc / reduction calls, every golden output and captured intermediate, and every candidate output
  is moved by a few ulps (-2..+2), seeded. The noise is a pure function of (seed, the array's bytes), so the
  same computation gives the same noise in one run (the verifier's determinism check still holds), as on a
  real machine.
* **no user namespaces** (:func:`no_userns`): the sandbox takes the code path of a host that refuses them.

Activation is parent-side only: a context manager, or ``PTO_FORGE_TEST_ULP_NOISE=<seed>`` /
``PTO_FORGE_TEST_NO_USERNS=1`` in the *parent's* environment (for subprocess variants). Children learn the
seed through a runner argument, never through their environment (the allow-list in
:mod:`runtime.sandbox.env_policy` drops these variables), so a kernel cannot tell it is being tested.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["NOISE_ARG", "NOISE_ENV", "NOISY_OPS", "NO_USERNS_ENV", "NoiseInjector", "no_userns", "noise_seed", "ulp_noise"]

NOISE_ENV = "PTO_FORGE_TEST_ULP_NOISE"
NO_USERNS_ENV = "PTO_FORGE_TEST_NO_USERNS"
NOISE_ARG = "--ulp-noise"
"""Runner argument carrying the seed to a child (stripped from ``sys.argv`` before user code runs)."""
MAX_ULPS = 2

_state: dict[str, Any] = {"seed": None, "no_userns": None}


def noise_seed() -> int | None:
    """The active ulp-noise seed in this (parent) process, or None."""
    if _state["seed"] is not None:
        return int(_state["seed"])
    raw = os.environ.get(NOISE_ENV, "").strip()
    return int(raw) if raw.lstrip("-").isdigit() else None


def no_userns() -> bool:
    """True when the sandbox must behave as on a host without unprivileged user namespaces."""
    if _state["no_userns"] is not None:
        return bool(_state["no_userns"])
    return os.environ.get(NO_USERNS_ENV, "") not in ("", "0")


@contextlib.contextmanager
def ulp_noise(seed: int | None, *, without_userns: bool = False) -> Iterator[None]:
    """Within the block, golden and candidate children run with ulp noise ``seed`` (None: no noise)."""
    saved = dict(_state)
    _state["seed"], _state["no_userns"] = seed, (True if without_userns else None)
    try:
        yield
    finally:
        _state.update(saved)


def child_args() -> list[str]:
    """Arguments that hand the active noise seed to a child runner (empty when no noise is active)."""
    seed = noise_seed()
    return [f"{NOISE_ARG}={seed}"] if seed is not None else []


def take_seed(argv: list[str]) -> int | None:
    """Remove the noise argument from ``argv`` (in place) and return its seed (child side)."""
    seed = None
    for arg in list(argv):
        if arg.startswith(NOISE_ARG + "="):
            seed = int(arg.split("=", 1)[1])
            argv.remove(arg)
    return seed


NOISY_OPS = frozenset({
    "matmul", "sum", "prod", "var", "cumsum", "cumprod", "softmax", "rms_norm", "expand_exp_dif",
    "add", "sub", "mul", "div", "pow", "hypot", "atan2", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10",
    "sqrt", "rsqrt", "reciprocal", "sigmoid", "cbrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos",
    "atan", "asinh", "acosh", "atanh", "erf", "erfc", "prelu", "lrelu", "fmod", "remainder"})
"""Emulator ops whose float results the noise moves: matmul, reductions, arithmetic and transcendental ufuncs.
Exact ops (copies, views, compares, min/max, casts, rounding, sign and bit ops) are identical on every CPU."""

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_BITS = {np.dtype(np.float32): (np.int32, 0x7F800000), np.dtype(np.float64): (np.int64, 0x7FF0000000000000)}


class NoiseInjector:
    """Moves float32/float64 arrays by -``MAX_ULPS``..+``MAX_ULPS`` ulps, as a function of (seed, bytes)."""

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)
        self.key = hashlib.sha256(f"ulp-noise:{self.seed}".encode()).digest()[:16]

    def perturb(self, arr: Any) -> Any:
        """A perturbed copy of ``arr`` (float32/float64 ndarrays only; anything else is returned unchanged)."""
        if not isinstance(arr, np.ndarray) or arr.dtype not in _FLOATS or arr.size == 0:
            return arr
        a = np.ascontiguousarray(arr)
        digest = hashlib.blake2b(a.tobytes(), digest_size=8, key=self.key).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        ints, exp_mask = _BITS[a.dtype]
        step = rng.integers(-MAX_ULPS, MAX_ULPS + 1, size=a.shape).astype(ints)
        bits = a.view(ints)
        finite_nonzero = ((bits & exp_mask) != exp_mask) & (a != 0)
        # sign-magnitude: adding to the integer view moves the magnitude by that many ulps (either sign)
        moved = (bits + step).view(a.dtype)
        out = np.where(finite_nonzero & np.isfinite(moved) & (np.sign(moved) == np.sign(a)), moved, a)
        return out.reshape(arr.shape)

    def perturb_inplace(self, arr: Any) -> None:
        """Perturb a freshly computed array in place (callers guarantee nobody else holds a view of it)."""
        if isinstance(arr, np.ndarray) and arr.dtype in _FLOATS and arr.size and arr.flags.writeable:
            arr[...] = self.perturb(arr)

    def wrap_numpy(self, np_module: Any) -> None:
        """Make numpy's matmul, ufunc and reduction entry points return perturbed results (golden side).

        Only module attributes are wrapped (``np.exp(x)``, ``np.sum(x)``, ``x @ y`` via ``np.matmul`` is not
        reachable): operators on arrays stay exact, which is why outputs and intermediates are perturbed too.
        """
        names = ("matmul", "dot", "einsum", "tensordot", "exp", "log", "sqrt", "tanh", "sin", "cos", "power",
                 "divide", "reciprocal", "sum", "mean", "var", "std", "prod", "cumsum", "logaddexp", "expm1",
                 "log1p")
        for name in names:
            fn = getattr(np_module, name, None)
            if fn is None or getattr(fn, "__ulp_noise__", False):
                continue
            setattr(np_module, name, self._wrap(fn))

    def _wrap(self, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            if kwargs.get("out") is not None:
                return out
            return self.perturb(out) if isinstance(out, np.ndarray) else out

        wrapped.__ulp_noise__ = True  # type: ignore[attr-defined]
        wrapped.__name__ = getattr(fn, "__name__", "wrapped")
        wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapped


_active: dict[str, NoiseInjector | None] = {"injector": None}


def activate_in_child(seed: int | None) -> NoiseInjector | None:
    """Child side: install the injector for this process (the emulator's executor consults :func:`active`)."""
    _active["injector"] = NoiseInjector(seed) if seed is not None else None
    return _active["injector"]


def active() -> NoiseInjector | None:
    """The injector installed in this child process, or None (the normal case)."""
    return _active["injector"]
