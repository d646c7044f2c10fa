"""The HEAD example `test_add_scalar_loop_dyn_axis` form: a dynamic-axis loop whose tail extent is the builtin
`min(b - i, 8)` over a SymbolicScalar. pypto 0.2.0 cannot compare a symbol (`ValueError: Not concrete value`);
HEAD maps builtin min/max on symbols to pypto.min/max (emulator: `--compat head`)."""
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
        n = min(b - i, 8)
        t = pypto.view(x, [8, 16], [i, 0], valid_shape=[n, 16])
        pypto.assemble(pypto.add(t, val), [i, 0], out)


def run():
    x, o = mk(30, 16), zk(30, 16)
    k(x, o, 2.5)
    print("VALUE", float(abs(N(o) - (N(x) + 2.5)).max()))


try:
    run()
    print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
