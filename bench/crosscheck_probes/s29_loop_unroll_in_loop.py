import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([4, pypto.DYNAMIC, 32], pypto.DT_FP32), out: pypto.Tensor([4, pypto.DYNAMIC, 32], pypto.DT_FP32)):
    n = x.shape[1]
    for b in pypto.loop(4, name="b", idx_name="b"):
        for i, f in pypto.loop_unroll(0, n, 1, name="U", idx_name="i", unroll_list=[8, 4, 1]):
            pypto.set_vec_tile_shapes(1, f, 32)
            t = pypto.view(x, [1, f, 32], [b, i, 0])
            out[b:b + 1, i:i + f, :] = t * 3.0
x = torch.rand(4, 13, 32); o = torch.zeros(4, 13, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
