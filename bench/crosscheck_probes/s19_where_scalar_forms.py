import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    c = pypto.lt(x, 0.5)
    t = pypto.where(c, 0.0, x)
    out[:] = pypto.where(pypto.ge(t, 0.25), t, -1.0)
x = torch.rand(16, 32); o = torch.zeros(16, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
