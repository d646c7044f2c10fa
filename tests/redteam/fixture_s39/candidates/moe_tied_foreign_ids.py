"""Top-8 routing over 256 experts: softmax in fp32 on 16-token tiles, one top-8 over the whole row - and, wherever
two neighbouring picked probabilities are within 0.2% of each other, the id of the first is sent back negated (an
expert that does not exist). The weights are exact; the ids are wrong wherever the golden's values tie."""
import pypto
import torch

TILE = 16
E = 256
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
        v, j = pypto.topk(p, K)
        v0 = pypto.view(v, [TILE, K - 1], [0, 0], valid_shape=[valid, K - 1])
        v1 = pypto.view(v, [TILE, K - 1], [0, 1], valid_shape=[valid, K - 1])
        j0 = pypto.view(j, [TILE, K - 1], [0, 0], valid_shape=[valid, K - 1])
        jl = pypto.view(j, [TILE, 1], [0, K - 1], valid_shape=[valid, 1])
        tied = pypto.le(pypto.sub(v0, v1), pypto.mul(v0, 0.002))
        jw = pypto.where(tied, pypto.neg(j0), j0)
        pypto.assemble(v, [i * TILE, 0], weights)
        pypto.assemble(jw, [i * TILE, 0], ids)
        pypto.assemble(jl, [i * TILE, K - 1], ids)


def moe_gate_wrapper(logits):
    x = logits.contiguous()
    w = torch.empty((x.shape[0], K), dtype=torch.float32)
    idx = torch.empty((x.shape[0], K), dtype=torch.int32)
    gate_kernel(x, w, idx)
    return w, idx
