import torch, pypto
@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), o1: pypto.Tensor([16, 32], pypto.DT_BF16), o2: pypto.Tensor([16, 32], pypto.DT_FP16), o3: pypto.Tensor([16, 32], pypto.DT_INT32)):
    pypto.set_vec_tile_shapes(16, 32)
    b = pypto.cast(x, pypto.DT_BF16)
    h = pypto.cast(pypto.cast(b, pypto.DT_FP32), pypto.DT_FP16)
    i = pypto.cast(x * 100.0, pypto.DT_INT32, pypto.CastMode.CAST_ROUND)
    o3[:] = pypto.cast(pypto.cast(i, pypto.DT_FP32), pypto.DT_INT32)
    o2[:] = h
    o1[:] = b
x = torch.rand(16, 32); a = torch.zeros(16, 32).bfloat16(); b = torch.zeros(16, 32).half(); c = torch.zeros(16, 32, dtype=torch.int32)
try:
    k(x, a, b, c); print("RESULT ok")
except Exception as e:
    print("RESULT", type(e).__name__, str(e)[:300].replace("\n", " | "))
