import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([32, 32], pypto.DT_FP32), idx: pypto.Tensor([4], pypto.DT_INT32), out: pypto.Tensor([4, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.index_select(x, 0, idx)
x = torch.rand(32, 32); i = torch.tensor([1, 5, 9, 30], dtype=torch.int32); o = torch.zeros(4, 32)
try:
    k(x, i, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
