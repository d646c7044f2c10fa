"""IDEA (control, bn_seq op): the round-10 two-pass BatchNorm (bn0) on x.reshape(-1, D): statistics over B and L."""
import pypto
import torch

TILE = 16
D = 64
EPS = 1e-5


@pypto.frontend.jit
def bn_seq_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    stats: pypto.Tensor([2, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    n_f = pypto.cast(pypto.full([1, D], n, pypto.DT_INT32), pypto.DT_FP32)  # [1, D] the row count
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="sum_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])  # [TILE, D]
        s = pypto.sum(xt, 0, keepdim=True)  # [1, D]
        if pypto.is_loop_begin(i):
            stats[0:1, :] = s
        else:
            stats[0:1, :] = pypto.add(pypto.view(stats, [1, D], [0, 0]), s)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="var_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])  # [TILE, D]
        mean = pypto.div(pypto.view(stats, [1, D], [0, 0]), n_f)  # [1, D]
        dev = pypto.sub(xt, mean)  # [TILE, D]
        s2 = pypto.sum(pypto.mul(dev, dev), 0, keepdim=True)  # [1, D]
        if pypto.is_loop_begin(i):
            stats[1:2, :] = s2
        else:
            stats[1:2, :] = pypto.add(pypto.view(stats, [1, D], [1, 0]), s2)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="norm_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])  # [TILE, D]
        mean = pypto.div(pypto.view(stats, [1, D], [0, 0]), n_f)  # [1, D]
        var = pypto.div(pypto.view(stats, [1, D], [1, 0]), n_f)  # [1, D]
        rstd = pypto.rsqrt(pypto.add(var, EPS))  # [1, D]
        pypto.assemble(pypto.mul(pypto.sub(xt, mean), rstd), [i * TILE, 0], y)


def bn_seq_wrapper(x):
    xc = x.contiguous().reshape(-1, D)  # [B*L, D]: the statistics run over B and L
    y = torch.empty_like(xc)
    stats = torch.zeros(2, D, dtype=torch.float32)
    bn_seq_kernel(xc, y, stats)
    return y.reshape(x.shape)
