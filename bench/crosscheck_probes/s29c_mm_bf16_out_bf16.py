import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([32, 64], pypto.DT_BF16), b: pypto.Tensor([64, 32], pypto.DT_BF16), out: pypto.Tensor([32, 32], pypto.DT_BF16)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    out[:] = pypto.matmul(a, b, pypto.DT_BF16)
a = torch.rand(32, 64).bfloat16(); b = torch.rand(64, 32).bfloat16(); o = torch.zeros(32, 32).bfloat16()
try:
    k(a, b, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
