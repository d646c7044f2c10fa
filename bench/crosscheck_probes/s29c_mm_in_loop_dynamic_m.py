import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(a: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [64, 64], [32, 32])
    pypto.set_vec_tile_shapes(16, 32)
    m = a.shape[0]
    for i in pypto.loop((m + 15) // 16, name="r", idx_name="i"):
        v = (m - i * 16).min(16)
        t = pypto.view(a, [16, 64], [i * 16, 0], valid_shape=[v, 64])
        pypto.assemble(pypto.matmul(t, b, pypto.DT_FP32), [i * 16, 0], out)
a = torch.rand(40, 64); b = torch.rand(64, 32); o = torch.zeros(40, 32)
try:
    k(a, b, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
