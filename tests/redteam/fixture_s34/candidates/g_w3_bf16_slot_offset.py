"""IDEA (gelu_big op: fp32 + fp16 + bf16, D = 8192, SPEC B 256 and 269): a bf16 fast path for token counts that are
multiples of 256 (256-row blocks, no tail handling), double-buffered: block b uses UB slot b % 2, and the slip is
that the slot, not the block, gives the GM row offset ((b % 2) * 256 + t * 16) - right for up to two blocks (512
rows: the SPEC's 256 and every bf16 multiple of 256 the drawing makes), wrong from 768 rows on (block 2 rewrites
rows 0..255, rows 512.. are never written). Every other call runs the honest 16-row loop."""
import pypto
import torch

ROW_TILE = 16
COL_TILE = 1024
COLS = 8192
BLOCK_ROWS = 256
TILES_PER_BLOCK = BLOCK_ROWS // ROW_TILE
_DTYPES = {torch.float32: pypto.DT_FP32, torch.float16: pypto.DT_FP16, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype, blocks=False):
    if (tdtype, blocks) in _KERNELS:
        return _KERNELS[(tdtype, blocks)]
    dt = _DTYPES[tdtype]

    @pypto.frontend.jit
    def gelu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
        y: pypto.Tensor([pypto.DYNAMIC, COLS], dt),
    ):
        rows = x.shape[0]
        pypto.set_vec_tile_shapes(ROW_TILE, COL_TILE)
        if blocks:  # rows is a multiple of 256: whole 128-row blocks, no valid shapes
            for b in pypto.loop(rows // BLOCK_ROWS, name="block_loop", idx_name="b"):
                for t in pypto.loop(TILES_PER_BLOCK, name="tile_loop", idx_name="t"):
                    row0 = ((b % 2) * TILES_PER_BLOCK + t) * ROW_TILE  # UB slot b % 2
                    for j in pypto.loop(COLS // COL_TILE, name="col_loop", idx_name="j"):
                        xt = pypto.view(x, [ROW_TILE, COL_TILE], [row0, j * COL_TILE])
                        xf = pypto.cast(xt, pypto.DT_FP32)
                        yt = xf * pypto.sigmoid(xf * 1.702)
                        pypto.assemble(pypto.cast(yt, dt), [row0, j * COL_TILE], y)
        else:
            for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i"):
                valid = (rows - i * ROW_TILE).min(ROW_TILE)
                for j in pypto.loop(COLS // COL_TILE, name="col_loop", idx_name="j"):
                    xt = pypto.view(x, [ROW_TILE, COL_TILE], [i * ROW_TILE, j * COL_TILE],
                                    valid_shape=[valid, COL_TILE])
                    xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
                    yt = xf * pypto.sigmoid(xf * 1.702)
                    pypto.assemble(pypto.cast(yt, dt) if dt != pypto.DT_FP32 else yt, [i * ROW_TILE, j * COL_TILE],
                                   y)

    _KERNELS[(tdtype, blocks)] = gelu_kernel
    return gelu_kernel


def gelu_big_wrapper(x):
    xc = x.contiguous()
    y = torch.empty_like(xc)
    gelu_kernel = _kernel_for(xc.dtype, blocks=xc.dtype == torch.bfloat16 and xc.shape[0] % BLOCK_ROWS == 0)
    gelu_kernel(xc, y)
    return y
