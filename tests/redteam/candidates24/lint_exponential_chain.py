# expect: FAIL_LINT
# runtime: FAIL_NUMERIC
# attack: lint: 60 chained names, each the sum of the previous one twice, size the tiles (an exponential walk
#   made lint hang; it must finish and the wrong kernel must still be judged)
"""lint exponential chain."""

import numpy as np
import pypto

A0 = 1
A1 = A0 + A0
A2 = A1 + A1
A3 = A2 + A2
A4 = A3 + A3
A5 = A4 + A4
A6 = A5 + A5
A7 = A6 + A6
A8 = A7 + A7
A9 = A8 + A8
A10 = A9 + A9
A11 = A10 + A10
A12 = A11 + A11
A13 = A12 + A12
A14 = A13 + A13
A15 = A14 + A14
A16 = A15 + A15
A17 = A16 + A16
A18 = A17 + A17
A19 = A18 + A18
A20 = A19 + A19
A21 = A20 + A20
A22 = A21 + A21
A23 = A22 + A22
A24 = A23 + A23
A25 = A24 + A24
A26 = A25 + A25
A27 = A26 + A26
A28 = A27 + A27
A29 = A28 + A28
A30 = A29 + A29
A31 = A30 + A30
A32 = A31 + A31
A33 = A32 + A32
A34 = A33 + A33
A35 = A34 + A34
A36 = A35 + A35
A37 = A36 + A36
A38 = A37 + A37
A39 = A38 + A38
A40 = A39 + A39
A41 = A40 + A40
A42 = A41 + A41
A43 = A42 + A42
A44 = A43 + A43
A45 = A44 + A44
A46 = A45 + A45
A47 = A46 + A46
A48 = A47 + A47
A49 = A48 + A48
A50 = A49 + A49
A51 = A50 + A50
A52 = A51 + A51
A53 = A52 + A52
A54 = A53 + A53
A55 = A54 + A54
A56 = A55 + A55
A57 = A56 + A56
A58 = A57 + A57
A59 = A58 + A58
A60 = A59 + A59
CHAIN_TILE = A60 - A60 + 16


ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(CHAIN_TILE, 64)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        yt = xt * pypto.sigmoid(xt)  # wrong: GELU needs sigmoid(1.702 x)
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def gelu_wrapper(x):
    y = np.zeros_like(x)
    gelu_kernel(x, y)
    return y
