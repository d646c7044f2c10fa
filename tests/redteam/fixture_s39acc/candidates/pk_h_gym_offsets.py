"""paged_kv: (honest) the gym's own form: the cache reshaped in place to token rows, the physical row offset in a local (cache_offset = physical_block * BS), the output written as token rows."""

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
    cache_rows = pypto.reshape(cache, [NB * BS, D], inplace=True)
    pypto.set_vec_tile_shapes(BS, D)
    for b in pypto.loop(b_count, name="seq", idx_name="b"):
        n = lens[b]
        for j in pypto.loop(pypto.ceildiv(n, BS), name="blk", idx_name="j"):
            physical_block = table[b, j]
            token_offset = j * BS
            valid_tokens = (n - token_offset).min(BS)
            out_offset = b * (MB * BS) + token_offset
            cache_offset = physical_block * BS
            tile = pypto.view(cache_rows, [BS, D], [cache_offset, 0], valid_shape=[valid_tokens, D])
            pypto.assemble(tile, [out_offset, 0], out)


def paged_kv_wrapper(cache, table, lens):
    out = np.zeros((table.shape[0], MB * BS, cache.shape[2]), dtype=cache.dtype)
    paged_kernel(cache, table, lens, out.reshape(-1, out.shape[2]))
    return out
