"""y = 2x + 1 over [8, 16] tiles; the row and column trip counts are locals computed before the loops (the gym
interleave_rope's ``s_loops``, sigmoid's ``bs_loop``)."""

import numpy as np
import pypto

TR = 8
TC = 16


@pypto.frontend.jit
def rowcount_kernel(
    x: pypto.Tensor([40, 48], pypto.DT_FP32),
    out: pypto.Tensor([40, 48], pypto.DT_FP32),
):
    R = x.shape[0]
    C = x.shape[1]
    rloops = (R + TR - 1) // TR
    cloops = (C + TC - 1) // TC
    pypto.set_vec_tile_shapes(TR, TC)
    for r in pypto.loop(rloops, name="r_loop", idx_name="r"):
        for c in pypto.loop(cloops, name="c_loop", idx_name="c"):
            t = pypto.view(x, [TR, TC], [r * TR, c * TC])
            y = pypto.add(pypto.mul(t, 2.0), 1.0)
            pypto.assemble(y, [r * TR, c * TC], out)


def rowcount_wrapper(x):
    out = np.zeros((40, 48), dtype=np.float32)
    rowcount_kernel(x, out)
    return out
