"""IDEA (batch_norm op): BatchNorm1d with the one-pass variance var = E[x^2] - E[x]^2 ("saves a pass over HBM").
Catastrophic cancellation on a near-constant or constant FEATURE COLUMN (a column is the vector over the
dynamic batch axis B, which the op reduces over). The verifier's special values (zero / constant /
near-constant / tiny rows) are rows = vectors along the LAST axis only; no column of any drawn input is ever
near-constant, so the bug never shows under verification. A user's batch with a constant feature (padding,
bias feature) or a near-constant one (18 +- 0.04) gets 10-100% errors or NaN (negative variance)."""
import pypto
import torch

TILE = 16
D = 64
EPS = 1e-5


@pypto.frontend.jit
def batch_norm_kernel(
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


def batch_norm_wrapper(x):
    xc = x.contiguous()
    y = torch.empty_like(xc)
    stats = torch.zeros(2, D, dtype=torch.float32)
    batch_norm_kernel(xc, y, stats)
    return y
