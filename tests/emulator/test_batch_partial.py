"""Batched tiles with a partial valid shape (sigmoid's 1 x 16384 in 16 x 512 tiles: one valid row of 16) give
the bytes, counters, errors and warnings of the per-iteration interpreter (which ``record=True`` forces)."""

import numpy as np
import pytest
from _emucorpus import chain_kernel
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime.emulator as emu
from runtime.emulator._buffers import POISON_BITS

pypto = emu.install()
F32 = np.float32
TB, TD = 8, 32


@pypto.frontend.jit
def sig(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
        out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    """The gym's sigmoid kernel, smaller tiles: a window of TB rows over fewer rows leaves its source."""
    b, d = x.shape[0], x.shape[1]
    pypto.set_vec_tile_shapes(TB, TD)
    for bi in pypto.loop((b + TB - 1) // TB):
        for di in pypto.loop((d + TD - 1) // TD):
            vb = (b - bi * TB).min(TB)
            vd = (d - di * TD).min(TD)
            t = pypto.view(x, [TB, TD], [bi * TB, di * TD], valid_shape=[vb, vd])
            out[bi * TB:, di * TD:] = pypto.sigmoid(t)


def _both(kernel, args):
    """(bytes of every argument, counters but batched_iterations, error, warnings) batched and per-iteration,
    and the batched run's batched_iterations."""
    got = []
    batched = None
    for record in (False, True):
        a = [x.copy() for x in args]
        err = None
        with emu.session(emu.Options(record=record)) as s:
            try:
                kernel(*a)
            except emu.EmulatorError as e:
                err = (e.code, e.message, e.line)
        c = s.counters
        if not record:
            batched = c.batched_iterations
        else:
            assert c.batched_iterations == 0
        got.append(([x.tobytes() for x in a], c.model_dump(exclude={"batched_iterations"}), err,
                    [(w.code, w.message, w.line) for w in s.warnings]))
    assert got[0] == got[1]
    return got[0], batched


@pytest.mark.parametrize("shape", [(1, 256), (3, 320), (8, 256), (9, 256), (1, 300)])
def test_partial_rows_batch_and_match(shape):
    x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(F32)
    (outs, _, err, _), batched = _both(sig, [x, np.zeros_like(x)])
    assert err is None
    out = np.frombuffer(outs[1], F32).reshape(shape)
    np.testing.assert_allclose(out, 1 / (1 + np.exp(-x)), rtol=1e-6)
    full_d = shape[1] // TD  # the leading run of tiles with one valid shape; a narrower last tile runs alone
    rows = (shape[0] + TB - 1) // TB
    assert batched == rows * full_d if full_d >= 4 else batched == 0


@pypto.frontend.jit
def cols(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
         out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    """Rows of tiles whose window is wider than the tensor (valid columns < TD): poison columns, a reduction
    over the rows (whole), an elementwise chain, the valid box written back."""
    b, d = x.shape[0], x.shape[1]
    pypto.set_vec_tile_shapes(TB, TD)
    for bi in pypto.loop(b // TB):
        t = pypto.view(x, [TB, TD], [bi * TB, 0], valid_shape=[TB, d])
        s = pypto.sum(t, 0, keepdim=True)
        u = pypto.where(t > 0.0, t * 2.0, pypto.exp(t)) - s
        out[bi * TB:, 0:] = pypto.cast(pypto.cast(u, pypto.DT_BF16), pypto.DT_FP32)


def test_partial_columns_with_poison_padding_batch_and_match():
    x = np.random.default_rng(5).standard_normal((64, 20)).astype(F32)
    (outs, _, err, _), batched = _both(cols, [x, np.zeros_like(x)])
    assert err is None and batched == 8
    assert np.isfinite(np.frombuffer(outs[1], F32)).all()  # the poison columns were not written


@pypto.frontend.jit
def row_sum(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
            out: pypto.Tensor([pypto.DYNAMIC, 1], pypto.DT_FP32)):
    """A sum over a partially valid axis: the per-iteration op sums the valid columns only - not batched."""
    b, d = x.shape[0], x.shape[1]
    pypto.set_vec_tile_shapes(TB, TD)
    acc = pypto.tensor([64, 1], pypto.DT_FP32, "acc")  # a local: no poison check that would also fall back
    for bi in pypto.loop(b // TB):
        t = pypto.view(x, [TB, TD], [bi * TB, 0], valid_shape=[TB, d])
        pypto.assemble(pypto.sum(t * 1.0, -1, keepdim=True), [bi * TB, 0], acc)
    pypto.set_vec_tile_shapes(64, 1)
    out[:] = acc * 1.0


def test_reduction_over_a_partial_axis_is_refused_once_and_runs_per_iteration():
    x = np.random.default_rng(6).standard_normal((64, 20)).astype(F32)
    for _ in range(2):  # the second call does not try the batch again (`BatchPlan.refused`)
        (outs, _, err, _), batched = _both(row_sum, [x, np.zeros((64, 1), F32)])
        assert err is None and batched == 0
        np.testing.assert_allclose(np.frombuffer(outs[1], F32), x.sum(1), rtol=1e-5)


@pypto.frontend.jit
def stale(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
          out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    """Tiles of a local whose rows 2.. were never written, read with a valid shape of 4 rows: poison in the
    valid box reaches the output - the same EMU_POISON error, iteration and line both ways."""
    b, d = x.shape[0], x.shape[1]
    pypto.set_vec_tile_shapes(TB, TD)
    t = pypto.tensor([TB, 256], pypto.DT_FP32, "t")
    pypto.assemble(pypto.view(x, [2, 256], [0, 0]), [0, 0], t)
    for di in pypto.loop(d // TD):
        v = pypto.view(t, [TB, TD], [0, di * TD], valid_shape=[4, TD])
        out[0:, di * TD:] = v + 1.0


def test_poison_in_the_valid_box_fails_the_same_way():
    x = np.random.default_rng(7).standard_normal((4, 256)).astype(F32)
    (_, _, err, _), _ = _both(stale, [x, np.zeros_like(x)])
    assert err is not None and err[0] == "EMU_POISON"


STEPS = [
    "t = t * 1.5 + 0.25",
    "t = pypto.exp(t * 0.1)",
    "t = t - pypto.amax(t, -1, keepdim=True)",
    "t = t / (pypto.sum(pypto.abs(t), 0, keepdim=True) + 1.0)",
    "t = pypto.cast(pypto.cast(t, pypto.DT_BF16), pypto.DT_FP32)",
    "t = pypto.where(t > 0.0, t, t * 0.5)",
    "t = pypto.maximum(t, 0.1) + pypto.minimum(t, -0.1)",
    "t = pypto.sqrt(pypto.abs(t)) * pypto.rsqrt(pypto.abs(t) + 1.0)",
    "t = t * pypto.sigmoid(t)",
    "t = pypto.softmax(t, -1)",
    "t = pypto.softmax(t, 0)",
    "t = pypto.matmul(t, w, pypto.DT_FP32)",
    "t = t + pypto.sum(t, 0)",
    "t = pypto.tril(t, 1) + 1.0",
]

TEMPLATE = '''
import pypto

@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32), w: pypto.Tensor([32, 32], pypto.DT_FP32),
      out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    pypto.set_cube_tile_shapes([8, 8], [32, 32], [32, 32])
    b, d = x.shape[0], x.shape[1]
    for bi in pypto.loop((b + 7) // 8):
        for di in pypto.loop((d + 31) // 32):
            vb = (b - bi * 8).min(8)
            vd = (d - di * 32).min(32)
            t = pypto.view(x, [8, 32], [bi * 8, di * 32], valid_shape=[vb, vd])
{body}
            out[bi * 8:, di * 32:] = t
'''


def _kernel(tmp_path, steps: list[int]):
    return chain_kernel(tmp_path, TEMPLATE, [STEPS[s] for s in steps], 12,
                        f"kp_{'_'.join(map(str, steps)) or 'id'}")


@settings(max_examples=25, deadline=None, derandomize=True)
@given(steps=st.lists(st.integers(0, len(STEPS) - 1), min_size=1, max_size=4),
       shape=st.sampled_from([(1, 160), (5, 128), (8, 20), (16, 150), (3, 20)]))
def test_partial_batched_equals_sequential(tmp_path_factory, steps, shape):
    """Random chains over tiles with partial rows, partial columns (the window wider than the tensor: poison
    padding) or both: the same bytes, counters, errors and warnings as per iteration."""
    k = _kernel(tmp_path_factory.mktemp("k"), steps)
    r = np.random.default_rng(len(steps) * 100 + sum(shape))
    x = r.standard_normal(shape).astype(F32)
    w = (r.standard_normal((32, 32)) * 0.2).astype(F32)
    (outs, _, _, _), _ = _both(k, [x, w, np.zeros_like(x)])
    bits = np.frombuffer(outs[2], np.uint32)
    assert not np.any((bits & 0x7FFF0000) == (POISON_BITS & 0x7FFF0000))  # padding never reached the output


def test_float32_poison_is_one_array_with_the_payload():
    """A padded tile's poison is allocated once (no converted second copy: fresh memory costs page faults)."""
    from runtime.emulator._buffers import is_poison, poison_array

    p = poison_array((16, 512), np.dtype(F32))
    assert p.dtype == F32 and p.flags.owndata and p.flags.c_contiguous and p.flags.writeable
    assert (p.view(np.uint32) == POISON_BITS).all() and is_poison(p) == p.size
