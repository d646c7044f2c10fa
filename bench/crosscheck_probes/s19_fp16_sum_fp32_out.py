import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 64], pypto.DT_FP16), out: pypto.Tensor([16, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    xf = pypto.cast(x, pypto.DT_FP32)
    out[:] = pypto.sum(xf, -1, True)
x = torch.rand(16, 64).half(); o = torch.zeros(16, 1)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
