import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([32, 32], pypto.DT_FP32), out: pypto.Tensor([32, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    acc = pypto.tensor([32, 32], pypto.DT_FP32, "acc")
    for i in pypto.loop(2, name="r", idx_name="i"):
        t = pypto.view(x, [16, 32], [i * 16, 0])
        pypto.assemble(t * 2.0, [i * 16, 0], acc)
    out[:] = acc + 1.0
x = torch.rand(32, 32); o = torch.zeros(32, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
