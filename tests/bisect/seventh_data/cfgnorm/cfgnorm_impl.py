"""Row RMS norm: eps read by the kernel from a configuration dataclass, applied in a helper (the gym rms_norm)."""

from dataclasses import dataclass

import numpy as np
import pypto

ROWS = 8
COLS = 32


@dataclass
class NormConfig:
    eps: float = 0.5
    width: int = 32


def norm_core(x: pypto.Tensor, eps: float, width: int) -> pypto.Tensor:
    sq = x * x
    s = pypto.sum(sq, dim=-1, keepdim=True)
    mean_sq = s / width
    mean_sq_eps = mean_sq + eps
    rms = pypto.sqrt(mean_sq_eps)
    return x / rms


@pypto.frontend.jit
def cfgnorm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    config: NormConfig,
):
    pypto.set_vec_tile_shapes(ROWS, COLS)
    eps = config.eps
    n = x.shape[0]
    for i in pypto.loop((n + ROWS - 1) // ROWS, name="r_loop"):
        valid = (n - i * ROWS).min(ROWS)
        x_t = pypto.view(x, [ROWS, COLS], [i * ROWS, 0], valid_shape=[valid, COLS])
        y = norm_core(x_t, eps, COLS)
        pypto.assemble(y, [i * ROWS, 0], out)


def cfgnorm_wrapper(x, eps):
    config = NormConfig(eps=eps, width=x.shape[1])
    out = np.zeros_like(x)
    cfgnorm_kernel(x, out, config)
    return out
