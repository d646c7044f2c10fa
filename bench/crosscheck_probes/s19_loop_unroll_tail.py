import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    n = x.shape[0]
    for i, f in pypto.loop_unroll(0, n, 1, name="U", idx_name="i", unroll_list=[4, 2, 1]):
        pypto.set_vec_tile_shapes(f, 32)
        t = x[i:i + f, :]
        out[i:i + f, :] = pypto.sigmoid(t)
x = torch.rand(11, 32); o = torch.zeros(11, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
