import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), idx: pypto.Tensor([8, 4], pypto.DT_INT32), s: pypto.Tensor([8, 4], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.scatter(x, 1, idx, s, reduce="multiply")
x = torch.rand(8, 32); i = torch.randint(0, 32, (8, 4), dtype=torch.int32); s = torch.rand(8, 4); o = torch.zeros(8, 32)
try:
    k(x, i, s, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
