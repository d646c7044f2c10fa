"""Adam moment update, fp32, 16-row tiles; one jit kernel per momentum setting, betas folded in as constants."""
import pypto
import torch

TILE = 16
D = 256
_KERNELS = {}


def _kernel_for(b1, b2):
    key = (b1, b2)  # one kernel per betas
    if key in _KERNELS:
        return _KERNELS[key]

    @pypto.frontend.jit
    def adam_kernel(
        m: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
        v: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
        g: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
        m_new: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
        v_new: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    ):
        n = m.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            mt = pypto.view(m, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            vt = pypto.view(v, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            gt = pypto.view(g, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            mo = pypto.add(pypto.mul(mt, b1), pypto.mul(gt, 1.0 - b1))
            vo = pypto.add(pypto.mul(vt, b2), pypto.mul(pypto.mul(gt, gt), 1.0 - b2))
            pypto.assemble(mo, [i * TILE, 0], m_new)
            pypto.assemble(vo, [i * TILE, 0], v_new)

    _KERNELS[key] = adam_kernel
    return adam_kernel


def adam_moments_wrapper(m, v, g, betas=(0.9, 0.999)):
    m_new = torch.empty_like(m)
    v_new = torch.empty_like(v)
    b1, b2 = betas
    adam_kernel = _kernel_for(float(b1), float(b2))
    adam_kernel(m.contiguous(), v.contiguous(), g.contiguous(), m_new, v_new)
    return m_new, v_new
