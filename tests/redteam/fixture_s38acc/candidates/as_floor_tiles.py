"""attn_softmax (accident: the key-tile count S // 64 - the tail keys never summed nor written): 16-row tiles over M, the row's key tiles walked in a Python range
(the tile count from the host, a function of the shape), the tail tile carried by valid_shape; the shift is a
running max over tiles, the sum a running fp32 sum, the third pass writes."""

import numpy as np
import pypto

S_TILE = 64
M = 16


@pypto.frontend.jit
def attn_softmax_kernel(
    scores: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_BF16),
    out: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_BF16),
    scale: float,
    n_tiles: int,
):
    s_len = scores.shape[1]
    pypto.set_vec_tile_shapes(M, S_TILE)
    tiles = []
    for t in range(n_tiles):
        valid = (s_len - t * S_TILE).min(S_TILE)
        v = pypto.view(scores, [M, S_TILE], [0, t * S_TILE], valid_shape=[M, valid])
        tiles.append(pypto.mul(pypto.cast(v, pypto.DT_FP32), scale))
    mx = pypto.amax(tiles[0], -1, keepdim=True)
    for t in range(1, n_tiles):
        mx = pypto.maximum(mx, pypto.amax(tiles[t], -1, keepdim=True))
    total = pypto.sum(pypto.exp(pypto.sub(tiles[0], mx)), -1, keepdim=True)
    for t in range(1, n_tiles):
        total = pypto.add(total, pypto.sum(pypto.exp(pypto.sub(tiles[t], mx)), -1, keepdim=True))
    for t in range(n_tiles):
        p = pypto.div(pypto.exp(pypto.sub(tiles[t], mx)), total)
        pypto.assemble(pypto.cast(p, pypto.DT_BF16), [0, t * S_TILE], out)


def attn_softmax_wrapper(scores, scale=1.0):
    out = np.zeros_like(scores)
    attn_softmax_kernel(scores, out, scale, scores.shape[1] // S_TILE)
    return out
