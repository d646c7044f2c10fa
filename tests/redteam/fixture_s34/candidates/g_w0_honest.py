"""IDEA (control, gelu_wide op: fp32 + fp16 + bf16, D = 8192): 16 x 1024 tiles, the last row tile with a valid
shape; one jit kernel per dtype, fp32 inside."""
import pypto
import torch

ROW_TILE = 16
COL_TILE = 1024
COLS = 8192
_DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype):
    if tdtype in _KERNELS:
        return _KERNELS[tdtype]
    dt = _DTYPES[tdtype]

    @pypto.frontend.jit
    def gelu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
        y: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
    ):
        rows = x.shape[0]
        pypto.set_vec_tile_shapes(ROW_TILE, COL_TILE)
        for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i"):
            valid = (rows - i * ROW_TILE).min(ROW_TILE)
            for j in pypto.loop(COLS // COL_TILE, name="col_loop", idx_name="j"):
                xt = pypto.view(x, [ROW_TILE, COL_TILE], [i * ROW_TILE, j * COL_TILE], valid_shape=[valid, COL_TILE])
                xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
                yt = xf * pypto.sigmoid(xf * 1.702)
                pypto.assemble(pypto.cast(yt, dt) if dt != pypto.DT_FP32 else yt, [i * ROW_TILE, j * COL_TILE], y)

    _KERNELS[tdtype] = gelu_kernel
    return gelu_kernel


def gelu_big_wrapper(x):
    xc = x.contiguous()
    y = torch.empty_like(xc)
    gelu_kernel = _kernel_for(xc.dtype)
    gelu_kernel(xc, y)
    return y
