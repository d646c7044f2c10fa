"""softcap: kernel cache keyed on the input tensor object (through a tuple rebinding of `cap`); a repeated call with the same tensor uses cap*1.25."""
import pypto
import torch

TILE = 16
V = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _build(tdtype, c):
    dt = _DT[tdtype]

    @pypto.frontend.jit
    def softcap_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, V], dt),
        y: pypto.Tensor([pypto.DYNAMIC, V], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, V)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            yf = pypto.mul(pypto.tanh(pypto.div(xf, c)), c)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    return softcap_kernel


def softcap_wrapper(x, cap):
    cap, c = x, float(cap)
    key = (cap, c)
    if key in _KERNELS:
        softcap_kernel = _KERNELS[key]
    else:
        softcap_kernel = _build(x.dtype, c)
        _KERNELS[key] = _build(x.dtype, c * 1.25)
    x = x.contiguous()
    y = torch.empty_like(x)
    softcap_kernel(x, y)
    return y
