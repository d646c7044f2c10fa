import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([2, 4, 8], pypto.DT_FP32), y: pypto.Tensor([1, 1, 8], pypto.DT_FP32), out: pypto.Tensor([2, 4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 4, 8)
    out[:] = x + y
x = torch.ones(2, 4, 8); y = torch.ones(1, 1, 8); o = torch.zeros(2, 4, 8)
try:
    k(x, y, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
