"""Hostile (accidental): the kernel factory takes the group width where the wrapper passes the group count - the
same number only when num_groups * num_groups == D (16 groups of 16 channels at D = 256, the SPEC's); 8 or 32
groups get statistics over the wrong channels."""
import pypto
import torch

TILE = 16
D = 256
EPS = 1.0e-5


def _kernel(width):
    groups = D // width

    @pypto.frontend.jit
    def group_norm16_kernel(
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

    return group_norm16_kernel


def group_norm16_wrapper(x, num_groups):
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(int(num_groups))(x, y)
    return y
