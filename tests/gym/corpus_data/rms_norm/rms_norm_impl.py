"""RMSNorm: fp16 in/out, fp32 inside; tile rows from a config dataclass, eps as a kernel attribute."""

from dataclasses import dataclass

import pypto
import torch

H = 128


@dataclass(frozen=True)
class RmsNormConfig:
    tile_rows: int = 8


CONFIG = RmsNormConfig()


@pypto.frontend.jit
def rms_norm_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    gamma: pypto.Tensor([1, H], pypto.DT_FP16),
    y: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16),
    eps: float,
):
    pypto.set_vec_tile_shapes(CONFIG.tile_rows, x.shape[1])
    tokens = x.shape[0]
    tile = CONFIG.tile_rows
    for i in pypto.loop(pypto.ceildiv(tokens, tile), name="tokens", idx_name="i"):
        valid = (tokens - i * tile).min(tile)
        xt = pypto.view(x, [tile, H], [i * tile, 0], valid_shape=[valid, H])
        xf = pypto.cast(xt, pypto.DT_FP32)
        gf = pypto.cast(gamma, pypto.DT_FP32)
        ms = pypto.div(pypto.sum(pypto.mul(xf, xf), -1, keepdim=True), float(H))
        inv = pypto.rsqrt(pypto.add(ms, eps))
        yt = pypto.cast(pypto.mul(pypto.mul(xf, inv), gf), pypto.DT_FP16)
        pypto.assemble(yt, [i * tile, 0], y)


def rms_norm(x: torch.Tensor, gamma: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    y = torch.empty_like(x)
    rms_norm_kernel(x, gamma.reshape(1, H), y, eps)
    return y
