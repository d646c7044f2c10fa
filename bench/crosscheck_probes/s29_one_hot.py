import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([8, 1], pypto.DT_INT32), out: pypto.Tensor([8, 16], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(8, 16)
    out[:] = pypto.one_hot(x, 16)
x = torch.randint(0, 16, (8, 1), dtype=torch.int32); o = torch.zeros(8, 16, dtype=torch.int32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
