"""Property: the batched fast path is bit-identical to the per-iteration interpreter on random op chains."""

import numpy as np
from _emucorpus import chain_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime.emulator as emu

emu.install()
F32 = np.float32

STEPS = [
    "t = t * 1.5 + 0.25",
    "t = pypto.exp(t * 0.1)",
    "t = t - pypto.amax(t, -1, keepdim=True)",
    "t = t / (pypto.sum(pypto.abs(t), -1, keepdim=True) + 1.0)",
    "t = pypto.cast(pypto.cast(t, pypto.DT_BF16), pypto.DT_FP32)",
    "t = pypto.where(t > 0.0, t, t * 0.5)",
    "t = pypto.maximum(t, 0.1) + pypto.minimum(t, -0.1)",
    "t = pypto.sqrt(pypto.abs(t)) * pypto.rsqrt(pypto.abs(t) + 1.0)",
    "t = t * pypto.sigmoid(t)",
    "t = pypto.softmax(t, -1)",
    "t = pypto.reshape(pypto.reshape(t, [16, 16], inplace=True), [8, 32], inplace=True)",
    "t = pypto.matmul(t, w, pypto.DT_FP32)",
    "t = pypto.tril(t, 1) + pypto.triu(t * 0.5, 2)",
    "t = pypto.transpose(pypto.transpose(t, 0, 1) * 2.0, 0, 1)",
    "t = pypto.permute(pypto.permute(t, [1, 0]) + 1.0, [1, 0])",
    "t = pypto.gathermask(t, 7) - 0.25",
    "t = t + pypto.sum(t, 0)",
]

TEMPLATE = '''
import pypto

@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), w: pypto.Tensor([32, 32], pypto.DT_FP32),
      out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    pypto.set_cube_tile_shapes([8, 8], [32, 32], [32, 32])
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        v = (n - i * 8).min(8)
        t = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[v, 32])
{body}
        pypto.assemble(t, [i * 8, 0], out)
'''


def _kernel(tmp_path, steps: list[int]):
    return chain_kernel(tmp_path, TEMPLATE, [STEPS[s] for s in steps], 8,
                        f"k_{'_'.join(map(str, steps)) or 'id'}")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=5),
       rows=st.sampled_from([32, 40, 61]))
def test_batched_equals_sequential(tmp_path_factory, steps, rows):
    k = _kernel(tmp_path_factory.mktemp("k"), steps)
    r = np.random.default_rng(len(steps) * 100 + rows)
    x = r.standard_normal((rows, 32)).astype(F32)
    w = (r.standard_normal((32, 32)) * 0.2).astype(F32)
    outs = []
    for record in (False, True):
        out = np.zeros_like(x)
        with emu.session(emu.Options(record=record)) as s:
            k(x, w, out)
        outs.append((out, s.counters))
    (fast, cf), (slow, cs) = outs
    assert fast.tobytes() == slow.tobytes(), steps
    assert cs.batched_iterations == 0
    assert cf.batched_iterations == rows // 8  # every full tile went through the batch
    assert cf.model_dump(exclude={"batched_iterations"}) == cs.model_dump(exclude={"batched_iterations"})
