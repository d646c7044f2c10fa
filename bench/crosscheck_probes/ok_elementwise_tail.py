import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    n = x.shape[0]
    for i in pypto.loop((n + 7) // 8):
        v = (n - i * 8).min(8)
        t = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[v, 32])
        pypto.assemble(pypto.exp(t), [i * 8, 0], out)
x = torch.ones(13, 32); o = torch.zeros(13, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
