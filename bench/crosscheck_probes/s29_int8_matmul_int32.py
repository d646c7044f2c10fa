import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([32, 64], pypto.DT_INT8), b: pypto.Tensor([64, 32], pypto.DT_INT8), out: pypto.Tensor([32, 32], pypto.DT_INT32)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    out[:] = pypto.matmul(a, b, pypto.DT_INT32)
a = torch.randint(-5, 5, (32, 64), dtype=torch.int8); b = torch.randint(-5, 5, (64, 32), dtype=torch.int8); o = torch.zeros(32, 32, dtype=torch.int32)
try:
    k(a, b, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
