"""Device-divergence warnings the device executor derives from the program itself.

Why: the tracer warns when a kernel asks for something the real device computes differently (`_errors.DEVICE_DIVERGENT`:
a ``pypto.sum`` on a BF16/FP16 tile, a nan/inf scalar operand), and verification fails such a kernel. But the tracer
runs in the candidate's own process, so those warnings travel through code the candidate controls (red team s17:
"the evidence comes from the candidate's process"). The ops that trigger them are in the program the device
executes, so the device - a trusted process in verification - says the same thing from the ops alone: the same
code, location and message as the tracer's, so an in-process run (where both warn into one session) reports it once.
Only what the program shows exactly: ``EMU_SUM_FP32`` (a ``sum`` reduce whose result dtype is BF16/FP16) and
``EMU_SCALAR_INF`` (an add/sub/mul/div with a non-finite scalar operand). The other divergence codes come from the
device already (``EMU_PARALLEL_OVERLAP``) or need the tracer's view of the kernel (``EMU_RESHAPE_INPLACE``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

__all__ = ["divergence_warning", "scalar_inf_message", "sum_fp32_message", "warning_first"]

_HALF_NAMES = {"bfloat16": "DT_BF16", "float16": "DT_FP16"}
"""numpy dtype name of an op's result -> the pypto name the tracer's message uses"""


def sum_fp32_message(dtype_name: str) -> str:
    """``EMU_SUM_FP32``'s message, the tracer's and the device's (one text: a run lists it once)."""
    return f"sum on {dtype_name}: reduce in FP32 (cast first); gym rule: sum is FP32-only"


def scalar_inf_message(opname: str) -> str:
    """``EMU_SCALAR_INF``'s message, the tracer's and the device's."""
    return f"{opname}: nan/inf scalar operands are not supported on the device"


def divergence_warning(kind: str, name: str, params: dict[str, Any]) -> tuple[str, str] | None:
    """(code, message) of the divergence an op with these params shows, or None."""
    if kind == "reduce" and params.get("fn") == "sum":
        half = _HALF_NAMES.get(str(params.get("odt")))
        if half is not None:
            return "EMU_SUM_FP32", sum_fp32_message(half)
    elif kind == "binary" and params.get("fn") in ("add", "sub", "mul", "div"):
        scalar = params.get("scalar")
        if scalar is not None and params.get("b") is None:
            try:
                value = float(scalar)
            except (TypeError, ValueError):
                return None
            if not math.isfinite(value):
                return "EMU_SCALAR_INF", scalar_inf_message(name)
    return None


def warning_first(run: Callable[[Any], None], code: str, message: str, op: Any) -> Callable[[Any], None]:
    """``run`` that first records the op's divergence warning on the executing environment."""
    inner = run
    file, line, name = op.file, op.line, op.name

    def warned(env: Any) -> None:
        env.warn(code, message, file=file, line=line, op=name)
        inner(env)

    return warned
