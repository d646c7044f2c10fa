import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 64)
    for i in pypto.loop(2, name="r", idx_name="i"):
        for j in range(2):
            t = pypto.view(x, [4, 64], [i * 8 + j * 4, 0])
            pypto.set_vec_tile_shapes(4, 64)
            pypto.assemble(t + 1.0, [i * 8 + j * 4, 0], out)
x = torch.rand(16, 64); o = torch.zeros(16, 64)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
