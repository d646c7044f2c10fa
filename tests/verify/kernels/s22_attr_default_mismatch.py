"""Fast GELU y = x * sigmoid(alpha x); the wrapper's default alpha (1.0, plain SiLU) is not the SPEC's 1.702.

Attack (accidental as easily as deliberate): the verifier always passes SPEC attributes by keyword, so the
wrapper's default is never run; a caller who writes gelu_wrapper(x) gets SiLU."""

from dataclasses import dataclass

import numpy as np
import pypto

ROW_TILE = 16
COLS = 64


@dataclass(frozen=True)
class GeluConfig:
    alpha: float = 1.702


@pypto.frontend.jit
def gelu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, COLS], pypto.DT_FP32),
    config: GeluConfig,
):
    rows = x.shape[0]
    alpha = config.alpha
    pypto.set_vec_tile_shapes(ROW_TILE, COLS)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="row_loop", idx_name="i", unroll_list=[1]):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        xt = pypto.view(x, [ROW_TILE, COLS], [i * ROW_TILE, 0], valid_shape=[valid, COLS])  # [ROW_TILE, COLS]
        yt = xt * pypto.sigmoid(xt * alpha)  # [ROW_TILE, COLS]
        pypto.assemble(yt, [i * ROW_TILE, 0], y)


def gelu_wrapper(x, alpha: float = 1.0):
    y = np.empty_like(x)
    gelu_kernel(x, y, GeluConfig(alpha=alpha))
    return y
