"""The third gym corpus (``gym_corpus_third``) on the real kernels: bugs that were late or missed before session 20
are named at their line (slow: each imports a gym operator and runs its golden and kernel; skips without the gym
folder or torch). The full corpus is ``bench/bisect_gym_corpus.py --corpus third``; the rules are tested on small
kernels in ``test_bisect_third.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from gym_corpus_third import BUGS, import_op, materialize

from runtime.bisect import bisect

pytestmark = pytest.mark.slow




def test_third_corpus_is_other_places_than_the_first_two() -> None:
    from gym_corpus import BUGS as FIRST
    from gym_corpus_fresh import BUGS as FRESH

    assert len(BUGS) >= 20 and len({b.id for b in BUGS}) == len(BUGS)
    assert not {b.id for b in BUGS} & {b.id for b in FIRST + FRESH}
    assert not {(b.op, b.line, b.new) for b in BUGS} & {(b.op, b.line, b.new) for b in FIRST + FRESH}
    earlier = {(b.op, b.line) for b in FIRST + FRESH}
    again = [b.id for b in BUGS if (b.op, b.line) in earlier]  # (another kind of bug on a line planted before)
    assert len(again) <= len(BUGS) // 5, again


@pytest.mark.parametrize("bug_id", ["gqa_single_div", "gqa_mi_dtype", "gqa_amax_axis", "mhc_valid", "ll_bias_last_row",
                                    "lstm_h_rounded", "lstm_unroll_tile", "as_out_tile_index"])
def test_third_bug_is_named_at_its_line(op_root: Path, tmp_path: Path, bug_id: str, golden_cache: dict) -> None:
    bug = next(b for b in BUGS if b.id == bug_id)
    d, stage, (lo, hi) = materialize(bug, import_op(bug.op, op_root), tmp_path)
    rep = bisect(d, stage, golden_cache=golden_cache, timeout=600.0)
    f = rep.first_divergence
    assert f is not None, rep.summary + "\n" + "\n".join(rep.evidence)
    assert lo <= (f.line or 0) <= hi or lo <= (f.call_site or 0) <= hi, \
        f"{bug_id}: named line {f.line}, bug on {lo}-{hi}: {rep.summary} {rep.evidence}"
    assert f.status not in ("match", "input", "const"), rep.to_json()
