import torch, pypto

from dataclasses import dataclass
@dataclass
class Cfg:
    rows: int = 16
    scale: float = 0.5
    bias: float = 1.0
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32), cfg: Cfg):
    pypto.set_vec_tile_shapes(cfg.rows, 32)
    out[:] = x * cfg.scale + cfg.bias
x = torch.rand(16, 32); o = torch.zeros(16, 32)
try:
    k(x, o, Cfg()); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
