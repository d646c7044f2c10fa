"""Op x dtype pairs the real pypto 0.2.0 frontend refuses when it traces the call (probed, not documented).

Why: the emulator warns (``EMU_DTYPE``) where an op is used outside its documented dtypes - the docs are sometimes
stricter than the compiler (``sum`` on FP16 compiles and sums right, spec c13) - so a kernel calling ``pypto.log`` on
INT32 passed here with a warning, while the wheel stops it at that line. Probed on the installed 0.2.0 wheel in SIM
mode (3 Dec 2026; 57 ops x FP32 FP16 BF16 INT32 INT16 INT8, a [4, 32] tile, the result assembled): every pair below
failed in the *frontend* (at the call, before any pass). Failures in the passes are left out: most were the simulator's
cost model lacking the opcode (``F92001 [SIMULATION] No pipe type corresponding to opcode``: ``remainder``, ``fmod``,
``hypot``, ``exp2``, the bitwise ops, ``prod``, ``lrelu`` ... on every dtype), which says nothing of the device.
Not here either: ``cbrt``, ``copysign``, ``exp2``, ``expm1``, ``cumsum`` on INT16/INT32 and ``pow`` on INT16/INT8 fail at
the *assemble* of their result into a tensor of the input dtype (``CHECK FAILED: dest.GetDataType() ==
tensor.GetDataType()``): their result is not of the input dtype there (``pow`` and ``expm1`` on INT16 assemble into FP32),
while the emulator keeps the input dtype - a difference of result dtypes, listed in docs/emulator-fidelity.md, not a
refusal of the call.

Under ``compat="0.2.0"`` every pair is refused; under ``head`` only a pair outside the op's documented dtypes (the docs
and the 0.2.0 compiler agree: HEAD may have widened the rest).
"""

from __future__ import annotations

from typing import Any

from runtime.emulator._enums import FLOAT_TYPES, DataType
from runtime.emulator._errors import EmulatorUnsupported
from runtime.emulator._location import user_location

__all__ = ["check"]

_I32, _I16, _I8, _BF16 = DataType.DT_INT32, DataType.DT_INT16, DataType.DT_INT8, DataType.DT_BF16

REFUSED: dict[str, frozenset[DataType]] = {
    "log": frozenset({_I32, _I16}),
    "log2": frozenset({_I32, _I16, _I8}),
    "log10": frozenset({_I32, _I16, _I8}),
    "log1p": frozenset({_I32, _I16, _I8}),
    "logical_not": frozenset({_I32, _I16}),
    "round": frozenset({_I8}),
    "clip": frozenset({_BF16, _I8}),
    "clip:scalar": frozenset({_I8}),
    "maximum:scalar": frozenset({_I8}),
    "minimum:scalar": frozenset({_I8}),
    "gcd": frozenset({DataType.DT_FP32, DataType.DT_FP16, _BF16}),
    # fidelity audit s31: `CheckBitwiseShiftDtype` takes INT16 only (INT8, INT32, UINT8 probed), shift amount a
    # tensor or a number alike
    **{f"bitwise_{d}_shift{form}": frozenset({_I32, _I8, DataType.DT_UINT8})
       for d in ("left", "right") for form in ("", ":scalar")},
}
"""op (``op:scalar``: its tensor-scalar form, which refuses other dtypes - ``clip(x, 1, 3)`` and ``pow(x, 2)`` take
BF16 and INT16) -> the dtypes its frontend refuses, each with ``FC0001`` at the call"""


_BITS = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift"})
"""ops on the bits of an integer: the 0.2.0 frontend takes float tiles too (what the device computes is unknown: the
simulator's cost model has no opcode for them), here a float tile is refused as not emulated"""


def check(tr: Any, opname: str, dt: DataType, documented: frozenset | None, *, scalar: bool = False) -> None:
    """Raise the wheel's error if its frontend refuses ``opname`` on ``dt`` (see the module doc for the targets)."""
    if opname in _BITS and dt in FLOAT_TYPES:
        f, ln = user_location()
        raise EmulatorUnsupported("EMU_UNSUPPORTED", f"{opname} on {dt.name} is not emulated: the 0.2.0 frontend "
                                  "accepts it, but what the device computes on float bits is unknown (cast to an "
                                  "integer dtype first)", file=f, line=ln, op=opname)
    got = REFUSED.get(f"{opname}:scalar" if scalar else opname)
    if got is None or dt not in got:
        return
    if tr.options.compat != "0.2.0" and (documented is None or dt in documented):
        return
    raise tr.error("FC0001", f"{opname} on {dt.name} is refused by the pypto 0.2.0 frontend", op=opname)
