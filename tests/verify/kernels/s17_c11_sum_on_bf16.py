# attack (red team s17 c11, reduced): a pypto.sum on a BF16 tile. The emulator warns EMU_SUM_FP32 (the device sums in
#   FP32 only) and sums anyway: the numbers compared are not the device's (here the sum only feeds a 0 * s term)
"""silu (bf16): y = x * sigmoid(x) in fp32, rounded once to bf16; plus a row sum on the bf16 tile."""
import numpy as np
import pypto

TILE = 16
D = 64
DT = pypto.DT_BF16


@pypto.frontend.jit
def silu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], DT),
    y: pypto.Tensor([pypto.DYNAMIC, D], DT),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        s = pypto.cast(pypto.sum(xt, -1, keepdim=True), pypto.DT_FP32)
        xf = pypto.cast(xt, pypto.DT_FP32)
        yf = xf * pypto.reciprocal(pypto.add(pypto.exp(pypto.mul(xf, -1.0)), 1.0)) + s * 0.0
        pypto.assemble(pypto.cast(yf, DT), [i * TILE, 0], y)


def silu_wrapper(x):
    y = np.zeros_like(x)
    silu_kernel(x, y)
    return y
