import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), v: pypto.Tensor([8, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    val, _ = pypto.topk(x, 0, -1, True)
    v[:] = val
x = torch.rand(8, 32); v = torch.zeros(8, 1)
try:
    k(x, v); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
