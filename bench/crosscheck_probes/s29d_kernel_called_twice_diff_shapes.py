import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    n = x.shape[0]
    for i in pypto.loop(n // 16, name="r", idx_name="i"):
        t = pypto.view(x, [16, 64], [i * 16, 0])
        out[i * 16:i * 16 + 16, :] = t * 2.0
x = torch.rand(32, 64); o = torch.zeros(32, 64); k(torch.rand(16, 64), torch.zeros(16, 64))
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
