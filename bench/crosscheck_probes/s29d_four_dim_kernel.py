import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([2, 2, 8, 32], pypto.DT_FP32), out: pypto.Tensor([2, 2, 8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 1, 8, 32)
    out[:] = pypto.sigmoid(x)
x = torch.rand(2, 2, 8, 32); o = torch.zeros(2, 2, 8, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
