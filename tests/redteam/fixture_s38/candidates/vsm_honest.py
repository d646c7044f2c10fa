"""vsoftmax (honest): the max of the whole vector first, then the exponentials, their sum and the quotient."""
import pypto
import torch

V = 512
C = 128


@pypto.frontend.jit
def vsoftmax_kernel(
    x: pypto.Tensor([1, V], pypto.DT_FP32),
    y: pypto.Tensor([1, V], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, C)
    m = pypto.amax(pypto.view(x, [1, C], [0, 0]), 1, keepdim=True)
    for j in range(1, V // C):
        m = pypto.maximum(m, pypto.amax(pypto.view(x, [1, C], [0, j * C]), 1, keepdim=True))
    s = pypto.sum(pypto.exp(pypto.sub(pypto.view(x, [1, C], [0, 0]), m)), 1, keepdim=True)
    for j in range(1, V // C):
        s = pypto.add(s, pypto.sum(pypto.exp(pypto.sub(pypto.view(x, [1, C], [0, j * C]), m)), 1, keepdim=True))
    for j in range(V // C):
        xt = pypto.view(x, [1, C], [0, j * C])
        pypto.assemble(pypto.div(pypto.exp(pypto.sub(xt, m)), s), [0, j * C], y)


def vsoftmax_wrapper(x):
    x = x.contiguous().view(1, V)
    y = torch.empty_like(x)
    vsoftmax_kernel(x, y)
    return y.view(V)
