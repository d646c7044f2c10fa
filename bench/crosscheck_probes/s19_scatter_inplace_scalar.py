import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(idx: pypto.Tensor([8, 2], pypto.DT_INT32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    m = pypto.full([8, 32], 0.0, pypto.DT_FP32)
    m = pypto.scatter_(m, 1, idx, 1.0)
    out[:] = m
i = torch.randint(0, 32, (8, 2), dtype=torch.int32); o = torch.zeros(8, 32)
try:
    k(i, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
