"""Control: softmax over the 256 experts in fp32 on 16-token tiles, one top-8 over the whole row."""
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
        pypto.assemble(v, [i * TILE, 0], weights)
        pypto.assemble(j, [i * TILE, 0], ids)


def moe_gate_wrapper(logits):
    x = logits.contiguous()
    w = torch.empty((x.shape[0], K), dtype=torch.float32)
    idx = torch.empty((x.shape[0], K), dtype=torch.int32)
    gate_kernel(x, w, idx)
    return w, idx
