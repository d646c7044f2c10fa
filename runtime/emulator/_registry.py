"""The one op registry: public op name -> implementation and notes.

Every public PyPTO op the emulator offers is registered here by the `op` decorator; ops it knowingly does
not emulate are listed in `UNSUPPORTED` with the reason, and calling one raises `EmulatorUnsupported`
naming the op. A test asserts the two sets cover the whole public op surface.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runtime.emulator._errors import EmulatorUnsupported
from runtime.emulator._location import user_location

__all__ = ["OPS", "UNSUPPORTED", "OpSpec", "op", "unsupported_stub"]


@dataclass(frozen=True)
class OpSpec:
    """A registered op: ``impl`` records the op into the current trace (checks run first, inside it)."""

    name: str
    impl: Callable[..., Any]
    notes: str = ""
    method: bool = True  # also available as a Tensor method


OPS: dict[str, OpSpec] = {}

UNSUPPORTED: dict[str, str] = {
    "scaled_mm": "MX (micro-scaled FP8) matmul: FP8 block scales are not emulated",
    "conv": "convolution (experimental) is not emulated",
    "quantize": "HEAD quantisation ops are not emulated",
    "dequantize": "HEAD quantisation ops are not emulated",
    "quant_mx": "HEAD quantisation ops are not emulated",
    "sort32": "low-level sort helper with a device-specific packed layout",
    "mrgsort": "low-level merge-sort helper with a device-specific packed layout",
    "online_softmax": "HEAD experimental fused op",
    "online_softmax_update": "HEAD experimental fused op",
    "gather_in_ub": "HEAD experimental paged-attention block gather",
    "gather_in_l1": "HEAD experimental paged-attention block gather",
    "function": "legacy `with pypto.function(...)` tracing style (pre-2026-03) is not emulated; use "
                "@pypto.frontend.jit",
    "jit_legacy": "legacy runtime _JIT",
    "pass_verify_save": "debug op of the pass-verify oracle",
}


def op(name: str, *, notes: str = "", method: bool = True) -> Callable[[Callable], Callable]:
    """Register ``fn`` as the implementation of public op ``name``."""

    def deco(fn: Callable) -> Callable:
        OPS[name] = OpSpec(name=name, impl=fn, notes=notes or (fn.__doc__ or "").strip().split("\n")[0],
                           method=method)
        return fn

    return deco


def unsupported_stub(name: str, why: str | None = None) -> Callable[..., Any]:
    """A callable that raises EmulatorUnsupported naming ``pypto.<name>`` (``sub.name`` in a submodule) and the
    reason: ``why``, else the op's `UNSUPPORTED` entry."""
    short = name.rsplit(".", 1)[-1]

    def stub(*_a: Any, **_k: Any) -> Any:
        f, ln = user_location()
        raise EmulatorUnsupported("EMU_UNSUPPORTED", f"pypto.{name} is not supported by the emulator: "
                                  f"{UNSUPPORTED[name] if why is None else why}", file=f, line=ln, op=short)

    stub.__name__ = short
    stub.__qualname__ = name
    return stub
