"""``g = lambda t: t * 2.0`` then ``g(x)`` in a kernel body: the PTO parser takes the called local name for a function
definition and fails on the assignment - ``'Assign' object has no attribute 'decorator_list'`` (s29)."""
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
def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    g = lambda t: t * 2.0  # noqa: E731 - the construct under test
    out[:] = g(x)


def run():
    x, o = mk(16, 64), zk(16, 64)
    k(x, o)
    print("VALUE", float(abs(N(o) - N(x) * 2.0).max()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
