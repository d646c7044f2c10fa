import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(2):
        t = pypto.view(input=x, shape=[8, 32], offsets=[i * 8, 0])
        m = pypto.amax(input=t, dim=-1, keepdim=True)
        e = pypto.exp(input=pypto.sub(input=t, other=m))
        s = pypto.sum(input=e, dim=-1, keepdim=True)
        pypto.assemble(pypto.div(e, s), [i * 8, 0], out)
x = torch.rand(16, 32); o = torch.zeros(16, 32)
try:
    k(x, o); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
