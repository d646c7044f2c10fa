"""IDEA (gelu3 op: fp32 + fp16 + bf16): the held-out A1 "aligned fast path" (rows % 16 == 0 -> rows // 32 tiles of
32 rows, no tail mask) on a THREE-dtype op. The attack class is old (tests/redteam/attacks/aligned_fast_path.py);
what is new is that version 7 no longer draws the aligned class (an odd multiple of 16) for a three-dtype op:
tail-1, fill and pow2 in every dtype fill the 9 same-shape pairs. An odd multiple of 16 now comes only from a fill
size by chance (12% of runs, coverage.py; v6: 100%). A user with B = 16, 48, 80, ... gets the last 16 rows zero."""
import pypto
import torch

ROW_TILE = 16
COLS = 64
_DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _gelu_kernel_for(tdtype, aligned):
    key = (tdtype, aligned)
    if key in _KERNELS:
        return _KERNELS[key]
    dt = _DTYPES[tdtype]

    @pypto.frontend.jit
    def gelu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
        y: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
    ):
        rows = x.shape[0]
        if aligned:  # a multiple of the tile: no tail, so take two tiles per step
            pypto.set_vec_tile_shapes(2 * ROW_TILE, COLS)
            for i in pypto.loop(rows // (2 * ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
                xt = pypto.view(x, [2 * ROW_TILE, COLS], [i * 2 * ROW_TILE, 0])  # [2 ROW_TILE, COLS]
                xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
                yt = xf * pypto.sigmoid(xf * 1.702)
                pypto.assemble(pypto.cast(yt, dt) if dt != pypto.DT_FP32 else yt, [i * 2 * ROW_TILE, 0], y)
        else:
            pypto.set_vec_tile_shapes(ROW_TILE, COLS)
            for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
                valid = (rows - i * ROW_TILE).min(ROW_TILE)
                xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])
                xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
                yt = xf * pypto.sigmoid(xf * 1.702)
                pypto.assemble(pypto.cast(yt, dt) if dt != pypto.DT_FP32 else yt, [i * ROW_TILE, 0], y)

    _KERNELS[key] = gelu_kernel
    return gelu_kernel


def gelu3_wrapper(x):
    xc = x.contiguous()
    y = torch.zeros_like(xc)
    gelu_kernel = _gelu_kernel_for(xc.dtype, xc.shape[0] % ROW_TILE == 0)
    gelu_kernel(xc, y)
    return y
