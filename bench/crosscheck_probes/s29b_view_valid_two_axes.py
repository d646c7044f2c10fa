import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    m, n = x.shape[0], x.shape[1]
    for i in pypto.loop((m + 7) // 8, name="r", idx_name="i"):
        for j in pypto.loop((n + 31) // 32, name="c", idx_name="j"):
            vm = (m - i * 8).min(8)
            vn = (n - j * 32).min(32)
            t = pypto.view(x, [8, 32], [i * 8, j * 32], valid_shape=[vm, vn])
            pypto.assemble(t * 3.0, [i * 8, j * 32], out)
x = torch.rand(13, 40); o = torch.zeros(13, 40)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
