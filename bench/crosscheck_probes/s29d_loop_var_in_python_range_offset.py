import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 64)
    for i in range(4):
        t = pypto.view(x, [4, 64], [i * 4, 0])
        pypto.assemble(t * float(i), [i * 4, 0], out)
x = torch.rand(16, 64); o = torch.zeros(16, 64)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
