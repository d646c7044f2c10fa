import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), idx: pypto.Tensor([8, 4], pypto.DT_INT32), out: pypto.Tensor([8, 4], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.gather(x, 1, idx)
x = torch.rand(8, 64); i = torch.randint(0, 64, (8, 4), dtype=torch.int32); o = torch.zeros(8, 4)
try:
    k(x, i, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
