"""Normalisation kernels: LayerNorm and RMSNorm of the §9.3 example (``pypto.Tensor()`` annotations and a
config argument), the §9.8 phi-3 RMSNorm (dynamic rows, unroll_list, tail valid_shape, fp16), the §9.9
InplaceAddRmsNorm (loop_unroll, bf16, three outputs) and the builtin ``pypto.rms_norm`` (spec §5.7)."""

from dataclasses import dataclass

import numpy as np
import pypto
from _emucorpus import (
    BF16,
    F16,
    F32,
    FP16,
    FP32_LOOSE,
    Call,
    KernelCase,
    Tol,
    f32,
    rnd,
    rng,
    sentinel,
    single,
    uniform,
)


@dataclass(frozen=True)
class NormConfig:
    eps: float
    tile_rows: int


@pypto.frontend.jit
def layer_norm(
    x: pypto.Tensor(),
    gamma: pypto.Tensor(),
    beta: pypto.Tensor(),
    output: pypto.Tensor(),
    cfg,
):
    rows, hidden = x.shape
    pypto.set_vec_tile_shapes(cfg.tile_rows, hidden)
    mean = pypto.div(pypto.sum(x, -1, keepdim=True), float(hidden))
    xc = pypto.sub(x, mean)
    var = pypto.div(pypto.sum(pypto.mul(xc, xc), -1, keepdim=True), float(hidden))
    out = pypto.add(pypto.mul(pypto.div(xc, pypto.sqrt(pypto.add(var, cfg.eps))), gamma), beta)
    pypto.assemble(out, [0, 0], output)


def case_layer_norm_reference_9_3() -> KernelCase:
    r = rng(30)
    x = uniform(r, (32, 128), -3, 3)
    gamma, beta = uniform(r, (1, 128), 0.5, 1.5), uniform(r, (1, 128), -0.5, 0.5)
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(-1, keepdims=True)
    ref = ((x64 - mean) / np.sqrt(var + 1e-5) * gamma + beta).astype(F32)
    return single(layer_norm, (x, gamma, beta, sentinel(x.shape)), {3: ref}, FP32_LOOSE,
                  kwargs={"cfg": NormConfig(eps=1e-5, tile_rows=8)}, spec="§9.3 layer_norm example")


@pypto.frontend.jit
def rms_norm_example(
    x: pypto.Tensor(),
    gamma: pypto.Tensor(),
    output: pypto.Tensor(),
    cfg,
):
    rows, hidden = x.shape
    pypto.set_vec_tile_shapes(cfg.tile_rows, hidden)
    ms = pypto.div(pypto.sum(pypto.mul(x, x), -1, keepdim=True), float(hidden))
    out = pypto.mul(pypto.div(x, pypto.sqrt(pypto.add(ms, cfg.eps))), gamma)
    pypto.assemble(out, [0, 0], output)


def _rms_ref(x: np.ndarray, gamma: np.ndarray, eps: float) -> np.ndarray:
    x64 = f32(x).astype(np.float64)
    return x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + eps) * f32(gamma)


def case_rms_norm_reference_9_3() -> KernelCase:
    r = rng(31)
    x, gamma = uniform(r, (24, 256), -2, 2), uniform(r, (1, 256), 0.5, 1.5)
    return single(rms_norm_example, (x, gamma, sentinel(x.shape)), {2: _rms_ref(x, gamma, 1e-6).astype(F32)},
                  FP32_LOOSE, kwargs={"cfg": NormConfig(eps=1e-6, tile_rows=8)}, spec="§9.3 rms_norm example")


PHI_D = 256


@pypto.frontend.jit
def phi3_rms_norm(
    x: pypto.Tensor([pypto.DYNAMIC, PHI_D], pypto.DT_FP16),
    gamma: pypto.Tensor([1, PHI_D], pypto.DT_FP16),
    y: pypto.Tensor([pypto.DYNAMIC, PHI_D], pypto.DT_FP16),
):
    m = x.shape[0]
    for i in pypto.loop((m + 3) // 4, unroll_list=[4, 2, 1]):
        valid = (m - i * 4).min(4)
        pypto.set_pass_options(sg_set_scope=1)
        pypto.set_vec_tile_shapes(4, PHI_D)
        xt = pypto.view(x, [4, PHI_D], [i * 4, 0], valid_shape=[valid, PHI_D])
        xf = pypto.cast(xt, pypto.DT_FP32)
        gf = pypto.cast(gamma, pypto.DT_FP32)
        ms = pypto.div(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), float(PHI_D))
        rms = pypto.sqrt(pypto.add(ms, 1e-5))
        yf = pypto.mul(pypto.div(xf, rms), gf)
        pypto.assemble(pypto.cast(yf, pypto.DT_FP16), [i * 4, 0], y)
        pypto.set_pass_options(sg_set_scope=-1)


def _phi_call(seed: int, m: int) -> tuple:
    r = rng(seed)
    x, gamma = uniform(r, (m, PHI_D), -2, 2, F16), uniform(r, (1, PHI_D), 0.5, 1.5, F16)
    ref = _rms_ref(x, gamma, 1e-5).astype(np.float32).astype(F16)
    return (x, gamma, sentinel((m, PHI_D), F16)), {2: ref}


def case_phi3_rms_norm_reference_9_8() -> KernelCase:
    """M=6 and M=13 (tails of 2 and 1 rows), the oracle's two sizes."""
    calls = []
    for seed, m in ((32, 6), (33, 13)):
        args, expect = _phi_call(seed, m)
        calls.append(Call(phi3_rms_norm, args, expect, FP16))
    # unroll_list with several values on pypto.loop is legal; the emulator may warn about it (issue 3, item 4)
    return KernelCase(calls=calls, clean=False, spec="§9.8 phi-3 rms_norm")


HID = 128


@pypto.frontend.jit
def inplace_add_rms_norm(
    x1: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_BF16),
    x2: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_BF16),
    gamma: pypto.Tensor([HID], pypto.DT_BF16),
    y: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_BF16),
    x_add: pypto.Tensor([pypto.DYNAMIC, HID], pypto.DT_BF16),
    rstd: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    eps: float = 1e-6,
):
    bs = x1.shape[0]
    pypto.set_vec_tile_shapes(1, HID)
    g2 = pypto.reshape(gamma, [1, HID], inplace=True)
    for i, u in pypto.loop_unroll(0, bs, 1, unroll_list=[8, 4, 2, 1]):
        pypto.set_vec_tile_shapes(8, HID)
        s = x1[i:i + u, :] + x2[i:i + u, :]
        sf = pypto.cast(s, pypto.DT_FP32)
        x_add[i:i + u, :] = s
        ms = pypto.mul(pypto.sum(pypto.mul(sf, sf), -1, keepdim=True), 1.0 / HID)
        rs = pypto.rsqrt(pypto.add(ms, eps))
        gf = pypto.cast(g2, pypto.DT_FP32)
        y[i:i + u, :] = pypto.cast(pypto.mul(pypto.mul(sf, rs), gf), pypto.DT_BF16)
        rstd[i:i + u, :] = rs


def case_inplace_add_rms_norm_reference_9_9() -> KernelCase:
    r = rng(34)
    bs = 13
    x1, x2 = uniform(r, (bs, HID), -2, 2, BF16), uniform(r, (bs, HID), -2, 2, BF16)
    gamma = uniform(r, (HID,), 0.5, 1.5, BF16)
    s = rnd(f32(x1) + f32(x2), BF16)
    s64 = s.astype(np.float64)
    rs = 1.0 / np.sqrt((s64 * s64).mean(-1, keepdims=True) + 1e-6)
    y_ref = (s64 * rs * f32(gamma)).astype(np.float32).astype(BF16)
    args = (x1, x2, gamma, sentinel((bs, HID), BF16), sentinel((bs, HID), BF16), sentinel((bs, 1)))
    expect = {3: y_ref, 4: s.astype(BF16), 5: rs.astype(F32)}
    tol = {3: Tol(1.6e-2, 1.6e-2), 4: Tol(0.0, 0.0), 5: FP32_LOOSE}
    return single(inplace_add_rms_norm, args, expect, tol, clean=False, spec="§9.9 InplaceAddRmsNorm")


@pypto.frontend.jit
def rms_norm_builtin(
    x: pypto.Tensor([16, 128], pypto.DT_FP32),
    out: pypto.Tensor([16, 128], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = pypto.rms_norm(x, epsilon=1e-6)


def case_rms_norm_builtin() -> KernelCase:
    x = uniform(rng(35), (16, 128), -3, 3)
    ref = _rms_ref(x, np.ones((1, 128), np.float32), 1e-6).astype(F32)
    return single(rms_norm_builtin, (x, sentinel(x.shape)), {1: ref}, FP32_LOOSE, spec="§5.7 rms_norm")
