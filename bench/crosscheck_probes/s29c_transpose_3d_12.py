import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([4, 16, 32], pypto.DT_FP32), out: pypto.Tensor([4, 32, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 16, 32)
    out[:] = pypto.transpose(x, 1, 2)
x = (torch.rand(4, 16, 32) * 4 - 2); o = torch.zeros(4, 32, 16)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
