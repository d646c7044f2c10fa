"""Two-pass softmax over 512-wide rows: pass 1 running max and sum over 128-column chunks, pass 2 writes."""

import numpy as np
import pypto

T = 8
L = 512
CC = 128


def load_chunk(x, i, c, valid):
    return pypto.view(x, [T, CC], [i * T, c * CC], valid_shape=[valid, CC])


@pypto.frontend.jit
def softmax_two_pass_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, L], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, L], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(T, CC)
    mx = pypto.tensor([T, 1], pypto.DT_FP32, "mx")
    den = pypto.tensor([T, 1], pypto.DT_FP32, "den")
    for i in pypto.loop(pypto.ceildiv(n, T), name="rows", idx_name="i"):
        valid = (n - i * T).min(T)
        for j in pypto.loop(L // CC, name="pass1", idx_name="j"):
            xt = load_chunk(x, i, j, valid)
            cmax = pypto.amax(xt, -1, keepdim=True)
            if pypto.is_loop_begin(j):
                den[:] = pypto.sum(pypto.exp(xt - cmax), -1, keepdim=True)
                mx[:] = cmax
            else:
                m_new = pypto.maximum(mx, cmax)
                den[:] = den * pypto.exp(mx - m_new) + pypto.sum(pypto.exp(xt - m_new), -1, keepdim=True)
                mx[:] = m_new
        for k in pypto.loop(L // CC, name="pass2", idx_name="k"):
            xt = load_chunk(x, i, k, valid)
            yt = pypto.exp(xt - mx) / den
            pypto.assemble(yt, [i * T, k * CC], y)


def softmax_two_pass_wrapper(x):
    y = np.zeros(x.shape, dtype=x.dtype)
    softmax_two_pass_kernel(x, y)
    return y
