import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), idx: pypto.Tensor([4], pypto.DT_INT32), s: pypto.Tensor([4, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    t = pypto.clone(x)
    pypto.index_add_(t, 0, idx, s, alpha=2.0)
    out[:] = t
x = torch.rand(16, 32); i = torch.tensor([1, 3, 5, 7], dtype=torch.int32); s = torch.rand(4, 32); o = torch.zeros(16, 32)
try:
    k(x, i, s, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
