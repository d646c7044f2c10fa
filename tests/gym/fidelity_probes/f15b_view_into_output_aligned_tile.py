"""The copy kernel of f15 under vec tile (8, 16): 32 bytes, accepted (s29)."""
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
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_BF16), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_BF16)):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(8, 16)
    for i in pypto.loop(n // 8, name="r", idx_name="i"):
        t = pypto.view(x, [8, 32], [i * 8, 0])
        pypto.assemble(t, [i * 8, 0], out)


def run():
    x, o = mk(16, 32, dtype=BF16), zk(16, 32, dtype=BF16)
    k(x, o)
    print("VALUE", float(abs(N(o) - N(x)).max()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
