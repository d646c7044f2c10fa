import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    m = pypto.logical_and(x > 0.2, x < 0.8)
    out[:] = pypto.where(m, 1.0, 0.0)
x = torch.rand(16, 32); o = torch.zeros(16, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
