import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([1, 64], pypto.DT_FP32), out: pypto.Tensor([1, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    out[:] = x + pypto.cast(pypto.arange(64), pypto.DT_FP32)
x = (torch.rand(1, 64) * 4 - 2); o = torch.zeros(1, 64)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
