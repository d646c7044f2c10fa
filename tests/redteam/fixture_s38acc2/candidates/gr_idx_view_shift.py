"""gather_rows (wrong): the index tile viewed one position late (off + 1) - each token takes its neighbour's slot."""

import numpy as np
import pypto

TILE = 16
N = 256
D = 64


@pypto.frontend.jit
def gather_kernel(
    cache: pypto.Tensor([N, D], pypto.DT_FP16),
    idx: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
    out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
):
    t = idx.shape[0]
    pypto.set_vec_tile_shapes(N, D)
    for i in pypto.loop((t + TILE - 1) // TILE, name="tok", idx_name="i"):
        off = i * TILE
        valid = (t - off).min(TILE)
        it = pypto.view(idx, [TILE], [off + 1], valid_shape=[(t - off - 1).min(TILE)])
        rows = pypto.index_select(cache, 0, it)
        pypto.assemble(rows, [off, 0], out)


def gather_rows_wrapper(cache, idx):
    out = np.zeros((idx.shape[0], cache.shape[1]), dtype=cache.dtype)
    gather_kernel(cache, idx, out)
    return out
