import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([8, 16], pypto.DT_FP32), b: pypto.Tensor([8, 16], pypto.DT_FP32), c: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    out[:] = pypto.concat([a, b, c], -1)
a = torch.rand(8, 16); b = torch.rand(8, 16); c = torch.rand(8, 32); o = torch.zeros(8, 64)
try:
    k(a, b, c, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
