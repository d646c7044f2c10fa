"""vnorm: the one-pass variance var = E[x^2] - E[x]^2 over the whole vector ("one pass over HBM for the
statistics") - catastrophic cancellation when the vector is near-constant (advantages of an episode whose rewards
barely move: 18 +- 0.04), exact enough on every i.i.d. draw."""
import pypto
import torch

T = 256
EPS = 1e-5


@pypto.frontend.jit
def vnorm_kernel(
    x: pypto.Tensor([1, pypto.DYNAMIC], pypto.DT_FP32),
    y: pypto.Tensor([1, pypto.DYNAMIC], pypto.DT_FP32),
    stats: pypto.Tensor([2, 1], pypto.DT_FP32),
):
    n = x.shape[1]
    pypto.set_vec_tile_shapes(1, T)
    n_f = pypto.cast(pypto.full([1, 1], n, pypto.DT_INT32), pypto.DT_FP32)
    for j in pypto.loop(pypto.ceildiv(n, T), name="stat_loop", idx_name="j"):
        valid = (n - j * T).min(T)
        xt = pypto.view(x, [1, T], [0, j * T], valid_shape=[1, valid])
        s = pypto.sum(xt, 1, keepdim=True)
        s2 = pypto.sum(pypto.mul(xt, xt), 1, keepdim=True)
        if pypto.is_loop_begin(j):
            stats[0:1, :] = s
            stats[1:2, :] = s2
        else:
            stats[0:1, :] = pypto.add(pypto.view(stats, [1, 1], [0, 0]), s)
            stats[1:2, :] = pypto.add(pypto.view(stats, [1, 1], [1, 0]), s2)
    for j in pypto.loop(pypto.ceildiv(n, T), name="norm_loop", idx_name="j"):
        valid = (n - j * T).min(T)
        xt = pypto.view(x, [1, T], [0, j * T], valid_shape=[1, valid])
        mean = pypto.div(pypto.view(stats, [1, 1], [0, 0]), n_f)
        ex2 = pypto.div(pypto.view(stats, [1, 1], [1, 0]), n_f)
        var = pypto.sub(ex2, pypto.mul(mean, mean))  # one-pass: cancels when var << mean^2
        rstd = pypto.rsqrt(pypto.add(var, EPS))
        pypto.assemble(pypto.mul(pypto.sub(xt, mean), rstd), [0, j * T], y)


def vnorm_wrapper(x):
    xc = x.contiguous().view(1, -1)
    y = torch.empty_like(xc)
    stats = torch.zeros(2, 1, dtype=torch.float32)
    vnorm_kernel(xc, y, stats)
    return y.view(-1)
