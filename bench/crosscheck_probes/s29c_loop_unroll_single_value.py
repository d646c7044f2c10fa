import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    n = x.shape[0]
    for i, f in pypto.loop_unroll(0, n, 8, name="U", idx_name="i", unroll_list=[8]):
        pypto.set_vec_tile_shapes(8, 32)
        t = pypto.view(x, [8, 32], [i, 0])
        pypto.assemble(t * 2.0, [i, 0], out)
x = torch.rand(32, 32); o = torch.zeros(32, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
