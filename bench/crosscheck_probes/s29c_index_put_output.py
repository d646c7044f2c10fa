import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), idx: pypto.Tensor([4], pypto.DT_INT64), v: pypto.Tensor([4, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = x * 1.0
    pypto.index_put_(out, (idx,), v)
x = torch.rand(16, 32); i = torch.tensor([0, 2, 4, 6]); v = torch.rand(4, 32); o = torch.zeros(16, 32)
try:
    k(x, i, v, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
