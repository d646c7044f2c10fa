"""The output is rewritten in every iteration from a local buffer filled row by row: after iteration 0 it carries
uninitialized rows, after the last iteration it is complete (the final output is correct)."""
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
def k(x: pypto.Tensor([2, 16], pypto.DT_FP32), out: pypto.Tensor([2, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 16)
    buf = pypto.tensor([2, 16], pypto.DT_FP32)
    for i in pypto.loop(2, name="rows", idx_name="i"):
        row = pypto.view(x, [1, 16], [i, 0])
        pypto.assemble(pypto.mul(row, 2.0), [i, 0], buf)
        out[:] = pypto.mul(buf, 1.0)


def run():
    x, o = mk(2, 16), zk(2, 16)
    k(x, o)
    print("VALUE", float(abs(N(o) - 2 * N(x)).max()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))

