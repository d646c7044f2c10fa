"""A unary op whose result only the next assemble reads computes the valid part of partial tiles alone
(`device._batch._run_op(boxed=True)`, `Env.box`): the same bits as computing whole padded tiles.

The shape of the case is the gym sigmoid's decode call (1 valid row of 16-row tiles); also a partial last axis
and a last tile of another valid shape (run on its own)."""

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator.device import _batch

TB, TD = 16, 512
FNS = ["sigmoid", "exp", "sqrt", "abs", "rsqrt", "neg", "reciprocal", "tanh"]


def _kernel(fn: str, rows: bool = False):
    """sigmoid_impl's loop nest (``rows``: one loop over rows, a tile wider than the row: a partial last axis)."""
    pypto = emu.install()
    dyn = pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)

    @pypto.frontend.jit
    def tiles(x: dyn, out: dyn):
        B, D = x.shape[0], x.shape[1]
        pypto.set_vec_tile_shapes(TB, TD)
        for b_idx in pypto.loop((B + TB - 1) // TB, name="loop_b", idx_name="b_idx"):
            for d_idx in pypto.loop((D + TD - 1) // TD, name="loop_d", idx_name="d_idx"):
                vb = (B - b_idx * TB).min(TB)
                vd = (D - d_idx * TD).min(TD)
                t = pypto.view(x, [TB, TD], [b_idx * TB, d_idx * TD], valid_shape=[vb, vd])
                out[b_idx * TB:, d_idx * TD:] = getattr(pypto, fn)(t)

    @pypto.frontend.jit
    def by_row(x: dyn, out: dyn):
        B, D = x.shape[0], x.shape[1]
        pypto.set_vec_tile_shapes(1, TD)
        for b_idx in pypto.loop(B, name="loop_b", idx_name="b_idx"):
            t = pypto.view(x, [1, TD], [b_idx, 0], valid_shape=[1, D])
            out[b_idx:, 0:] = getattr(pypto, fn)(t)

    return by_row if rows else tiles


def _run(fn: str, x: np.ndarray, monkeypatch, boxed: bool) -> tuple[bytes, int]:
    n = [0]
    orig = _batch._run_op

    def spy(b, it, boxed_: bool = False, **kw):
        boxed_ = kw.get("boxed", boxed_)
        n[0] += boxed_
        return orig(b, it, boxed_ and boxed)
    monkeypatch.setattr(_batch, "_run_op", spy)
    out = np.zeros_like(x)
    with emu.session() as s:
        _kernel(fn, rows=x.shape[1] < TD)(x, out)
    monkeypatch.undo()
    assert not [d for d in s.diagnostics if d.severity == "error"], s.diagnostics
    return out.tobytes(), n[0]


@pytest.mark.parametrize("fn", FNS)
@pytest.mark.parametrize("shape", [(1, 4096), (6, 300), (1, 3996)],
                         ids=["decode", "partial-last-axis", "decode-tail"])
def test_the_valid_part_alone_gives_the_same_bits(fn, shape, monkeypatch):
    r = np.random.default_rng(7)
    x = (r.standard_normal(shape) * 4).astype(np.float32)
    if fn in ("sqrt", "rsqrt"):
        x = np.abs(x)
    x.ravel()[::97] = np.float32(0.0)
    got, boxed = _run(fn, x, monkeypatch, boxed=True)
    want, _ = _run(fn, x, monkeypatch, boxed=False)
    assert got == want
    assert boxed >= 1  # the path under test was taken
    with np.errstate(all="ignore"):
        ref = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "exp": np.exp, "sqrt": np.sqrt, "abs": np.abs,
               "rsqrt": lambda v: 1 / np.sqrt(v), "neg": np.negative, "reciprocal": np.reciprocal,
               "tanh": np.tanh}[fn](x)
    assert np.frombuffer(got, np.float32).reshape(shape).tobytes() == ref.astype(np.float32).tobytes()
