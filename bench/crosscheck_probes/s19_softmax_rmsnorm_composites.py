import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), g: pypto.Tensor([32], pypto.DT_FP32), o1: pypto.Tensor([16, 32], pypto.DT_FP32), o2: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    o1[:] = pypto.softmax(x, -1)
    o2[:] = pypto.rms_norm(x, g, epsilon=1e-6)
x = torch.rand(16, 32); g = torch.rand(32); o1 = torch.zeros(16, 32); o2 = torch.zeros(16, 32)
try:
    k(x, g, o1, o2); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
