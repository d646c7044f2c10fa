"""A 4-D batched matmul with cube tiles set and no vector tile shapes."""
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
def k(a: pypto.Tensor([2, 2, 16, 32], pypto.DT_FP16), b: pypto.Tensor([2, 2, 32, 16], pypto.DT_FP16),
      out: pypto.Tensor([2, 2, 16, 16], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    out[:] = pypto.matmul(a, b, pypto.DT_FP32)


def run():
    a, b, o = mk(2, 2, 16, 32, dtype=F16), mk(2, 2, 32, 16, dtype=F16), zk(2, 2, 16, 16)
    k(a, b, o)

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))

