import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM, "ready_on_host_tensors": ["off"]})
def k(x: pypto.Tensor([64, 32], pypto.DT_FP32), off: pypto.Tensor([3], pypto.DT_INT32), out: pypto.Tensor([64, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    for e in pypto.loop(2, name="e", idx_name="e"):
        s = off[e]
        t = pypto.view(x, [16, 32], [s, 0])
        out[s:s + 16, :] = t * 2.0
x = torch.rand(64, 32); off = torch.tensor([0, 16, 48], dtype=torch.int32); o = torch.zeros(64, 32)
try:
    k(x, off, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
