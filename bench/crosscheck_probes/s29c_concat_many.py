import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 128], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 128)
    out[:] = pypto.concat([a, a, a, a, a, a, a, a], 1)
a = torch.rand(8, 16); o = torch.zeros(8, 128)
try:
    k(a, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
