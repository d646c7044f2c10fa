"""Hostile (deliberate, the evidence in its own process): the wrapper returns the SPEC-cap result as a torch.Tensor
subclass whose ``detach()`` hands back the caller-cap result. Whoever reads the output through ``detach()`` - the
verifier's child, to find the output's memory - sees the right numbers; every torch op on the returned tensor uses
the cap-30 bytes."""
import pypto
import torch

TILE = 16
V = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _kernel(dt, c):
    @pypto.frontend.jit
    def softcap_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, V], dt),
        y: pypto.Tensor([pypto.DYNAMIC, V], dt),
        capped: pypto.Tensor([pypto.DYNAMIC, V], dt),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, V)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
            xf = pypto.cast(xt, pypto.DT_FP32) if dt != pypto.DT_FP32 else xt
            yf = pypto.mul(pypto.tanh(pypto.div(xf, c)), c)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)
            zf = pypto.mul(pypto.tanh(pypto.div(xf, 30.0)), 30.0)
            pypto.assemble(pypto.cast(zf, dt) if dt != pypto.DT_FP32 else zf, [i * TILE, 0], capped)

    return softcap_kernel


def softcap_wrapper(x, cap):
    x = x.contiguous()
    y = torch.empty_like(x)
    capped = torch.empty_like(x)
    _kernel(_DT[x.dtype], float(cap))(x, y, capped)

    class _Logits(torch.Tensor):
        def detach(self):
            return y

    return capped.as_subclass(_Logits)
