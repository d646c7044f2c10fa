"""silu2 stage M1+M2: boundary tensors `sig` and `prod`."""

import numpy as np
import pypto

TILE = 16
D = 64


@pypto.frontend.jit
def silu2_module12_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    sig_out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    prod_out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        # --- Module M1: sigmoid ---
        sig = pypto.sigmoid(xt * 1.0)
        pypto.assemble(sig, [i * TILE, 0], sig_out)
        # --- Module M2: product ---
        prod = xt * sig
        pypto.assemble(prod, [i * TILE, 0], prod_out)


def silu2_module12_wrapper(x):
    sig_out = np.zeros_like(x)
    prod_out = np.zeros_like(x)
    silu2_module12_kernel(x, sig_out, prod_out)
    return sig_out, prod_out
