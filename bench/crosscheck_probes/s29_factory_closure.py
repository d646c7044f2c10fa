import torch, pypto
def make(D, T):
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(T, D)
        n = x.shape[0]
        for i in pypto.loop(n // T, name="r", idx_name="i"):
            t = pypto.view(x, [T, D], [i * T, 0])
            out[i * T:i * T + T, :] = pypto.sigmoid(t)
    return k
k = make(64, 8)
x = torch.rand(32, 64); o = torch.zeros(32, 64)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
