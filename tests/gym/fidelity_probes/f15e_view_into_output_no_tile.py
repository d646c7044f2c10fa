"""A copy kernel with no vec tile set at all (the difftest's k0068 class): the copy 0.2.0 inserts for a view of an
argument written into an argument needs one - ``F21004 op [REGISTER_COPY]tile shape not set`` (s29)."""
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
def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
    v = pypto.view(x, [8, 32], [0, 0])
    pypto.assemble(v, [0, 0], out)


def run():
    x, o = mk(8, 32), zk(8, 32)
    k(x, o)
    print("VALUE", float(abs(N(o) - N(x)).max()))

try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
