import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP16), out: pypto.Tensor([16, 32], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(16, 32)
    out[:] = pypto.reciprocal(pypto.rsqrt(x + 1.0))
x = torch.rand(16, 32).half(); o = torch.zeros(16, 32).half()
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
