"""The gym's swiglu_mlp calls ``pypto.matmul(x, w)`` without ``out_dtype``: both toolchains require it (0.2.0's
``matmul(input, mat2, out_dtype, *, ...)``; the real wheel raises the TypeError inside its parser)."""
import numpy as np

try:
    import torch
    def mk(*s, dtype=None):
        return torch.rand(*s, dtype=dtype or torch.float32)
    def zk(*s, dtype=None):
        return torch.zeros(*s, dtype=dtype or torch.float32)
except ImportError:  # the emulator also takes numpy arrays (CI may run without torch)
    def mk(*s, dtype=None):
        return np.random.default_rng(0).random(s).astype(dtype or np.float32)
    def zk(*s, dtype=None):
        return np.zeros(s, dtype or np.float32)
import pypto


@pypto.frontend.jit
def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), w: pypto.Tensor([64, 32], pypto.DT_FP32),
      out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    out[:] = pypto.matmul(x, w)


def run():
    x, w, o = mk(16, 64), mk(64, 32), zk(16, 32)
    k(x, w, o)


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
