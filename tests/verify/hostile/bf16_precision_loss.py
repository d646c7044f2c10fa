"""Hostile candidate: computes in the input dtype (exact in fp32, lossy in bf16).

Every intermediate is stored in a tensor of the input dtype (an ``assemble`` into a local), so on A2/A3, where the
compiler keeps a bf16 chain in fp32 and rounds only where data is written (runtime/emulator/device/_promote.py),
each step is still rounded to bf16: the loss the verifier must catch."""
# fixture: silu_bf16
# expect: FAIL_NUMERIC
# ruff: noqa
import numpy as np
import pypto

TILE = 16
D = 64
DT = pypto.DT_FP32


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
        e = pypto.tensor([TILE, D], DT)
        pypto.assemble(pypto.exp(xt * -1.0), [0, 0], e)
        sig = pypto.tensor([TILE, D], DT)
        pypto.assemble(1.0 / (e + 1.0), [0, 0], sig)
        pypto.assemble(xt * sig, [i * TILE, 0], y)


def silu_wrapper(x):
    y = np.zeros_like(x)
    silu_kernel(x, y)
    return y
