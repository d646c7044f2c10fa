import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([2, 2, 8, 8], pypto.DT_FP16), out: pypto.Tensor([2, 2, 8, 1], pypto.DT_FP16)):
    pypto.set_vec_tile_shapes(1, 2, 8, 8)
    out[:] = pypto.amax(x, -1, keepdim=True)
x = torch.rand(2, 2, 8, 8).half(); o = torch.zeros(2, 2, 8, 1).half()
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
