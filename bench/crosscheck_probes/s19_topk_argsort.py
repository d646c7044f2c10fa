import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), v: pypto.Tensor([8, 4], pypto.DT_FP32), i: pypto.Tensor([8, 4], pypto.DT_INT32), s: pypto.Tensor([8, 32], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(8, 32)
    val, idx = pypto.topk(x, 4, -1, True)
    v[:] = val
    i[:] = idx
    s[:] = pypto.argsort(x, -1, descending=True)
x = torch.rand(8, 32); v = torch.zeros(8, 4); i = torch.zeros(8, 4, dtype=torch.int32); s = torch.zeros(8, 32, dtype=torch.int32)
try:
    k(x, v, i, s); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
