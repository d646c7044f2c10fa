"""attn_softmax in the gym's style: 3-pass tiled softmax (max, sum, normalise) over 64-key tiles in fp32, bf16 I/O;
the wrapper pads S to a multiple of 64 with -1e9 (torch.cat of a filled block), runs the kernel on the padded scores
and returns the first S columns."""

import pypto
import torch

S_TILE = 64
M = 16


@pypto.frontend.jit
def attn_softmax_kernel(
    scores: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_BF16),
    out: pypto.Tensor([M, pypto.DYNAMIC], pypto.DT_BF16),
    scale: float,
    n_s_tiles: int,
):
    for m_idx in pypto.loop(M, name="M_LOOP", idx_name="m_idx"):
        gmax = pypto.tensor([1, 1], pypto.DT_FP32, "gmax")
        for t in range(n_s_tiles):
            pypto.set_vec_tile_shapes(1, S_TILE)
            r = pypto.mul(pypto.cast(pypto.view(scores, [1, S_TILE], [m_idx, t * S_TILE]), pypto.DT_FP32), scale)
            tm = pypto.amax(r, dim=-1, keepdim=True)
            if t == 0:
                gmax[:] = tm
            else:
                gmax[:] = pypto.maximum(gmax, tm)
        tsum = pypto.tensor([1, 1], pypto.DT_FP32, "tsum")
        for t in range(n_s_tiles):
            pypto.set_vec_tile_shapes(1, S_TILE)
            r = pypto.mul(pypto.cast(pypto.view(scores, [1, S_TILE], [m_idx, t * S_TILE]), pypto.DT_FP32), scale)
            ts = pypto.sum(pypto.exp(pypto.sub(r, gmax)), dim=-1, keepdim=True)
            if t == 0:
                tsum[:] = ts
            else:
                tsum[:] = pypto.add(tsum, ts)
        for t in range(n_s_tiles):
            pypto.set_vec_tile_shapes(1, S_TILE)
            r = pypto.mul(pypto.cast(pypto.view(scores, [1, S_TILE], [m_idx, t * S_TILE]), pypto.DT_FP32), scale)
            p = pypto.div(pypto.exp(pypto.sub(r, gmax)), tsum)
            pypto.assemble(pypto.cast(p, pypto.DT_BF16), [m_idx, t * S_TILE], out)


def attn_softmax_wrapper(scores: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    m, s = scores.shape
    n_tiles = (s + S_TILE - 1) // S_TILE
    padded_s = n_tiles * S_TILE
    if padded_s > s:
        pad = torch.full((m, padded_s - s), -1e9, dtype=torch.bfloat16, device=scores.device)
        scores_padded = torch.cat([scores, pad], dim=1)
    else:
        scores_padded = scores
    out_padded = torch.empty(m, padded_s, dtype=torch.bfloat16, device=scores.device)
    attn_softmax_kernel(scores_padded, out_padded, scale, n_tiles)
    return out_padded[:, :s]
