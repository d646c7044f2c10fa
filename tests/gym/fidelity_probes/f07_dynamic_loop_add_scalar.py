"""A loop over a dynamic axis adding a Python scalar attribute to each tile (gym add_scalar pattern)."""
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
def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
      val: float):
    pypto.set_vec_tile_shapes(8, 16)
    b = x.shape[0]
    for i in pypto.loop(0, b, 8, name="b", idx_name="i"):
        t = pypto.view(x, [8, 16], [i, 0])
        pypto.assemble(pypto.add(t, val), [i, 0], out)


def run():
    x, o = mk(32, 16), zk(32, 16)
    k(x, o, 2.5)
    print("VALUE", float(abs(N(o) - (N(x) + 2.5)).max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
