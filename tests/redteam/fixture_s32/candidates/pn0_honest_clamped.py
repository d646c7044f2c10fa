"""IDEA (control, peak_norm op): per-clip peak normalisation with the clamp max(amax, 1e-6)."""
import pypto
import torch

T = 16
D = 64


@pypto.frontend.jit
def peak_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0] // T
    pypto.set_vec_tile_shapes(T, D)
    for b in pypto.loop(n, name="clip_loop", idx_name="b"):
        xt = pypto.view(x, [T, D], [b * T, 0])  # [T, D] one clip
        m = pypto.amax(pypto.amax(pypto.abs(xt), 1, keepdim=True), 0, keepdim=True)  # [1, 1]
        m = pypto.maximum(m, pypto.full([1, 1], 1e-6, pypto.DT_FP32))  # [1, 1]
        m = pypto.expand_clone(m, [T, 1])  # [T, 1] (one broadcast axis per op)
        pypto.assemble(pypto.div(xt, m), [b * T, 0], y)


def peak_norm_wrapper(x):
    xc = x.contiguous().reshape(-1, D)
    y = torch.empty_like(xc)
    peak_norm_kernel(xc, y)
    return y.reshape(x.shape)
