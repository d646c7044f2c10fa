import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(out: pypto.Tensor([16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16)
    out[:] = pypto.arange(0.0, 8.0, 0.5)
o = torch.zeros(16)
try:
    k(o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
