import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32), out: pypto.Tensor([32, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(32, 32)
    out[:] = pypto.matmul(a, b, pypto.DT_FP32, extend_params={"relu_type": pypto.ReLuType.RELU})
a = torch.randn(32, 64); b = torch.randn(64, 32); o = torch.zeros(32, 32)
try:
    k(a, b, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
