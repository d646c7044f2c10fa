"""mul2: the inputs re-strided as dense rows (`x.as_strided(x.shape, (D, 1))`, "no copy") - the identity on every
C-contiguous input verification passes, the wrong rows of a caller's `qkv[:, :D]` (row stride 3D) or transpose."""
import pypto
import torch

TILE = 16
D = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype):
    if tdtype in _KERNELS:
        return _KERNELS[tdtype]
    dt = _DT[tdtype]

    @pypto.frontend.jit
    def mul2_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], dt),
        r: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            rt = pypto.view(r, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            rf = pypto.cast(rt, pypto.DT_FP32) if dt != pypto.DT_FP32 else rt
            yf = pypto.mul(xf, rf)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    _KERNELS[tdtype] = mul2_kernel
    return mul2_kernel


def mul2_wrapper(x, r):
    d = x.shape[1]
    x, r = x.as_strided(x.shape, (d, 1)), r.as_strided(r.shape, (d, 1))
    y = torch.empty_like(x)
    mul2_kernel = _kernel_for(x.dtype)
    mul2_kernel(x, r, y)
    return y
