import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([64, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    acc = pypto.tensor([16, 32], pypto.DT_FP32, "acc")
    for i in pypto.loop(4, name="r", idx_name="i"):
        t = pypto.view(x, [16, 32], [i * 16, 0])
        if pypto.is_loop_begin(i):
            acc[:] = t
        else:
            acc[:] = acc + t
        if pypto.is_loop_end(i):
            out[:] = acc * 0.25
x = torch.rand(64, 32); o = torch.zeros(16, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
