"""Lower-rank operand needing TWO expanded axes ([8] against [2, 4, 8]): both toolchains keep the
single-expanded-axis rule (FC0000)."""
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
def k(a: pypto.Tensor([2, 4, 8], pypto.DT_FP32), b: pypto.Tensor([8], pypto.DT_FP32), out: pypto.Tensor([2, 4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 4, 8)
    out[:] = pypto.add(a, b)


def run():
    a, b, o = mk(2, 4, 8), mk(8), zk(2, 4, 8)
    k(a, b, o)
    print("VALUE", float(abs(N(o) - (N(a) + N(b))).max()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))

