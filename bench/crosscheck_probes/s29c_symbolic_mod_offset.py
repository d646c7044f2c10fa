import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    n = x.shape[0]
    for i in pypto.loop(n // 16, name="r", idx_name="i"):
        j = (i + 1) % (n // 16)
        t = pypto.view(x, [16, 32], [j * 16, 0])
        pypto.assemble(t * 2.0, [i * 16, 0], out)
x = torch.rand(64, 32); o = torch.zeros(64, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
