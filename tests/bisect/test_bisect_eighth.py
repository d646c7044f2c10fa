"""What the eighth gym corpus (``gym_corpus_eighth``, session 38) found bisect naming wrong, on small kernels.

* a reduction over the wrong axis whose result is then moved into a state of lower rank (``ts = pypto.sum(r,
  dim=0, keepdim=True)`` is ``[1, 64]``, ``tsum[:] = ts`` wants ``[1]``): the move that raised was named. Now
  (``_rules._axis_the_shapes_want``) the two shapes are compared right-aligned, and the reduction is named;
* a local constant that sets a tile's width (``W = 128`` for 256, s37's ``C = 32`` for 64): a band of every row is
  never written and the write was named (its own values match: a false claim). Now (``_rules.coverage_gap``) when no
  loop moves the writes along the short axis, the local the view's shape takes there is named;
* a tail bound one short in a view copied into a local tensor (``s2_end = pypto.min(s2_start + S2_TILE - 1, Skv)``):
  the uncopied row is poison, the matmul reading it made NaN and was named. Now (``_rules.short_valid_source``) a
  view whose valid extent is shorter than the data its source holds there is followed to the clamp of its bound;
* a kernel argument the wrapper prepares wrong (gqa_decode_attn's V heads summed, not averaged, in a helper): the
  first kernel op reading it was named. Now (``api._prepared_argument``) an argument built from a host local named
  like a golden intermediate, not holding its data, and repaired by it in a replay names the line computing it.
"""

from __future__ import annotations

from pathlib import Path

from planting import plant

from runtime.bisect import bisect
from runtime.bisect._rules import static_shape_source

DATA = Path(__file__).parent / "eighth_data"

_PASS2 = '''
import pypto


@pypto.frontend.jit
def k(x: pypto.Tensor([1, 128], pypto.DT_FP32), out: pypto.Tensor([1, 1], pypto.DT_FP32)):
    tsum = pypto.tensor([1], pypto.DT_FP32, "tsum")
    for t in range(2):
        r = pypto.view(x, [1, 64], [0, t * 64])
        r = pypto.exp(r)
        ts = pypto.sum(r, dim=0, keepdim=True)
        if t == 0:
            tsum[:] = ts
        else:
            tsum[:] = pypto.add(tsum, ts)
    out[:] = tsum
'''

_MOVE = ("`tsum[:] = ...` / move: source shape [1, 64] != destination shape [1] (0.2.0 SIM silently writes only the "
         "overlap; use assemble with offsets)")


def _planted(tmp: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    return plant(DATA, tmp, name, old, new)


def test_a_reduction_moved_into_a_lower_rank_state_is_named() -> None:
    line = next(i for i, ln in enumerate(_PASS2.splitlines(), 1) if "ts = pypto.sum" in ln)
    err = next(i for i, ln in enumerate(_PASS2.splitlines(), 1) if "tsum[:] = ts" in ln)
    got = static_shape_source(_PASS2, err, _MOVE)
    assert got is not None and got[0] == line, got
    assert "over axis 1" in got[1], got
    # the reduction over the right axis (the shapes would fit): no claim
    ok = _PASS2.replace("dim=0, keepdim=True", "dim=-1, keepdim=True")
    assert static_shape_source(ok, err, "`tsum[:] = ...` / move: source shape [1, 1, 64] != destination shape [1]") \
        is None


def test_a_tile_width_constant_too_small_names_the_constant(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "widthscale", "W = 64", "W = 32")
    rep = bisect(op_dir, "widthscale_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("the tile is too small" in e for e in rep.evidence), rep.evidence


def test_a_view_bound_one_short_of_the_data_names_its_clamp(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "tilemm", "pypto.min(n_start + KT, n)", "pypto.min(n_start + KT - 1, n)")
    rep = bisect(op_dir, "tilemm_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("shorter than the data there" in e for e in rep.evidence), rep.evidence


def test_the_right_kernels_are_named_nothing(golden_cache: dict) -> None:
    for name in ("widthscale", "tilemm", "pairmean"):
        rep = bisect(DATA / name, f"{name}_impl.py", golden_cache=golden_cache)
        assert rep.status == "NO_DIVERGENCE", (name, rep.summary)


def test_an_argument_the_wrapper_prepares_wrong_names_the_helper_line(tmp_path: Path, golden_cache: dict) -> None:
    # (the gym gqa_decode_attn's V heads summed but not divided by 4 in the wrapper's helper: the kernel's matmul
    # reading them was named)
    op_dir, _line = _planted(tmp_path, "pairmean", "x[1::2]) / 2.0", "x[1::2])")
    line = next(i for i, ln in enumerate((op_dir / "pairmean_impl.py").read_text().splitlines(), 1)
                if "x_mean = (x[0::2]" in ln)
    rep = bisect(op_dir, "pairmean_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("named like a golden intermediate" in e for e in rep.evidence), rep.evidence
