"""rms_norm in the gym's style: a frozen config dataclass passed to the kernel, a core helper in operator syntax,
one row per loop step with a [1, D] view, a torch wrapper with torch.empty_like and a host reshape of gamma."""

from dataclasses import dataclass

import pypto
import torch

D = 512


@dataclass(frozen=True)
class RMSNormConfig:
    """Trace-time parameters of the kernel (the gym passes them as a kernel argument)."""
    eps: float = 1e-6
    num_features: int = D


def rms_norm_core(x: pypto.Tensor, gamma: pypto.Tensor, eps: float, num_features: int) -> pypto.Tensor:
    """y = x / sqrt(mean(x^2) + eps) * gamma, fp32 inside, bf16 out."""
    xf = pypto.cast(x, pypto.DT_FP32)
    gf = pypto.cast(gamma, pypto.DT_FP32)
    s = pypto.sum(xf * xf, dim=-1, keepdim=True)
    rms = pypto.sqrt(s / num_features + eps)
    return pypto.cast(xf / rms * gf, pypto.DT_BF16)


@pypto.frontend.jit
def rms_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    gamma: pypto.Tensor([1, D], pypto.DT_BF16),
    out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
    config: RMSNormConfig,
):
    rows = x.shape[0]
    pypto.set_vec_tile_shapes(1, D)
    for b_idx in pypto.loop(rows, name="LOOP_ROWS", idx_name="b_idx"):
        x_row = pypto.view(x, [1, D], [b_idx, 0])
        pypto.assemble(rms_norm_core(x_row, gamma, config.eps, config.num_features), [b_idx, 0], out)


def rms_norm_wrapper(x: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
    """torch in, torch out."""
    config = RMSNormConfig(eps=1e-6, num_features=x.shape[-1])
    out = torch.empty_like(x)
    rms_norm_kernel(x, gamma.reshape(1, D), out, config)
    return out
