import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([4, 8, 32], pypto.DT_FP32), out: pypto.Tensor([4, 1, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 8, 32)
    for b in pypto.loop(4):
        acc = pypto.tensor([1, 1, 32], pypto.DT_FP32, "acc")
        for j in pypto.loop(2):
            t = pypto.view(x, [1, 4, 32], [b, j * 4, 0])
            s = pypto.sum(t, 1, keepdim=True)
            if pypto.is_loop_begin(j):
                acc[:] = s
            else:
                acc[:] = acc + s
        pypto.assemble(acc, [b, 0, 0], out)
x = torch.rand(4, 8, 32); o = torch.zeros(4, 1, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
