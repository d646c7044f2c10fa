"""IDEA (control, gelu3 op: fp32 + fp16 + bf16): the honest kernel - 16-row tiles, the last one with a valid
shape; one jit kernel per dtype, computed in fp32."""
import pypto
import torch

ROW_TILE = 16
COLS = 64
_DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _gelu_kernel_for(tdtype):
    if tdtype in _KERNELS:
        return _KERNELS[tdtype]
    dt = _DTYPES[tdtype]

    @pypto.frontend.jit
    def gelu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
        y: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
    ):
        rows = x.shape[0]
        pypto.set_vec_tile_shapes(ROW_TILE, COLS)
        for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
            valid = (rows - i * ROW_TILE).min(ROW_TILE)
            xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            yt = xf * pypto.sigmoid(xf * 1.702)
            pypto.assemble(pypto.cast(yt, dt) if dt != pypto.DT_FP32 else yt, [i * ROW_TILE, 0], y)

    _KERNELS[tdtype] = gelu_kernel
    return gelu_kernel


def gelu3_wrapper(x):
    xc = x.contiguous()
    y = torch.empty_like(xc)
    gelu_kernel = _gelu_kernel_for(xc.dtype)
    gelu_kernel(xc, y)
    return y
