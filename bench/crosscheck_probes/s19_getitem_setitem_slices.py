import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([32, 64], pypto.DT_FP32), out: pypto.Tensor([32, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    for i in pypto.loop(2):
        a = x[i * 16:(i + 1) * 16, 0:32]
        b = x[i * 16:(i + 1) * 16, 32:64]
        out[i * 16:(i + 1) * 16, 0:32] = b
        out[i * 16:(i + 1) * 16, 32:64] = a
x = torch.rand(32, 64); o = torch.zeros(32, 64)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
