"""paged_kv: (honest) the wrapper passes the output as a [B * S, D] numpy view and the kernel writes 2-D."""

import numpy as np
import pypto

NB = 16
BS = 8
D = 32
MB = 4


@pypto.frontend.jit
def paged_kernel(
    cache: pypto.Tensor([NB, BS, D], pypto.DT_FP16),
    table: pypto.Tensor([pypto.DYNAMIC, MB], pypto.DT_INT32),
    lens: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
    out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
):
    b_count = table.shape[0]
    cache2d = pypto.reshape(cache, [NB * BS, D], inplace=True)
    pypto.set_vec_tile_shapes(BS, D)
    for b in pypto.loop(b_count, name="seq", idx_name="b"):
        n = lens[b]
        for j in pypto.loop(pypto.ceildiv(n, BS), name="blk", idx_name="j"):
            blk = table[b, j]
            valid = (n - j * BS).min(BS)
            tile = pypto.view(cache2d, [BS, D], [blk * BS, 0], valid_shape=[valid, D])
            pypto.assemble(tile, [b * (MB * BS) + j * BS, 0], out)


def paged_kv_wrapper(cache, table, lens):
    out = np.zeros((table.shape[0], MB * BS, cache.shape[2]), dtype=cache.dtype)
    paged_kernel(cache, table, lens, out.reshape(-1, out.shape[2]))
    return out
