"""swiglu_mlp stage M1+M2: h = silu(x @ w_gate) * (x @ w_up) (M1, frozen), then y = h @ w_down (M2).

The token axis T is dynamic; each tile runs the gate and up projections as two fp32 matmuls over the full
H = 128 contraction and gates them elementwise. SiLU is written as ``g / (1 + exp(-g))`` (the golden's
form). M2 projects the gated tile back to H with a third matmul over F = 256. The tail tile (T = 45 ->
13 rows) is carried by ``valid_shape`` on the x view and propagates through all three matmuls.
"""

import numpy as np
import pypto

H = 128
F = 256
TILE = 16


@pypto.frontend.jit
def swiglu_mlp_module12_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
    w_gate: pypto.Tensor([H, F], pypto.DT_FP32),
    w_up: pypto.Tensor([H, F], pypto.DT_FP32),
    w_down: pypto.Tensor([F, H], pypto.DT_FP32),
    h_out: pypto.Tensor([pypto.DYNAMIC, F], pypto.DT_FP32),
    y_out: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP32),
):
    t_len = x.shape[0]
    for i in pypto.loop((t_len + TILE - 1) // TILE, name="tokens", idx_name="i"):
        valid = (t_len - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, H], [i * TILE, 0], valid_shape=[valid, H])
        # --- Module M1: gate/up projections and SiLU-gating ---
        pypto.set_cube_tile_shapes([16, 16], [64, 128], [128, 128])
        pypto.set_vec_tile_shapes(TILE, F)
        g = pypto.matmul(xt, w_gate, pypto.DT_FP32)                  # [TILE, F]
        u = pypto.matmul(xt, w_up, pypto.DT_FP32)                    # [TILE, F]
        act = pypto.div(g, pypto.add(pypto.exp(pypto.mul(g, -1.0)), 1.0))  # [TILE, F]
        h = pypto.mul(act, u)                                        # [TILE, F]
        pypto.assemble(h, [i * TILE, 0], h_out)
        # --- Module M2: down projection ---
        pypto.set_cube_tile_shapes([16, 16], [64, 256], [128, 128])
        pypto.set_vec_tile_shapes(TILE, H)
        y = pypto.matmul(h, w_down, pypto.DT_FP32)                   # [TILE, H]
        pypto.assemble(y, [i * TILE, 0], y_out)


def swiglu_mlp_module12_wrapper(x, w_gate, w_up, w_down):
    h = np.zeros((x.shape[0], w_gate.shape[1]), dtype=np.float32)
    y = np.zeros((x.shape[0], w_down.shape[1]), dtype=np.float32)
    swiglu_mlp_module12_kernel(x, w_gate, w_up, w_down, h, y)
    return h, y
