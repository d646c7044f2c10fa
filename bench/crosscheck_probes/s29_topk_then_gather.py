import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 4], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    vals, idx = pypto.topk(x, 4, -1)
    out[:] = pypto.gather(y, 1, idx) + vals
x = torch.rand(8, 32); y = torch.rand(8, 32); o = torch.zeros(8, 4)
try:
    k(x, y, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
