"""``pypto.argsort`` under a vec tile of 16 along the sorted axis: ``FC1001 The size of the tile shape along axis 1 must
be a multiple of 32. Got 16.`` (sort.cpp; topk is not bound by it; s29)."""
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
def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = pypto.argsort(x, -1)


def run():
    x = mk(8, 16)
    o = torch.zeros(8, 16, dtype=torch.int32) if hasattr(x, "numpy") else np.zeros((8, 16), np.int32)
    k(x, o)
    print("VALUE", float((N(o) != np.argsort(N(x), axis=-1, kind="stable")).sum()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
