import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 64], pypto.DT_BF16), out: pypto.Tensor([16, 1], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(16, 64)
    out[:] = pypto.amax(x, -1, keepdim=True)
x = (torch.rand(16, 64) * 4 - 2).bfloat16(); o = torch.zeros(16, 1).bfloat16()
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
