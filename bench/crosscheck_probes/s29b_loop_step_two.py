import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([64, 32], pypto.DT_FP32), out: pypto.Tensor([64, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    for i in pypto.loop(0, 4, 2, name="r", idx_name="i"):
        t = pypto.view(x, [16, 32], [i * 16, 0])
        out[i * 16:i * 16 + 16, :] = t * 2.0
x = torch.rand(64, 32); o = torch.zeros(64, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
