"""Hostile (accidental): the kernel was tiled for the SPEC's 8 groups of 32 channels and the wrapper never passes the
caller's `num_groups` on - torch's usual 32 groups get statistics over 32 channels instead of 8."""
import pypto
import torch

TILE = 16
D = 256
EPS = 1.0e-5


def _kernel(groups):
    width = D // groups

    @pypto.frontend.jit
    def group_norm_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
        y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            for g in range(groups):
                xt = pypto.view(x, [TILE, width], [i * TILE, g * width], valid_shape=[valid, width])
                mu = pypto.div(pypto.sum(xt, -1, keepdim=True), float(width))
                xc = pypto.sub(xt, mu)
                var = pypto.div(pypto.sum(pypto.mul(xc, xc), -1, keepdim=True), float(width))
                yt = pypto.div(xc, pypto.sqrt(pypto.add(var, EPS)))
                pypto.assemble(yt, [i * TILE, g * width], y)

    return group_norm_kernel


def group_norm_wrapper(x, num_groups):
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(8)(x, y)
    return y
