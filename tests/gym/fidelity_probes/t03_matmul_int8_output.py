"""matmul of FP8E4M3 operands with an INT8 output (fixpipe quantisation with a scale), the gym's
quant_batch_matmul pattern. Needs torch (float8). FP8 cube exists on DAV_3510 only (see f10)."""
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
      out: pypto.Tensor([16, 32], pypto.DT_INT8)):
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = pypto.matmul(a, b, pypto.DT_INT8, b_trans=True, extend_params={"scale": 0.5})


def run():
    torch.manual_seed(0)
    a, b = (torch.randn(16, 64) * 4).to(torch.float8_e4m3fn), (torch.randn(32, 64) * 4).to(torch.float8_e4m3fn)
    o = zk(16, 32, dtype=I8)
    k(a, b, o)
    # the exact accumulator (float64 sums of exact FP8 products) scaled; the cube's FP32 accumulation may move it
    # by the FP32 summation bound (K-1) * 2**-24 * sum|a*b| * scale, which can flip a rounding tie. VALUE is how
    # far the INT8 result lies beyond "a correct rounding of some FP32-accumulated value" (0 when right).
    af, bf = a.double().numpy(), b.double().numpy()
    exact, slack = (af @ bf.T) * 0.5, 63 * 2.0 ** -24 * (np.abs(af) @ np.abs(bf).T) * 0.5
    got = N(o).astype(np.float64)
    beyond = np.maximum(abs(got - np.clip(exact, -128, 127)) - 0.5 - slack, 0.0)  # saturation included
    print("VALUE", float(beyond.max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
