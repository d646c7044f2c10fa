"""y = x @ w: two row tiles of 8 (outer loop), the contraction accumulated over four k tiles of 16 (inner loop), the
accumulator initialised on the inner loop's first trip (the gym flash_attention_score_grad's ``dq_acc``)."""

import numpy as np
import pypto

TM = 8
TK = 16


@pypto.frontend.jit
def accguard_kernel(
    x: pypto.Tensor([16, 64], pypto.DT_FP32),
    w: pypto.Tensor([64, 16], pypto.DT_FP32),
    out: pypto.Tensor([16, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(TM, 16)
    pypto.set_cube_tile_shapes([8, 8], [16, 16], [16, 16])
    for i in pypto.loop(2, name="m_loop", idx_name="i"):
        acc = pypto.tensor([TM, 16], pypto.DT_FP32, "acc")
        for j in pypto.loop(4, name="k_loop", idx_name="j"):
            xt = pypto.view(x, [TM, TK], [i * TM, j * TK])
            wt = pypto.view(w, [TK, 16], [j * TK, 0])
            part = pypto.matmul(xt, wt, pypto.DT_FP32)
            if pypto.is_loop_begin(j):
                acc[:] = part
            else:
                acc[:] = pypto.add(acc, part)
            if pypto.is_loop_end(j):
                pypto.assemble(acc, [i * TM, 0], out)


def accguard_wrapper(x, w):
    out = np.zeros((16, 16), dtype=np.float32)
    accguard_kernel(x, w, out)
    return out
