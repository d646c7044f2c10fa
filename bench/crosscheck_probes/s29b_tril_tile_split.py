import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([64, 64], pypto.DT_FP32), out: pypto.Tensor([64, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.tril(x, 0)
x = torch.rand(64, 64); o = torch.zeros(64, 64)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
