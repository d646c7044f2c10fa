import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([2, 8, 32], pypto.DT_FP32), o1: pypto.Tensor([2, 1, 32], pypto.DT_FP32), o2: pypto.Tensor([2, 8, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8, 32)
    o1[:] = pypto.amax(x, 1, keepdim=True)
    o2[:] = pypto.amin(x, dim=-1, keepdim=True)
x = torch.rand(2, 8, 32); a = torch.zeros(2, 1, 32); b = torch.zeros(2, 8, 1)
try:
    k(x, a, b); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
