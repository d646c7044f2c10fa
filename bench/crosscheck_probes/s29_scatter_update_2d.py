import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(cache: pypto.Tensor([16, 32], pypto.DT_FP32), idx: pypto.Tensor([2, 2], pypto.DT_INT64), src: pypto.Tensor([4, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = pypto.scatter_update(cache, -2, idx, src)
c = torch.rand(16, 32); i = torch.tensor([[1, 3], [5, 7]], dtype=torch.int64); s = torch.rand(4, 32); o = torch.zeros(16, 32)
try:
    k(c, i, s, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
