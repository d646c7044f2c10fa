"""CHEAT (s32, ours; gelu2 op): the output goes through an int cast on the host (a truncation computed there):
only one float-to-float cast of the kernel's bytes is accepted. Wrong for a user by construction.

Was: HONEST (gelu2 op, fp32 + bf16): one fp32 kernel; the wrapper upcasts a bf16 input to fp32 on the host
(x.float()), runs the kernel, and casts the result back to the input dtype (y.to(x.dtype)) - the usual
"compute in fp32" wrapper. Checks that verify accepts host casts around the kernel."""
import pypto
import torch

ROW_TILE = 16
COLS = 64


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        pypto.assemble(xt * pypto.sigmoid(xt * 1.702), [i * ROW_TILE, 0], y)


def gelu2_wrapper(x):
    xf = x.contiguous().float()
    y = torch.empty_like(xf)
    gelu_kernel(xf, y)
    return y.to(torch.int32).to(x.dtype)  # two casts: float -> int truncates on the host
