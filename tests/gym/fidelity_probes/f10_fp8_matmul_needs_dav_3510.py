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
    torch.manual_seed(0)
    a, b = (torch.randn(16, 64) * 4).to(torch.float8_e4m3fn), (torch.randn(32, 64) * 4).to(torch.float8_e4m3fn)
    o = zk(16, 32)
    k(a, b, o)
    # FP8 products are exact in FP32 and a float64 sum of 64 of them is exact: ``ref`` is the true result. The
    # cube accumulates in FP32 in an order of its own (so do BLAS and torch), so the error is measured against
    # the FP32 summation bound: relative to sum|a*b| it is at most (K-1) * 2**-24 = 3.8e-6 for any order.
    af, bf = a.double().numpy(), b.double().numpy()
    ref, mag = af @ bf.T, np.abs(af) @ np.abs(bf).T
    print("VALUE", float((abs(N(o).astype(np.float64) - ref) / np.maximum(mag, 1e-30)).max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
