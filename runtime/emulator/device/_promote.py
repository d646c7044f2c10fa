"""BF16 promotion on Ascend A2/A3: the compiler keeps a BF16 chain in FP32 and rounds only where data leaves it.

Why: the real pypto 0.2.0 compiler for A2/A3 (DAV_2201, whose vector unit has no native BF16 arithmetic) lowers a
BF16 op chain to ``CAST bf16->fp32``, the ops on FP32 and one ``CAST fp32->bf16`` where a value is written out.
Read from the IR it compiles in SIM mode (``output/*/program.json``; the probes are in docs/emulator-fidelity.md,
"Numerics"):

- elementwise ops, reductions and the cube's result (``A_MUL_B`` -> FP32, read by a vector op as FP32) declared
  BF16 stay FP32;
- rounded to BF16: a write into a kernel argument (GM), an ``assemble`` into any BF16 tensor (locals included),
  a cube operand (the vector result is copied out as BF16 before ``L1_TO_L0A/B``), an explicit ``cast`` to BF16
  from another dtype, and the operand of an explicit ``cast`` from BF16 to another dtype (compiled as
  ``CAST fp32->bf16, CAST bf16->fp32``);
- not rounded: ``t[:] = v`` into a local tensor, a same-dtype ``cast``, views and data movement.

The Ascend 950 (DAV_3510) has native BF16 vector arithmetic and rounds after every op, as the emulator did
everywhere before (no promotion there). The device decides this (`ExecOptions.npuarch`), never the program: the
program keeps the dtypes the kernel declared; `promote_params` gives the executable form of one op.
"""

from __future__ import annotations

from typing import Any

from runtime.emulator.device._program import KernelProgram, Loop, Op, Region

__all__ = ["BF16", "PROMOTED_KINDS", "PROMOTING", "bf16_promoted", "declared_dtypes", "promote_params"]

BF16 = "bfloat16"
F32 = "float32"

PROMOTED_KINDS = frozenset({"binary", "unary", "where", "reduce", "var", "cumsum", "cumprod", "softmax",
                            "rms_norm", "matmul"})
"""kinds whose BF16 result the A2/A3 compiler keeps in FP32 (``odt`` becomes float32)"""

_ROUNDED_INPUTS = {"matmul": ("a", "b", "bias"), "view_dtype": ("src",)}
"""kinds that see their BF16 operands as BF16 bits (cube operands go through GM; a bit view reads the bits)"""


PROMOTING = PROMOTED_KINDS | frozenset(_ROUNDED_INPUTS) | {"cast", "assemble"}
"""the kinds `promote_params` may change (every other op runs with the program's parameters: not asked)"""


def bf16_promoted(npuarch: str) -> bool:
    """Whether the device with this ``pypto.platform.npuarch`` keeps BF16 intermediates in FP32 (A2/A3: yes)."""
    return npuarch != "DAV_3510"


def declared_dtypes(program: KernelProgram) -> dict[int, str]:
    """Storage key -> the dtype the kernel declared for it (numpy name): kernel arguments and op results."""
    out = {p.key: p.dtype for p in program.params}
    _declared_in(program.body, out)
    return out


def _declared_in(r: Region, out: dict[int, str]) -> None:
    """`declared_dtypes` of one region (a module function: a recursive closure would be a reference cycle)."""
    for path in r.paths:
        for it in path.items:
            if isinstance(it, Op):
                for k, (dt, _) in zip(it.outs, it.types, strict=False):
                    out.setdefault(k, dt)
                if it.kind == "assemble":
                    out.setdefault(it.params["dst"], it.params["ddtype"])
            elif isinstance(it, Loop):
                _declared_in(it.body, out)


def promote_params(op: Op, declared: dict[int, str]) -> dict[str, Any] | None:
    """The parameters ``op`` runs with on a promoting device, or None when they are the program's own."""
    p = op.params
    new: dict[str, Any] | None = None
    if op.kind in PROMOTED_KINDS and p.get("odt") == BF16:
        new = {**p, "odt": F32}
    names = _ROUNDED_INPUTS.get(op.kind)
    if names:
        rounded = tuple(n for n in names if p.get(n) is not None and declared.get(p[n]) == BF16)
        if rounded:
            new = {**(new or p), "round_bf16": rounded}
    if op.kind == "cast" and p.get("src") == "DT_BF16" and p.get("dst") != "DT_BF16":
        new = {**p, "round_bf16": ("a",)}  # compiled as CAST fp32->bf16, CAST bf16->dst: the value is rounded
    if op.kind == "assemble" and p.get("ddtype") == BF16:
        new = {**p, "store_bf16": True}
    return new
