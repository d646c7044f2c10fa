"""``pypto.argsort(x, 0)`` sorts along axis 0 (the wheel: ``ArgSort(input, dim)``); the emulator sorted the last axis
whatever ``dim`` was - accepted by both, the emulator's numbers checked against numpy's stable argsort (s29)."""
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
def k(x: pypto.Tensor([32, 64], pypto.DT_FP32), out: pypto.Tensor([32, 64], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(32, 64)
    out[:] = pypto.argsort(x, 0, True)


def run():
    x = mk(32, 64)
    o = torch.zeros(32, 64, dtype=torch.int32) if hasattr(x, "numpy") else np.zeros((32, 64), np.int32)
    k(x, o)
    want = np.argsort(-N(x), axis=0, kind="stable")
    print("VALUE", float((N(o) != want).sum()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
