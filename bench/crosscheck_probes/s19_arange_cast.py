import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(out: pypto.Tensor([32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32)
    a = pypto.arange(0, 32)
    out[:] = pypto.cast(a, pypto.DT_FP32) * 0.5
o = torch.zeros(32)
try:
    k(o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
