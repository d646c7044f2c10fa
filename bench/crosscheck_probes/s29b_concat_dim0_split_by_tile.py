import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([8, 32], pypto.DT_FP32), b: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.concat([a, b], 0)
a = torch.rand(8, 32); b = torch.rand(8, 32); o = torch.zeros(16, 32)
try:
    k(a, b, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
