"""gdr_state: (wrong) the decay skipped on the first step (the state 'starts fresh')."""

import numpy as np
import pypto

L = 8
DK = 16
DV = 16


@pypto.frontend.jit
def gdr_kernel(
    q: pypto.Tensor([pypto.DYNAMIC, L, DK], pypto.DT_FP32),
    k: pypto.Tensor([pypto.DYNAMIC, L, DK], pypto.DT_FP32),
    v: pypto.Tensor([pypto.DYNAMIC, L, DV], pypto.DT_FP32),
    g: pypto.Tensor([pypto.DYNAMIC, L], pypto.DT_FP32),
    beta: pypto.Tensor([pypto.DYNAMIC, L], pypto.DT_FP32),
    h0: pypto.Tensor([pypto.DYNAMIC, DK, DV], pypto.DT_FP32),
    o: pypto.Tensor([pypto.DYNAMIC, L, DV], pypto.DT_FP32),
    h_t: pypto.Tensor([pypto.DYNAMIC, DK, DV], pypto.DT_FP32),
):
    b_count = q.shape[0]
    for b in pypto.loop(b_count, name="seq", idx_name="b"):
        pypto.set_vec_tile_shapes(1, DK, DV)
        s = pypto.reshape(pypto.view(h0, [1, DK, DV], [b, 0, 0]), [DK, DV])
        for t in range(L):
            pypto.set_vec_tile_shapes(1, 1, DK)
            qt = pypto.reshape(pypto.view(q, [1, 1, DK], [b, t, 0]), [1, DK])
            kt = pypto.reshape(pypto.view(k, [1, 1, DK], [b, t, 0]), [1, DK])
            vt = pypto.reshape(pypto.view(v, [1, 1, DV], [b, t, 0]), [1, DV])
            pypto.set_vec_tile_shapes(DK, DV)
            decay = pypto.expand_clone(pypto.exp(pypto.view(g, [1, 1], [b, t])), [DK, 1])
            bt = pypto.expand_clone(pypto.view(beta, [1, 1], [b, t]), [1, DV])
            pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
            if t > 0:
                s = pypto.mul(s, decay)
            u = pypto.sub(vt, pypto.matmul(kt, s, pypto.DT_FP32))
            s = pypto.add(s, pypto.matmul(kt, pypto.mul(u, bt), pypto.DT_FP32, a_trans=True))
            ot = pypto.matmul(qt, s, pypto.DT_FP32)
            pypto.set_vec_tile_shapes(1, 1, DV)
            pypto.assemble(pypto.reshape(ot, [1, 1, DV]), [b, t, 0], o)
        pypto.set_vec_tile_shapes(1, DK, DV)
        pypto.assemble(pypto.reshape(s, [1, DK, DV]), [b, 0, 0], h_t)


def gdr_state_wrapper(q, k, v, g, beta, h0):
    o = np.zeros(v.shape, dtype=np.float32)
    h_t = np.zeros(h0.shape, dtype=np.float32)
    gdr_kernel(q, k, v, g, beta, h0, o, h_t)
    return o, h_t
