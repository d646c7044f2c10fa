"""IDEA (control, row_argmax op): the same topk(k=1) kernel, the int32 ids cast to INT64 inside the kernel."""
import pypto
import torch

ROW_TILE = 16
D = 64


@pypto.frontend.jit
def argmax_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    ids: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_INT64),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, D)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, D], [i * ROW_TILE, 0], valid_shape=[valid, D])  # [ROW_TILE, D]
        _, idx = pypto.topk(xt, 1, -1, True)  # [ROW_TILE, 1] int32
        pypto.assemble(pypto.cast(idx, pypto.DT_INT64), [i * ROW_TILE, 0], ids)


def row_argmax_wrapper(x):
    xc = x.contiguous()
    ids = torch.empty(xc.shape[0], 1, dtype=torch.int64)
    argmax_kernel(xc, ids)
    return ids.reshape(-1)
