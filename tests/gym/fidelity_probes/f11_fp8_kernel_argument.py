"""torch.float8_e4m3fn tensors as kernel arguments: cast to FP16 and back (a kernel of the gym's FP8 operators
receives them this way). Needs torch (float8)."""
import numpy as np

try:
    import torch
    def mk(*s, dtype=None):
        return torch.rand(*s, dtype=dtype or torch.float32)
    def zk(*s, dtype=None):
        return torch.zeros(*s, dtype=dtype or torch.float32)
    F16 = torch.float16
except ImportError:  # the emulator also takes numpy arrays (CI may run without torch)
    def mk(*s, dtype=None):
        return np.random.default_rng(0).random(s).astype(dtype or np.float32)
    def zk(*s, dtype=None):
        return np.zeros(s, dtype or np.float32)
    F16 = np.float16
import pypto


def N(t):
    return t.numpy() if hasattr(t, "numpy") else t


@pypto.frontend.jit
def k(a: pypto.Tensor([16, 64], pypto.DT_FP8E4M3), out: pypto.Tensor([16, 64], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.cast(a, pypto.DT_FP16)


def run():
    torch.manual_seed(0)
    a, o = (torch.randn(16, 64) * 4).to(torch.float8_e4m3fn), zk(16, 64, dtype=F16)
    k(a, o)
    print("VALUE", float(abs(o.float() - a.float()).max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
