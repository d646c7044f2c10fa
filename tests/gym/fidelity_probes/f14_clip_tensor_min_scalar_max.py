"""``pypto.clip(x, lo, 0.9)`` with a tensor ``min`` and a scalar ``max``: 0.2.0's clip calls ``Clip(Tensor, Tensor,
float)``, which its binding refuses (``TypeError: Clip(): incompatible function arguments``; s29)."""
import numpy as np

try:
    import torch
    def mk(*s, dtype=None):
        return torch.rand(*s, dtype=dtype or torch.float32)
    def zk(*s, dtype=None):
        return torch.zeros(*s, dtype=dtype or torch.float32)
    BF16 = torch.bfloat16
except ImportError:  # the emulator also takes numpy arrays (CI may run without torch)
    import ml_dtypes
    def mk(*s, dtype=None):
        return np.random.default_rng(0).random(s).astype(dtype or np.float32)
    def zk(*s, dtype=None):
        return np.zeros(s, dtype or np.float32)
    BF16 = ml_dtypes.bfloat16
import pypto


def N(t):
    return t.float().numpy() if hasattr(t, "numpy") else t.astype(np.float32)


@pypto.frontend.jit
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), lo: pypto.Tensor([16, 32], pypto.DT_FP32),
      out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = pypto.clip(x, lo, 0.9)


def run():
    x, lo, o = mk(16, 32), mk(16, 32), zk(16, 32)
    k(x, lo, o)
    print("VALUE", float(abs(N(o) - np.clip(N(x), N(lo), 0.9)).max()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
