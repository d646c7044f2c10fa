"""Control: y = cap * tanh(x / cap) in fp32, one jit kernel per (dtype, cap, rows), memoized the usual way - looked
up with ``.get``, built on a miss, stored and returned."""
import pypto
import torch

TILE = 16
V = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}
_KERNELS = {}


def _kernel_for(tdtype, cap, rows):
    key = (tdtype, cap, rows)
    kernel = _KERNELS.get(key)
    if kernel is not None:
        return kernel
    dt = _DT[tdtype]
    c = cap

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

    _KERNELS[key] = softcap_kernel
    return softcap_kernel


def softcap_wrapper(x, cap):
    x = x.contiguous()
    y = torch.empty_like(x)
    softcap_kernel = _kernel_for(x.dtype, cap, x.shape[0])
    softcap_kernel(x, y)
    return y
