"""Matmul: cube-tile checks (FC4000, FC4001), dtype table, valid M/N/K, FP32 (INT32) accumulation, one rounding."""

from __future__ import annotations

from typing import Any

from runtime.emulator._enums import DataType, ReLuType, bytes_of, numpy_dtype_name
from runtime.emulator._ops_core import check_whole_dynamic, new_out, reader
from runtime.emulator._registry import op
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import Tracer, current_scope, require_tracer

__all__ = ["check_cube_tiles", "matmul"]

_FP8 = {DataType.DT_FP8E4M3, DataType.DT_FP8E5M2, DataType.DT_HF8, DataType.DT_FP8}
_OUT_ANY = {DataType.DT_FP32, DataType.DT_FP16, DataType.DT_BF16, DataType.DT_INT32}
_OUT_HEAD = {DataType.DT_INT8}
_OUT = {
    DataType.DT_FP16: {DataType.DT_FP16, DataType.DT_FP32},
    DataType.DT_BF16: {DataType.DT_BF16, DataType.DT_FP32},
    DataType.DT_FP32: {DataType.DT_FP32},
    DataType.DT_INT8: {DataType.DT_INT32},
}


def check_cube_tiles(tr: Tracer, dtype: DataType, a_trans: bool = False, opname: str = "matmul") -> tuple:
    """The current cube tiles, checked as the wheel's CheckCubeTiling does for operands of ``dtype``."""
    ct = current_scope()["cube_tile"]
    if ct is None:
        raise tr.error("FC4000", "Invalid tile values: kL0=0, kL1a=0, kL1b=0, mL0=0, mL1=0, nL0=0, nL1=0, func "
                       "CheckCubeTiling (call pypto.set_cube_tile_shapes before matmul)", op=opname)
    m, k, n = ct[0], ct[1], ct[2]
    kk = list(k) if len(k) == 3 else [k[0], k[1], k[1]]
    vals = {"kL0": kk[0], "kL1a": kk[1], "kL1b": kk[2], "mL0": m[0], "mL1": m[1], "nL0": n[0], "nL1": n[1]}
    if any(v <= 0 for v in vals.values()):
        raise tr.error("FC4000", "Invalid tile values: " + ", ".join(f"{a}={b}" for a, b in vals.items()),
                       op=opname)
    for l0, l1, a, b in ((kk[0], kk[1], "kL0", "kL1a"), (kk[0], kk[2], "kL0", "kL1b"), (m[0], m[1], "mL0", "mL1"),
                         (n[0], n[1], "nL0", "nL1")):
        if not (l0 <= l1 and l1 % l0 == 0):
            raise tr.error("FC4000", f"Invalid L1/L0 relation: {a}={l0}, {b}={l1}, require {a} <= {b} && "
                           f"{b} % {a} == 0", op=opname)
    if kk[0] % 16 or n[0] % 16:
        # the wheel's CheckCubeTiling (fidelity audit s33: a tiny Linear's cube tile set to its K = 10, N = 20 -
        # KernelBench level 2 - compiled here and is refused there, in every dtype; mL0 is free)
        raise tr.error("FC4001", f"kL0({kk[0]}) and nL0({n[0]}) must be aligned to 16 elements, func "
                       "CheckCubeTiling", op=opname)
    for name, l0 in (("kL0", kk[0]), ("nL0", n[0])):
        # INT8: 16 elements are 16 bytes (fidelity audit s33b: FC4001 on the wheel); FP8 runs on the 950 only, which
        # the wheel's SIM does not compile here - not checked
        if dtype == DataType.DT_INT8 and l0 * bytes_of(dtype) % 32:
            raise tr.error("FC4001", f"{name} * sizeof(dtype) = {l0 * bytes_of(dtype)} bytes, must be 32-byte "
                           f"aligned ({opname} of {dtype.name})", op=opname)
    if a_trans and m[0] * bytes_of(dtype) % 32:
        raise tr.error("FC4001", f"mL0 memory not aligned when transA=true: {m[0] * bytes_of(dtype)} bytes, "
                       "must be 32-byte aligned", op=opname)
    return ct


def _c16(v: int) -> int:
    return -(-v // 16) * 16


def _cube_capacity(tr: Tracer, ct: tuple, in_dt: DataType, extents: tuple[Any, Any, Any]) -> None:
    """Capacity rules of §6.2 on A2/A3. L0A / L0B / L0C over capacity is the wheel's pass failure (fidelity audit
    s33: "Alloc tensor size [131072] exceeds MEM_L0B size [65536]" for k 256 on an fp32 matmul, in every case the
    doc formula gives, with each L0 value clipped to the operand's extent - a 256 tile on a [40, 10] operand
    compiles); L1 over capacity compiles there (m 256 / k 512 / n 256 fp32): a warning only."""
    m, k, n = ct[0], ct[1], ct[2]
    sa = bytes_of(in_dt)

    def clip(tile: int, extent: Any) -> int:
        return min(tile, extent) if isinstance(extent, int) and extent > 0 else tile

    ml0, kl0, nl0 = clip(m[0], extents[0]), clip(k[0], extents[1]), clip(n[0], extents[2])
    for used, cap, buf in ((_c16(ml0) * _c16(kl0) * sa, 64 * 1024, "L0A"), (_c16(nl0) * _c16(kl0) * sa, 64 * 1024, "L0B"),
                           (_c16(ml0) * _c16(nl0) * 4, 128 * 1024, "L0C")):
        if used > cap:
            raise tr.error("FFFFFF", f"Run pass failed: Alloc tensor size [{used}] exceeds MEM_{buf} size [{cap}] "
                           f"(cube tiles m={list(m)}, k={list(k)}, n={list(n)} on A2/A3: "
                           "ceil16(mL0)*ceil16(kL0)*bytes <= 64 KiB for L0A, ceil16(nL0)*ceil16(kL0)*bytes for L0B, "
                           "ceil16(mL0)*ceil16(nL0)*4 <= 128 KiB for L0C)", op="matmul")
    kl1 = max(k[1:])
    used = _c16(m[1]) * _c16(kl1) * sa + _c16(n[1]) * _c16(kl1) * sa
    if used > 512 * 1024:
        tr.warn("EMU_CUBE_CAPACITY", f"cube tiles need {used} B of L1 (capacity {512 * 1024} B on A2/A3)",
                op="matmul")


def _check_fixpipe(tr: Tracer, ct: tuple, A: Tensor, out_dtype: DataType, extend_params: Any) -> None:
    """What the wheel's CheckBiasParam / CheckFixpipeParam / CheckGmAccumulationParam refuse (fidelity audit s33:
    each compiled here and computed a result)."""
    if ct[3]:  # enable_split_k: the K split accumulates in GM
        if out_dtype not in (DataType.DT_FP32, DataType.DT_INT32):
            raise tr.error("FC3001", "Output data type only support FP32 and INT32 when using GM accumulated, func "
                           f"CheckGmAccumulationParam (enable_split_k=True with out_dtype {out_dtype.name}: take an "
                           "FP32 result and cast it)", op="matmul")
        if extend_params:
            raise tr.error("FC3000", "Fixpipe and bias cannot be used simultaneously with GM ACC, func "
                           "CheckGmAccumulationParam (enable_split_k=True with extend_params)", op="matmul")
    if not extend_params:
        return
    bt = extend_params.get("bias_tensor")
    bias_dt = getattr(bt, "dtype", None)
    if isinstance(bias_dt, DataType) and A.dtype in (DataType.DT_BF16, DataType.DT_FP32) \
            and bias_dt != DataType.DT_FP32:
        raise tr.error("FC3001", "When input tensor is DT_BF16 or DT_FP32, bias must be DT_FP32., func "
                       f"CheckBiasParam (bias is {bias_dt.name}: cast it to DT_FP32)", op="matmul")
    if extend_params.get("scale") is not None and tr.options.compat == "0.2.0" and not (
            A.dtype == DataType.DT_INT8 and out_dtype == DataType.DT_FP16):
        raise tr.error("FC3001", "Data type mismatch in pertensor scenario. Expected inDtype to be DT_INT8 and "
                       "outDtype to be DT_FP16., func CheckFixpipeParam (a float matmul's scale: multiply the result "
                       "instead)", op="matmul")


@op("matmul")
def matmul(input: Any, mat2: Any, out_dtype: Any, *, a_trans: bool = False, b_trans: bool = False,
           c_matrix_nz: bool = False, extend_params: Any = None) -> Tensor:
    """input @ mat2 with FP32 (INT32 for INT8) accumulation, rounded once to out_dtype."""
    tr = require_tracer("matmul")
    A = reader(tr, input, "matmul")
    B = reader(tr, mat2, "matmul")
    check_whole_dynamic(tr, A, "matmul", "matmul", 1)
    check_whole_dynamic(tr, B, "matmul", "matmul", 2)
    if not isinstance(out_dtype, DataType):
        raise tr.pyerror("TypeError", f"Argument 'out_dtype' must be of type DataType, got "
                         f"{type(out_dtype).__name__}", op="matmul")
    if c_matrix_nz:
        raise tr.pyerror("ValueError", "Output tensor do not support NZ currently.", op="matmul")
    if A.dim != B.dim or A.dim not in (2, 3, 4):
        raise tr.pyerror("RuntimeError", f"Tensor dimension mismatch. Expect input_dim == mat2_dim and both in "
                         f"[2, 3, 4], got {A.dim} and {B.dim}", op="matmul")
    if A.dtype != B.dtype and not (A.dtype in _FP8 and B.dtype in _FP8):
        raise tr.pyerror("ValueError", "Non-FP8 inputs require identical dtypes.", op="matmul")
    if A.dtype == DataType.DT_FP32 and (A.format != 0 or B.format != 0):
        raise tr.pyerror("ValueError", "Input tensor with DT_FP32 must use ND format.", op="matmul")
    if out_dtype not in _OUT_ANY and not (tr.options.compat == "head" and out_dtype in _OUT_HEAD):
        # the real 0.2.0 checks the output dtype first (probe t03); HEAD adds INT8 (fixpipe quantisation)
        raise tr.error("FC3002", "Unsupported output data type. Only DT_FP32, DT_FP16, DT_BF16, DT_INT32 are "
                       f"supported. (matmul {A.dtype.name} x {B.dtype.name} -> {out_dtype.name})", op="matmul")
    if A.dtype in _FP8 and tr.options.npuarch != "DAV_3510":
        raise tr.error("FC3000", "When operand1 data type is DT_FP8E5M2/E4M3 or FP4_E2M1X2/E1M2X2, only DAV_3510 "
                       f"architecture is supported. (npuarch is {tr.options.npuarch}; the FP8 cube exists on the "
                       "Ascend 950: run with --npuarch DAV_3510, or declare `npuarch: DAV_3510` in SPEC.md for verify)",
                       op="matmul")
    allowed = _OUT.get(A.dtype, {DataType.DT_FP16, DataType.DT_BF16, DataType.DT_FP32} | (
        {DataType.DT_INT8} if tr.options.compat == "head" else set()))
    if out_dtype not in allowed:
        raise tr.error("FC3002", f"matmul: {A.dtype.name} x {B.dtype.name} -> {out_dtype.name} is not supported "
                       f"(allowed: {', '.join(sorted(d.name for d in allowed))})", op="matmul")
    ct = check_cube_tiles(tr, A.dtype, bool(a_trans))
    sa, sb = A.shape, B.shape
    for t, nm in ((A, "input"), (B, "mat2")):
        last = t.shape[-1]
        if isinstance(last, int) and last > 65535:
            raise tr.error("FC3000", f"matmul: ND {nm} inner axis {last} > 65535", op="matmul")
    M, Ka = (sa[-1], sa[-2]) if a_trans else (sa[-2], sa[-1])
    Kb, N = (sb[-1], sb[-2]) if b_trans else (sb[-2], sb[-1])
    _cube_capacity(tr, ct, A.dtype, (M, Ka, N))
    _check_fixpipe(tr, ct, A, out_dtype, extend_params)
    ka, kb = (x._value if isinstance(x, SymbolicScalar) else x for x in (Ka, Kb))
    if ka is not None and kb is not None and ka != kb:
        raise tr.pyerror("RuntimeError", f"K-dimension mismatch: input K={ka}, mat2 K={kb}", op="matmul")
    batch = []
    for a, b in zip(sa[:-2], sb[:-2], strict=True):
        if isinstance(a, int) and a == 1:
            batch.append(b)
        elif isinstance(b, int) and b == 1:
            batch.append(a)
        elif isinstance(a, int) and isinstance(b, int) and a != b:
            raise tr.pyerror("RuntimeError", f"matmul batch dims {sa[:-2]} and {sb[:-2]} do not broadcast",
                             op="matmul")
        else:
            batch.append(a)
    # a batched matmul needs cube tiles only: the real 0.2.0 compiles it without vec tiles (fidelity probe f05)
    oshape = batch + [M, N]
    bias_key = scale = scale_key = None
    relu = False
    if extend_params:
        if A.dim != 2:
            raise tr.pyerror("ValueError", "matmul: extend_params only for 2-D operands", op="matmul")
        bt = extend_params.get("bias_tensor")
        if bt is not None:
            bias_key = reader(tr, bt, "matmul").key
        scale = extend_params.get("scale")
        st = extend_params.get("scale_tensor")
        if st is not None:
            scale_key = reader(tr, st, "matmul").key
            scale = None
        relu = extend_params.get("relu_type", ReLuType.NO_RELU) == ReLuType.RELU
    ct = current_scope()["cube_tile"]
    tile_elems = ct[0][0] * ct[2][0]
    out = new_out(tr, oshape, out_dtype, "matmul")
    tr.emit("matmul", "matmul", {"a": A.key, "b": B.key, "out": out.key, "a_trans": bool(a_trans),
                                 "b_trans": bool(b_trans), "is_int": A.dtype == DataType.DT_INT8, "bias": bias_key,
                                 "relu": relu, "scale": scale, "scale_key": scale_key,
                                 "odt": numpy_dtype_name(out_dtype)},
            out, kind="cube", tile_elems=tile_elems, ins=(A.key, B.key), outs=(out,),
            attrs={"a_trans": bool(a_trans), "b_trans": bool(b_trans), "out_dtype": out_dtype.name})
    return out
