"""Control: fid = slot * 2^24 + hid computed in int32 on the vector unit."""
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
        st = pypto.view(slot, [ROW_TILE, F], [i * ROW_TILE, 0], valid_shape=[valid, F])
        ht = pypto.view(hid, [ROW_TILE, F], [i * ROW_TILE, 0], valid_shape=[valid, F])
        pypto.assemble(pypto.add(pypto.mul(st, 16777216), ht), [i * ROW_TILE, 0], fid)


def fid_pack_wrapper(slot, hid):
    fid = torch.empty_like(slot)
    fid_kernel(slot.contiguous(), hid.contiguous(), fid)
    return fid
