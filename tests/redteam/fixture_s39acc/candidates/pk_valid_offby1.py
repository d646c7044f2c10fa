"""paged_kv: (wrong) the last block's valid rows n - j * BS - 1 (an inclusive bound)."""

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
    out: pypto.Tensor([pypto.DYNAMIC, MB * BS, D], pypto.DT_FP16),
):
    b_count = table.shape[0]
    pypto.set_vec_tile_shapes(1, BS, D)
    for b in pypto.loop(b_count, name="seq", idx_name="b"):
        n = lens[b]
        for j in pypto.loop(pypto.ceildiv(n, BS), name="blk", idx_name="j"):
            blk = table[b, j]
            valid = (n - j * BS - 1).min(BS).max(1)
            tile = pypto.view(cache, [1, BS, D], [blk, 0, 0], valid_shape=[1, valid, D])
            pypto.assemble(tile, [b, j * BS, 0], out)


def paged_kv_wrapper(cache, table, lens):
    out = np.zeros((table.shape[0], MB * BS, cache.shape[2]), dtype=cache.dtype)
    paged_kernel(cache, table, lens, out)
    return out
