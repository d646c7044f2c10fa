import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 64], pypto.DT_UINT8), out: pypto.Tensor([16, 64], pypto.DT_UINT8)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = x + x
x = torch.randint(0, 100, (16, 64), dtype=torch.uint8); o = torch.zeros(16, 64, dtype=torch.uint8)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
