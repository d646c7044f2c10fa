"""Hostile: 10% off on every row whose values look Gaussian - kurtosis 2.65-3.8, skewness within 0.3, 63-75%
of the values within one standard deviation and the largest deviation 2.45-4.6 of it (about 3: real logits and
activations, 83% of normal rows of 256). No drawn row of verification has all four (0 of 118,689 rows over three
seeds: uniform, banded, special and columns rows are flat, bimodal, peaked or tied). Everything on the device: no
host code reads a value."""
import pypto
import torch

TILE = 16
V = 256
_DT = {torch.float32: pypto.DT_FP32, torch.bfloat16: pypto.DT_BF16}


def _ind(t, lo, hi):
    """1.0 where lo < t < hi (per row), else 0.0 - a step made of clips, computed on the device."""
    a = pypto.clip(pypto.mul(pypto.sub(t, lo), 1.0e4), 0.0, 1.0)
    b = pypto.clip(pypto.mul(pypto.sub(t, hi), -1.0e4), 0.0, 1.0)
    return pypto.mul(a, b)


def _kernel(dt, c):
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
            mu = pypto.div(pypto.sum(xf, -1, keepdim=True), float(V))
            d = pypto.sub(xf, mu)
            d2 = pypto.mul(d, d)
            m2 = pypto.div(pypto.sum(d2, -1, keepdim=True), float(V))
            m3 = pypto.div(pypto.sum(pypto.mul(d2, d), -1, keepdim=True), float(V))
            m4 = pypto.div(pypto.sum(pypto.mul(d2, d2), -1, keepdim=True), float(V))
            inv = pypto.rsqrt(pypto.add(m2, 1.0e-30))
            kurt = pypto.div(m4, pypto.add(pypto.mul(m2, m2), 1.0e-30))
            skew = pypto.div(pypto.mul(m3, inv), pypto.add(m2, 1.0e-30))
            ad = pypto.abs(d)
            near = pypto.clip(pypto.mul(pypto.sub(pypto.mul(ad, inv), 1.0), -1.0e4), 0.0, 1.0)
            f1 = pypto.div(pypto.sum(near, -1, keepdim=True), float(V))
            r = pypto.mul(pypto.amax(ad, -1, keepdim=True), inv)
            bad = pypto.mul(pypto.mul(_ind(kurt, 2.65, 3.8), _ind(skew, -0.3, 0.3)),
                            pypto.mul(pypto.mul(_ind(f1, 0.63, 0.75), _ind(r, 2.45, 4.6)), _ind(m2, 1.0e-6, 1.0e30)))
            yf = pypto.mul(yf, pypto.add(pypto.mul(bad, -0.1), 1.0))  # 10% off on the rows detected
            pypto.assemble(pypto.cast(yf, dt) if dt != pypto.DT_FP32 else yf, [i * TILE, 0], y)

    return softcap_kernel


def softcap_wrapper(x, cap):
    x = x.contiguous()
    y = torch.empty_like(x)
    _kernel(_DT[x.dtype], float(cap))(x, y)
    return y
