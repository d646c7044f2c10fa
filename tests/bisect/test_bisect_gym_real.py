"""Issue 30 on a real gym kernel: bugs planted at test time in the vendor's mhc_sinkhorn (its real shapes, a torch
golden whose softmax is one call) are named at their line; the full corpus is bench/bisect_gym_corpus.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from gym_corpus import BUGS, OPS, import_op, materialize, shared_gym

from runtime.bisect import bisect

pytestmark = pytest.mark.slow

GYM = shared_gym()
SUBSET = ["mhc_exp2"]


def test_corpus_spans_enough_operators_and_kinds() -> None:
    assert len(BUGS) >= 40 and len({b.id for b in BUGS}) == len(BUGS)
    assert len({b.op for b in BUGS}) >= 8 and {b.op for b in BUGS} <= set(OPS)
    assert {"wrong_offset", "wrong_axis", "exp_for_exp2", "stale_state", "wrong_sign", "tail_bound",
            "wrong_gather", "missing_scale"} <= {b.kind for b in BUGS}


@pytest.fixture(scope="module")
def op_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if GYM is None:
        pytest.skip("no gym corpus: set FORGE_SHARED to the folder holding gym/ (or keep ../shared next to the repo)")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (the gym's goldens are torch): pip install -e '.[toolchain]'")
    return import_op("mhc_sinkhorn", tmp_path_factory.mktemp("gym-ops"))


@pytest.mark.parametrize("bug_id", SUBSET)
def test_bug_in_a_real_gym_kernel_is_named_at_its_line(op_dir: Path, tmp_path: Path, bug_id: str,
                                                        golden_cache: dict) -> None:
    bug = next(b for b in BUGS if b.id == bug_id)
    d, stage, (lo, hi) = materialize(bug, op_dir, tmp_path)
    rep = bisect(d, stage, golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None, rep.summary + "\n" + "\n".join(rep.evidence)
    assert lo <= (f.line or 0) <= hi, f"{bug_id}: named line {f.line}, bug on {lo}-{hi}: {rep.evidence}"
    assert f.status not in ("match", "input", "const"), rep.to_json()
    assert not any("size budget" in e for e in rep.evidence)
