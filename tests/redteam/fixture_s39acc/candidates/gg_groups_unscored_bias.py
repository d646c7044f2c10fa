"""group_gate: (wrong) the groups ranked on the unbiased scores."""

import numpy as np
import pypto

E = 32
G = 4
GU = 8
TOP_G = 2
TOP_K = 8


@pypto.frontend.jit
def gate_kernel(
    logits: pypto.Tensor([pypto.DYNAMIC, E], pypto.DT_FP32),
    bias: pypto.Tensor([1, E], pypto.DT_FP32),
    weights: pypto.Tensor([pypto.DYNAMIC, TOP_K], pypto.DT_FP32),
    ids: pypto.Tensor([pypto.DYNAMIC, TOP_K], pypto.DT_INT32),
):
    t = logits.shape[0]
    for r in pypto.loop(t, name="tok", idx_name="r"):
        pypto.set_vec_tile_shapes(1, E)
        x = pypto.view(logits, [1, E], [r, 0])
        scores = pypto.sigmoid(x)
        aug = pypto.add(scores, bias)
        grouped = pypto.reshape(scores, [1, G, GU])
        pypto.set_vec_tile_shapes(1, G, GU)
        gscore = pypto.amax(grouped, -1, False)
        pypto.set_vec_tile_shapes(1, G)
        _, top_groups = pypto.topk(gscore, TOP_G, -1, True)
        gmask = pypto.full([1, G], 0.0, pypto.DT_FP32)
        gmask = pypto.scatter_(gmask, 1, top_groups, 1.0)
        pypto.set_vec_tile_shapes(1, G, GU)
        emask = pypto.reshape(pypto.expand_clone(pypto.unsqueeze(gmask, -1), [1, G, GU]), [1, E])
        pypto.set_vec_tile_shapes(1, E)
        masked = pypto.where(pypto.logical_not(emask), float("-inf"), aug)
        _, picks = pypto.topk(masked, TOP_K, -1, True)
        picked = pypto.gather(scores, 1, picks)
        pypto.set_vec_tile_shapes(1, TOP_K)
        denom = pypto.sum(picked, -1, True)
        pypto.assemble(pypto.div(picked, denom), [r, 0], weights)
        pypto.assemble(pypto.cast(picks, pypto.DT_INT32), [r, 0], ids)


def group_gate_wrapper(logits, bias):
    weights = np.zeros((logits.shape[0], TOP_K), dtype=np.float32)
    ids = np.zeros((logits.shape[0], TOP_K), dtype=np.int32)
    gate_kernel(logits, bias.reshape(1, -1), weights, ids)
    return weights, ids
