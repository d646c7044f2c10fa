"""IDEA (control, mask_pool op): masked mean pooling with the count clamped at 1."""
import pypto
import torch

T = 32
D = 64


@pypto.frontend.jit
def mask_pool_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    m: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = y.shape[0]
    pypto.set_vec_tile_shapes(T, D)
    for b in pypto.loop(n, name="row_loop", idx_name="b"):
        xt = pypto.view(x, [T, D], [b * T, 0])  # [T, D] one sequence
        mt = pypto.view(m, [T, 1], [b * T, 0])  # [T, 1] its mask as 0/1
        s = pypto.sum(pypto.mul(xt, mt), 0, keepdim=True)  # [1, D]
        c = pypto.sum(mt, 0, keepdim=True)  # [1, 1]
        c = pypto.maximum(c, pypto.full([1, 1], 1.0, pypto.DT_FP32))  # [1, 1]
        pypto.assemble(pypto.div(s, c), [b, 0], y)


def mask_pool_wrapper(x, mask):
    xc = x.contiguous().reshape(-1, D)
    mf = mask.contiguous().reshape(-1, 1).to(torch.float32)
    y = torch.empty(x.shape[0], D, dtype=torch.float32)
    mask_pool_kernel(xc, mf, y)
    return y
