"""fma3: when b and c are one tensor (fma3(x, y, y)) a 'factored' path computes (a + 1) * |b| (wrong for negative b)."""
import pypto
import torch

TILE = 16
D = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _kernel_for(tdtype, fact):
    dt = _DT[tdtype]

    @pypto.frontend.jit
    def fma3_kernel(
        a: pypto.Tensor([pypto.DYNAMIC, D], dt),
        b: pypto.Tensor([pypto.DYNAMIC, D], dt),
        c: pypto.Tensor([pypto.DYNAMIC, D], dt),
        y: pypto.Tensor([pypto.DYNAMIC, D], dt),
    ):
        n = a.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            at = pypto.view(a, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            bt = pypto.view(b, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            ct = pypto.view(c, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            af = pypto.cast(at, pypto.DT_FP32) if dt != pypto.DT_FP32 else at
            bf = pypto.cast(bt, pypto.DT_FP32) if dt != pypto.DT_FP32 else bt
            cf = pypto.cast(ct, pypto.DT_FP32) if dt != pypto.DT_FP32 else ct
            if fact:
                yf = pypto.mul(pypto.add(af, 1.0), pypto.abs(bf))
            else:
                yf = pypto.add(pypto.mul(af, bf), cf)
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    return fma3_kernel


def fma3_wrapper(a, b, c):
    fact = len({b, c}) == 1 and len({a, b}) == 2
    a, b, c = a.contiguous(), b.contiguous(), c.contiguous()
    y = torch.empty_like(a)
    fma3_kernel = _kernel_for(a.dtype, fact)
    fma3_kernel(a, b, c, y)
    return y
