import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([256], pypto.DT_FP32), out: pypto.Tensor([256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(256)
    out[:] = pypto.exp(x)
x = torch.rand(256); o = torch.zeros(256)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
