"""IDEA (control, bce1d op): both logs clamped at -100, as torch does."""
import pypto
import torch

TILE = 256


@pypto.frontend.jit
def bce1d_kernel(
    p: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32),
    t: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32),
    loss: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32),
):
    n = p.shape[0]
    pypto.set_vec_tile_shapes(TILE)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="n_loop", idx_name="i", unroll_list=[1]):
        valid = (n - i * TILE).min(TILE)
        pt = pypto.view(p, [TILE], [i * TILE], valid_shape=[valid])  # [TILE]
        tt = pypto.view(t, [TILE], [i * TILE], valid_shape=[valid])  # [TILE]
        lp = pypto.maximum(pypto.log(pt), -100.0)  # [TILE]
        l1p = pypto.maximum(pypto.log(pt * -1.0 + 1.0), -100.0)  # [TILE]
        out = (tt * lp + (tt * -1.0 + 1.0) * l1p) * -1.0  # [TILE]
        pypto.assemble(out, [i * TILE], loss)


def bce1d_wrapper(p, t):
    pc = p.contiguous()
    tc = t.contiguous()
    loss = torch.empty_like(pc)
    bce1d_kernel(pc, tc, loss)
    return loss
