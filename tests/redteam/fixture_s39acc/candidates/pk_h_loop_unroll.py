"""paged_kv: (honest) the gym's loop_unroll over sequences (unroll_list=[2, 1]) with an inner range."""

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
    for b_base, b_unroll in pypto.loop_unroll(0, b_count, 1, name="seq", idx_name="b", unroll_list=[2, 1]):
        for b_inner in range(b_unroll):
            b = b_base + b_inner
            n = lens[b]
            n.as_variable()
            for j in pypto.loop(pypto.ceildiv(n, BS), name="blk", idx_name="j"):
                blk = table[b, j]
                valid = (n - j * BS).min(BS)
                tile = pypto.view(cache, [1, BS, D], [blk, 0, 0], valid_shape=[1, valid, D])
                pypto.assemble(tile, [b, j * BS, 0], out)


def paged_kv_wrapper(cache, table, lens):
    out = np.zeros((table.shape[0], MB * BS, cache.shape[2]), dtype=cache.dtype)
    paged_kernel(cache, table, lens, out)
    return out
