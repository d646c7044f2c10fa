import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, 8, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 8, 1], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8, 32)
    n = x.shape[0]
    for i in pypto.loop((n + 3) // 4, name="rows", idx_name="i"):
        v = (n - i * 4).min(4)
        t = pypto.view(x, [4, 8, 32], [i * 4, 0, 0], valid_shape=[v, 8, 32])
        out[i * 4:i * 4 + 4, :, :] = pypto.sum(t, -1, keepdim=True)
x = torch.rand(10, 8, 32); o = torch.zeros(10, 8, 1)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
