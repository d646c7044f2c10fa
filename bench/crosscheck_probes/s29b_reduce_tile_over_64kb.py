import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([128, 256], pypto.DT_FP32), out: pypto.Tensor([128, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(128, 256)
    out[:] = pypto.sum(x, -1, keepdim=True)
x = torch.rand(128, 256); o = torch.zeros(128, 1)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
