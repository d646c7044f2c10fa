import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([16, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 16)
    r = pypto.reshape(x, [16, 16], inplace=True)
    out[:] = r * 1.0
x = torch.rand(8, 64); o = torch.zeros(16, 16)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
