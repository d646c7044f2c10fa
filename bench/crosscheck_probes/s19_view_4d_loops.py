import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([2, 4, 16, 32], pypto.DT_FP32), out: pypto.Tensor([2, 4, 16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 2, 16, 32)
    for b in pypto.loop(2):
        for h in pypto.loop(0, 4, 2):
            t = pypto.view(x, [1, 2, 16, 32], [b, h, 0, 0])
            pypto.assemble(t * 2.0, [b, h, 0, 0], out)
x = torch.rand(2, 4, 16, 32); o = torch.zeros(2, 4, 16, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
