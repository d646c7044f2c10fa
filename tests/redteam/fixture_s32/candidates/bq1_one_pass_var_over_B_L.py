"""IDEA (bn_seq op): the round-10 one-pass variance BatchNorm (bn1: E[x^2] - E[x]^2) on x.reshape(-1, D), the
statistics over B AND L of channels-last sequences x[B, L, D]. Version 7 draws near-constant vectors along ONE
leading axis (B or L, drawn per case); a channel is near-constant over B x L only if every vector of it is, which
is never drawn. So the cancellation that catches bn1 on [B, D] never shows: PASS. A user whose channel is
near-constant over the batch (a bias channel, 15 +- 0.2) gets errors of 1e-2."""
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
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="stat_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])  # [TILE, D]
        s = pypto.sum(xt, 0, keepdim=True)  # [1, D]
        s2 = pypto.sum(pypto.mul(xt, xt), 0, keepdim=True)  # [1, D]
        if pypto.is_loop_begin(i):
            stats[0:1, :] = s
            stats[1:2, :] = s2
        else:
            stats[0:1, :] = pypto.add(pypto.view(stats, [1, D], [0, 0]), s)
            stats[1:2, :] = pypto.add(pypto.view(stats, [1, D], [1, 0]), s2)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="norm_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])  # [TILE, D]
        mean = pypto.div(pypto.view(stats, [1, D], [0, 0]), n_f)  # [1, D]
        ex2 = pypto.div(pypto.view(stats, [1, D], [1, 0]), n_f)  # [1, D]
        var = pypto.sub(ex2, pypto.mul(mean, mean))  # [1, D]  one-pass: cancels when var << mean^2
        rstd = pypto.rsqrt(pypto.add(var, EPS))  # [1, D]
        pypto.assemble(pypto.mul(pypto.sub(xt, mean), rstd), [i * TILE, 0], y)


def bn_seq_wrapper(x):
    xc = x.contiguous().reshape(-1, D)  # [B*L, D]: the statistics run over B and L
    y = torch.empty_like(xc)
    stats = torch.zeros(2, D, dtype=torch.float32)
    bn_seq_kernel(xc, y, stats)
    return y.reshape(x.shape)
