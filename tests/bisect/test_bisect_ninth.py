"""What the ninth gym corpus (``gym_corpus_ninth``, session 38b) found bisect naming wrong, on small kernels.

* a valid extent trimmed one short *after* a right clamp (``n_valid = n_end - n_start - 1``): s38's
  ``short_valid_source`` followed every bound on to the ``min`` behind it and named the right clamp. Now an
  assignment that adds or subtracts an integer literal itself is named (the clamp still is when it has the bug);
* a loop's extent read from another axis of the tensor its view walks (``Skv = k_full.shape[2]``): the view that
  raised past the tensor was named. Now (``_rules.static_view_extent_source``) the line reading the wrong axis;
* a wrapper passing one golden-named local for two kernel arguments (``v_padded = k_reduced.contiguous()``): each
  argument holds a golden's data, so s38's ``_prepared_argument`` saw nothing and the kernel op reading it was named.
  Now (``api._duplicated_argument``) two arguments holding the same golden while another of their size is held by
  none are tried with it in a replay, and the line reading the duplicate is named;
* a scalar the wrapper truncates on its way to the kernel (``int(beta1)``): ``wrapper_scalar`` found the wrong number
  but named nothing, since ``beta1`` is the caller's. Now the call's argument line, where the ``int`` is;
* a step applied twice (``mul(mul(update, lr), lr)``), which has no golden value of its own: not localized. Now the
  walk-back (``_repair._superfluous``) replays each candidate passing its one matching operand on unchanged.
"""

from __future__ import annotations

from pathlib import Path

from planting import plant

from runtime.bisect import bisect
from runtime.bisect._rules import static_view_extent_source

DATA = Path(__file__).parent / "ninth_data"


def _planted(tmp: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    return plant(DATA, tmp, name, old, new)


def test_the_right_kernels_are_named_nothing(golden_cache: dict) -> None:
    for name in ("tilesub", "pairtwo", "scalemul", "decay"):
        rep = bisect(DATA / name, f"{name}_impl.py", golden_cache=golden_cache)
        assert rep.status == "NO_DIVERGENCE", (name, rep.summary)


def test_a_valid_extent_trimmed_after_a_right_clamp_names_the_trim(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "tilesub", "n_valid = n_end - n_start", "n_valid = n_end - n_start - 1")
    rep = bisect(op_dir, "tilesub_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    # the clamp with the off-by-one is still the clamp (s38's case)
    op_dir2, line2 = _planted(tmp_path / "b", "tilesub", "pypto.min(n_start + KT, n)", "pypto.min(n_start + KT - 1, n)")
    rep2 = bisect(op_dir2, "tilesub_impl.py", golden_cache=golden_cache)
    f2 = rep2.first_divergence
    assert f2 is not None and f2.line == line2, (rep2.summary, rep2.evidence)


_WALK = '''
import pypto

T = 64


@pypto.frontend.jit
def k(kf: pypto.Tensor([4, pypto.DYNAMIC, 256], pypto.DT_FP32), out: pypto.Tensor([4, 64, 256], pypto.DT_FP32)):
    n = kf.shape[2]
    for i in pypto.loop((n + T - 1) // T, name="L"):
        start = i * T
        t = pypto.view(kf, [4, T, 256], [0, start, 0])
        out[:] = t
'''

_OOB = "view of 'kf': view: offset 64 on axis 1 is outside the tensor extent 64"


def test_a_loop_extent_read_from_another_axis_names_that_read() -> None:
    lines = _WALK.splitlines()
    read = next(i for i, ln in enumerate(lines, 1) if "kf.shape[2]" in ln)
    err = next(i for i, ln in enumerate(lines, 1) if "pypto.view(kf" in ln)
    got = static_view_extent_source(_WALK, err, _OOB)
    assert got is not None and got[0] == read, got
    assert "shape[2]" in got[1] and "axis 1" in got[1], got
    # the extent read from the axis the view walks: the loop is not where it went wrong - no claim
    assert static_view_extent_source(_WALK.replace("kf.shape[2]", "kf.shape[1]"), err, _OOB) is None
    # another message: no claim
    assert static_view_extent_source(_WALK, err, "move: source shape [1] != destination shape [2]") is None


def test_one_golden_local_passed_for_two_arguments_names_the_copy(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "pairtwo", "b_in = np.ascontiguousarray(b_mean)",
                            "b_in = np.ascontiguousarray(a_mean)")
    rep = bisect(op_dir, "pairtwo_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("all hold the golden 'a_mean'" in e for e in rep.evidence), rep.evidence


def test_a_kernel_bug_next_to_right_golden_named_arguments_is_the_kernel_line(tmp_path: Path,
                                                                             golden_cache: dict) -> None:
    # (the wrapper's a_mean / b_mean are right; the kernel combines them wrong: no wrapper line may be claimed)
    op_dir, line = _planted(tmp_path, "pairtwo", "pypto.add(pypto.mul(ta, 2.0), tb)", "pypto.add(pypto.mul(tb, 2.0), ta)")
    rep = bisect(op_dir, "pairtwo_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_scalar_truncated_by_the_wrapper_names_the_call_argument(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "scalemul", "float(alpha))", "int(alpha))")
    rep = bisect(op_dir, "scalemul_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_a_step_applied_twice_is_named(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "decay", "pypto.mul(update, 0.1)", "pypto.mul(pypto.mul(update, 0.1), 0.1)")
    rep = bisect(op_dir, "decay_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
