"""LSTM cell: the fused [T, 4H] gate projection is split by four views of the intermediate."""

import numpy as np
import pypto

T = 16
I = 32  # noqa: E741 - the gym names the input size I
H = 32
G4 = 4 * H


@pypto.frontend.jit
def lstm_cell_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, I], pypto.DT_FP32),
    h: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    c: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    w_ih: pypto.Tensor([I, G4], pypto.DT_FP32),
    w_hh: pypto.Tensor([H, G4], pypto.DT_FP32),
    bias: pypto.Tensor([1, G4], pypto.DT_FP32),
    h_new: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    c_new: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [128, 128])
    pypto.set_vec_tile_shapes(T, G4)  # a view made with no vec tile and read in the loop below is F21004 on 0.2.0
    b = pypto.view(bias, [1, G4], [0, 0])
    for r in pypto.loop(pypto.ceildiv(n, T), name="rows", idx_name="r"):
        valid = (n - r * T).min(T)
        xt = pypto.view(x, [T, I], [r * T, 0], valid_shape=[valid, I])
        ht = pypto.view(h, [T, H], [r * T, 0], valid_shape=[valid, H])
        ct = pypto.view(c, [T, H], [r * T, 0], valid_shape=[valid, H])
        pypto.set_vec_tile_shapes(T, G4)
        gates = pypto.matmul(xt, w_ih, pypto.DT_FP32) + pypto.matmul(ht, w_hh, pypto.DT_FP32) + b
        pypto.set_vec_tile_shapes(T, H)
        i_g = pypto.sigmoid(pypto.view(gates, [T, H], [0, 0]))
        f_g = pypto.sigmoid(pypto.view(gates, [T, H], [0, H]))
        g_g = pypto.tanh(pypto.view(gates, [T, H], [0, 2 * H]))
        o_g = pypto.sigmoid(pypto.view(gates, [T, H], [0, 3 * H]))
        c_t = f_g * ct + i_g * g_g
        h_t = o_g * pypto.tanh(c_t)
        pypto.assemble(c_t, [r * T, 0], c_new)
        pypto.assemble(h_t, [r * T, 0], h_new)


def lstm_cell_wrapper(x, h, c, w_ih, w_hh, bias):
    h_new = np.zeros(h.shape, dtype=h.dtype)
    c_new = np.zeros(c.shape, dtype=c.dtype)
    lstm_cell_kernel(x, h, c, w_ih, w_hh, bias, h_new, c_new)
    return h_new, c_new
