"""IDEA (control, bce op): torch's binary cross entropy, both logs clamped at -100."""
import pypto
import torch

ROW_TILE = 16
D = 64


@pypto.frontend.jit
def bce_kernel(
    p: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    t: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    loss: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    rows = p.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, D)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        pt = pypto.view(p, [ROW_TILE, D], [i * ROW_TILE, 0], valid_shape=[valid, D])  # [ROW_TILE, D]
        tt = pypto.view(t, [ROW_TILE, D], [i * ROW_TILE, 0], valid_shape=[valid, D])  # [ROW_TILE, D]
        lp = pypto.maximum(pypto.log(pt), -100.0)  # [ROW_TILE, D]
        l1p = pypto.maximum(pypto.log(pt * -1.0 + 1.0), -100.0)  # [ROW_TILE, D]
        out = (tt * lp + (tt * -1.0 + 1.0) * l1p) * -1.0  # [ROW_TILE, D]
        pypto.assemble(out, [i * ROW_TILE, 0], loss)


def bce_wrapper(p, t):
    pc = p.contiguous()
    tc = t.contiguous()
    loss = torch.empty_like(pc)
    bce_kernel(pc, tc, loss)
    return loss
