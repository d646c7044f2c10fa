"""pypto.reshape (not inplace) to rank 3 with no vec tile set; the reading op sets a rank-3 tile."""
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
def k(a: pypto.Tensor([4, 256], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
    r = pypto.reshape(a, [4, 8, 32])
    pypto.set_vec_tile_shapes(1, 8, 32)
    out[:] = pypto.amax(r, -1, False)


def run():
    a, o = mk(4, 256), zk(4, 8)
    k(a, o)
    print("VALUE", float(abs(N(o) - N(a).reshape(4, 8, 32).max(-1)).max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
