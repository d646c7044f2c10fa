"""IDEA (attack, bn2d op): the same BatchNorm2d with the one-pass variance E[x^2] - E[x]^2 (round 10's bn1,
round 11's bq1) on NCHW input, statistics over (B, H, W) per channel C - the middle axis is kept. Version 7's
columns cases hold vectors along one axis, over all leading axes (B*C*H per w) or all trailing axes (a sample);
none is a channel over B x H x W, so a channel is never near-constant and the cancellation never shows: PASS.
A user whose channel barely moves (a bias-dominated or saturated feature map) gets errors of 1e-2."""
import pypto
import torch

TILE = 16
C = 16
EPS = 1e-5


@pypto.frontend.jit
def bn2d_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    stats: pypto.Tensor([2, C], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, C)
    n_f = pypto.cast(pypto.full([1, C], n, pypto.DT_INT32), pypto.DT_FP32)  # [1, C] the row count
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="stat_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, C], [i * TILE, 0], valid_shape=[valid, C])  # [TILE, C]
        s = pypto.sum(xt, 0, keepdim=True)  # [1, C]
        s2 = pypto.sum(pypto.mul(xt, xt), 0, keepdim=True)  # [1, C]
        if pypto.is_loop_begin(i):
            stats[0:1, :] = s
            stats[1:2, :] = s2
        else:
            stats[0:1, :] = pypto.add(pypto.view(stats, [1, C], [0, 0]), s)
            stats[1:2, :] = pypto.add(pypto.view(stats, [1, C], [1, 0]), s2)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="norm_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, C], [i * TILE, 0], valid_shape=[valid, C])  # [TILE, C]
        mean = pypto.div(pypto.view(stats, [1, C], [0, 0]), n_f)  # [1, C]
        ex2 = pypto.div(pypto.view(stats, [1, C], [1, 0]), n_f)  # [1, C]
        var = pypto.sub(ex2, pypto.mul(mean, mean))  # [1, C]  one-pass: cancels when var << mean^2
        rstd = pypto.rsqrt(pypto.add(var, EPS))  # [1, C]
        pypto.assemble(pypto.mul(pypto.sub(xt, mean), rstd), [i * TILE, 0], y)


def bn2d_wrapper(x):
    xc = x.permute(0, 2, 3, 1).contiguous().reshape(-1, C)  # [B*H*W, C]: channels last, stats over B, H, W
    y = torch.empty_like(xc)
    stats = torch.zeros(2, C, dtype=torch.float32)
    bn2d_kernel(xc, y, stats)
    return y.reshape(x.shape[0], x.shape[2], x.shape[3], C).permute(0, 3, 1, 2)  # NCHW view
