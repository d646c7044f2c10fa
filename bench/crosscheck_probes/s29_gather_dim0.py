import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), idx: pypto.Tensor([8, 32], pypto.DT_INT32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = pypto.gather(x, 0, idx)
x = torch.rand(16, 32); i = torch.randint(0, 16, (8, 32), dtype=torch.int32); o = torch.zeros(8, 32)
try:
    k(x, i, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
