"""matmul of FP8E4M3 operands with an FP32 output: the FP8 cube exists on DAV_3510 (Ascend 950) only. Needs
torch (float8)."""
import numpy as np

try:
    import torch
    def mk(*s, dtype=None):
        return torch.rand(*s, dtype=dtype or torch.float32)
    def zk(*s, dtype=None):
        return torch.zeros(*s, dtype=dtype or torch.float32)
    F16, I8 = torch.float16, torch.int8
except ImportError:  # the emulator also takes numpy arrays (CI may run without torch)
    def mk(*s, dtype=None):
        return np.random.default_rng(0).random(s).astype(dtype or np.float32)
    def zk(*s, dtype=None):
        return np.zeros(s, dtype or np.float32)
    F16, I8 = np.float16, np.int8
import pypto


def N(t):
    return t.numpy() if hasattr(t, "numpy") else t


@pypto.frontend.jit
def k(a: pypto.Tensor([16, 64], pypto.DT_FP8E4M3), b: pypto.Tensor([32, 64], pypto.DT_FP8E4M3),
      out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = pypto.matmul(a, b, pypto.DT_FP32, b_trans=True)


def run():
    a, b = (torch.randn(16, 64) * 4).to(torch.float8_e4m3fn), (torch.randn(32, 64) * 4).to(torch.float8_e4m3fn)
    o = zk(16, 32)
    k(a, b, o)
    ref = (a.float() @ b.float().T).numpy()
    print("VALUE", float(abs(N(o).astype(np.float32) - ref).max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
