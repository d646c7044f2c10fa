import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 32)
    n = x.shape[0]
    for i in pypto.loop(1, n):
        t = pypto.view(x, [1, 32], [i, 0])
        pypto.assemble(t + 1.0, [i, 0], out)
    for j in pypto.loop(1):
        t0 = pypto.view(x, [1, 32], [0, 0])
        pypto.assemble(t0 * 1.0, [0, 0], out)
x = torch.rand(5, 32); o = torch.zeros(5, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
