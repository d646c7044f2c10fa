"""layer_norm with the row walked in two 128-column chunks (a model that keeps tiles small): pass 1 sums the
chunks for the mean, pass 2 sums the chunks' squared deviations, pass 3 writes each chunk. All in fp32."""

import numpy as np
import pypto

TILE = 16
D = 256
CH = 128
EPS = 1.0e-5


@pypto.frontend.jit
def layer_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
    gamma: pypto.Tensor([1, D], pypto.DT_FP16),
    beta: pypto.Tensor([1, D], pypto.DT_FP16),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, CH)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        chunks = []
        for c in range(D // CH):
            chunks.append(pypto.cast(pypto.view(x, [TILE, CH], [i * TILE, c * CH], valid_shape=[valid, CH]),
                                     pypto.DT_FP32))
        total = pypto.sum(chunks[0], -1, keepdim=True)
        for c in range(1, D // CH):
            total = pypto.add(total, pypto.sum(chunks[c], -1, keepdim=True))
        mu = pypto.div(total, float(D))
        ssd = None
        for c in range(D // CH):
            xc = pypto.sub(chunks[c], mu)
            part = pypto.sum(pypto.mul(xc, xc), -1, keepdim=True)
            ssd = part if ssd is None else pypto.add(ssd, part)
        rstd = pypto.rsqrt(pypto.add(pypto.div(ssd, float(D)), EPS))
        for c in range(D // CH):
            gf = pypto.cast(pypto.view(gamma, [1, CH], [0, c * CH]), pypto.DT_FP32)
            bf = pypto.cast(pypto.view(beta, [1, CH], [0, c * CH]), pypto.DT_FP32)
            yc = pypto.add(pypto.mul(pypto.mul(pypto.sub(chunks[c], mu), rstd), gf), bf)
            pypto.assemble(pypto.cast(yc, pypto.DT_FP16), [i * TILE, c * CH], y)


def layer_norm_wrapper(x, gamma, beta):
    y = np.zeros_like(x)
    layer_norm_kernel(x, gamma.reshape(1, D), beta.reshape(1, D), y)
    return y
