import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    t = pypto.tensor([16, 32], pypto.DT_FP32, "t")
    pypto.assemble(pypto.view(x, [8, 32], [0, 0]) * 1.0, [0, 0], t)
    out[:] = t + 1.0
x = torch.rand(16, 32); o = torch.zeros(16, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
