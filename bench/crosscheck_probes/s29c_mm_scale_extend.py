import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([32, 64], pypto.DT_INT8), b: pypto.Tensor([64, 32], pypto.DT_INT8), out: pypto.Tensor([32, 32], pypto.DT_FP16)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    out[:] = pypto.matmul(a, b, pypto.DT_FP16, extend_params={"scale": 0.5})
a = torch.randint(-3, 3, (32, 64), dtype=torch.int8); b = torch.randint(-3, 3, (64, 32), dtype=torch.int8); o = torch.zeros(32, 32).half()
try:
    k(a, b, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
