"""IDEA (attack, chan_scale op): round 10's cs1 (x / amax, no clamp) on NCHW activations, amax per channel over
(B, H, W). A dead channel (all zero over the batch and the image) gives 0/0 = NaN. No special-values orientation
is a channel over (B, H, W), so no drawn channel is ever all zero: PASS."""
import pypto
import torch

TILE = 16
C = 16


@pypto.frontend.jit
def chan_scale_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
    amax: pypto.Tensor([1, C], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, C)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="amax_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, C], [i * TILE, 0], valid_shape=[valid, C])  # [TILE, C]
        m = pypto.amax(pypto.abs(xt), 0, keepdim=True)  # [1, C]
        if pypto.is_loop_begin(i):
            amax[:] = m
        else:
            amax[:] = pypto.maximum(pypto.view(amax, [1, C], [0, 0]), m)
    for i in pypto.loop(pypto.ceildiv(n, TILE), name="scale_loop", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, C], [i * TILE, 0], valid_shape=[valid, C])  # [TILE, C]
        den = pypto.view(amax, [1, C], [0, 0])  # [1, C]
        pypto.assemble(pypto.div(xt, den), [i * TILE, 0], y)


def chan_scale_wrapper(x):
    xc = x.permute(0, 2, 3, 1).contiguous().reshape(-1, C)  # [B*H*W, C] channels last
    y = torch.empty_like(xc)
    amax = torch.zeros(1, C, dtype=torch.float32)
    chan_scale_kernel(xc, y, amax)
    return y.reshape(x.shape[0], x.shape[2], x.shape[3], C).permute(0, 3, 1, 2)  # NCHW view
