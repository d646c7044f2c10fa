"""A raise under a runtime `if` on the loop index (both paths are traced): the parser error stays."""
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


MODE = "fast"


@pypto.frontend.jit
def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 16)
    for i in pypto.loop(1, name="l", idx_name="i"):
        if i > 5:
            raise NotImplementedError("runtime branch")
        out[:] = pypto.exp(x)


def run():
    x, o = mk(4, 16), zk(4, 16)
    k(x, o)

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))

