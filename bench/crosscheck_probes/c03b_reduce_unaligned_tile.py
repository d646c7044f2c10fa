import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([1, 8, 3], pypto.DT_FP32), out: pypto.Tensor([1, 8, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8, 3)
    out[:] = pypto.sum(x, -1, keepdim=True)
x = torch.ones(1, 8, 3); o = torch.zeros(1, 8, 1)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
