"""int8 GEMM through the FP16 cube: int8 -> fp16 is exact (|v| <= 127), the cube accumulates in FP32 and the
FP32 result is cast to int32. Exact while every partial sum stays below 2^24; above it FP32 accumulation
rounds (a row of a that resembles a column of b: a Gram matrix, x @ x.T of int8 embeddings)."""
import pypto
import torch

TILE = 16
K = 4096
N = 64


@pypto.frontend.jit
def gemm_kernel(
    a: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_INT8),
    b: pypto.Tensor([K, N], pypto.DT_INT8),
    c: pypto.Tensor([pypto.DYNAMIC, N], pypto.DT_INT32),
):
    m = a.shape[0]
    pypto.set_vec_tile_shapes(64, N)
    bh = pypto.cast(b, pypto.DT_FP16)
    for i in pypto.loop((m + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (m - i * TILE).min(TILE)
        pypto.set_vec_tile_shapes(TILE, 512)
        at = pypto.cast(pypto.view(a, [TILE, K], [i * TILE, 0], valid_shape=[valid, K]), pypto.DT_FP16)
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [64, 64])
        pypto.set_vec_tile_shapes(TILE, N)
        cf = pypto.matmul(at, bh, pypto.DT_FP32)
        pypto.assemble(pypto.cast(cf, pypto.DT_INT32, pypto.CastMode.CAST_RINT), [i * TILE, 0], c)


def int8_gemm_wrapper(a, b):
    c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.int32)
    gemm_kernel(a.contiguous(), b.contiguous(), c)
    return c
