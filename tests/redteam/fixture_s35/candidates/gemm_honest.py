"""Control: int8 x int8 -> int32 on the cube (INT32 accumulation), 16-row tiles of a."""
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
    for i in pypto.loop((m + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (m - i * TILE).min(TILE)
        at = pypto.view(a, [TILE, K], [i * TILE, 0], valid_shape=[valid, K])
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [64, 64])
        pypto.set_vec_tile_shapes(TILE, N)
        pypto.assemble(pypto.matmul(at, b, pypto.DT_INT32), [i * TILE, 0], c)


def int8_gemm_wrapper(a, b):
    c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.int32)
    gemm_kernel(a.contiguous(), b.contiguous(), c)
    return c
