import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.argsort(x, -1, descending=True)
x = torch.rand(8, 32); o = torch.zeros(8, 32, dtype=torch.int32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
