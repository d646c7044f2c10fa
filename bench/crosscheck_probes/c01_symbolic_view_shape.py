import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([4, 16, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 16, 16)
    for idx in pypto.loop(4):
        t = pypto.view(x, [1, idx + 1, 16], [idx, 0, 0])
        pypto.assemble(t, [idx, 0, 0], out)
x = torch.ones(4, 16, 16); o = torch.zeros(4, 16, 16)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
