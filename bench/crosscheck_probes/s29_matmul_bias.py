import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 48], pypto.DT_FP32), bias: pypto.Tensor([1, 48], pypto.DT_FP32), out: pypto.Tensor([32, 48], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [48, 48])
    pypto.set_vec_tile_shapes(32, 48)
    out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={"bias_tensor": bias})
a = torch.rand(32, 64); b = torch.rand(64, 48); bb = torch.rand(1, 48); o = torch.zeros(32, 48)
try:
    k(a, b, bb, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
