"""Control: y = 2 x in fp32, cast to fp16 on the host for ``out="half"`` (a str attribute naming the output dtype:
verification leaves that value out, golden's output dtype differing from the SPEC's)."""
import pypto
import torch

TILE = 16
V = 256


@pypto.frontend.jit
def scale_out_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, V)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, V], [i * TILE, 0], valid_shape=[valid, V])
        pypto.assemble(pypto.mul(xt, 2.0), [i * TILE, 0], y)


def scale_out_wrapper(x, out):
    if out not in ("same", "half"):
        raise ValueError(f"unknown out {out!r}")
    x = x.contiguous()
    y = torch.empty_like(x)
    scale_out_kernel(x, y)
    return y.half() if out == "half" else y
