"""A HEAD-only runtime option (max_workspace_kb) in the jit decorator."""
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


@pypto.frontend.jit(runtime_options={"max_workspace_kb": 1024})
def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = pypto.add(x, 1.0)


def run():
    x, o = mk(8, 16), zk(8, 16)
    k(x, o)
    print("VALUE", float(abs(N(o) - (N(x) + 1.0)).max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
