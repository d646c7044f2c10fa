"""fid = slot * 2^24 + hid, computed the way the float kernels of this code base are written: cast the
operands to FP32, compute, cast the result back. slot * 2^24 is exact in fp32; the add rounds once, so for
slot >= 1 the low bits of hid are lost (fid off by up to 32 for slot >= 32)."""
import pypto
import torch

ROW_TILE = 16
F = 32


@pypto.frontend.jit
def fid_kernel(
    slot: pypto.Tensor([pypto.DYNAMIC, F], pypto.DT_INT32),
    hid: pypto.Tensor([pypto.DYNAMIC, F], pypto.DT_INT32),
    fid: pypto.Tensor([pypto.DYNAMIC, F], pypto.DT_INT32),
):
    rows = slot.shape[0]
    pypto.set_vec_tile_shapes(ROW_TILE, F)
    for i in pypto.loop(pypto.ceildiv(rows, ROW_TILE), name="rows", idx_name="i"):
        valid = (rows - i * ROW_TILE).min(ROW_TILE)
        st = pypto.cast(pypto.view(slot, [ROW_TILE, F], [i * ROW_TILE, 0], valid_shape=[valid, F]), pypto.DT_FP32)
        ht = pypto.cast(pypto.view(hid, [ROW_TILE, F], [i * ROW_TILE, 0], valid_shape=[valid, F]), pypto.DT_FP32)
        yf = pypto.add(pypto.mul(st, 16777216.0), ht)
        pypto.assemble(pypto.cast(yf, pypto.DT_INT32, pypto.CastMode.CAST_RINT), [i * ROW_TILE, 0], fid)


def fid_pack_wrapper(slot, hid):
    fid = torch.empty_like(slot)
    fid_kernel(slot.contiguous(), hid.contiguous(), fid)
    return fid
