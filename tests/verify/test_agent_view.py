"""The agent-visible view of measurements: coarse, identical under ulp noise, no numbers for a pass."""

from __future__ import annotations

import numpy as np

from runtime.agent_view import coarse, coarse_share, evidence_id, leaf_view
from runtime.compare import compare_outputs
from runtime.testmodes import NoiseInjector


def test_coarse_numbers_and_share_buckets() -> None:
    assert coarse(3.0034567e-05) == 3.0e-05 and coarse(0.123456) == 0.12
    assert coarse(float("nan")) == "NaN" and coarse(float("-inf")) == "-Infinity" and coarse(7) == 7
    assert [coarse_share(r) for r in (0.0, 0.0004, 0.004, 0.05, 0.3, 0.7, 1.0)] == [
        "none", "under 0.1%", "under 1%", "under 10%", "under 50%", "over 50%", "all"]


def test_passing_leaf_has_no_numbers_and_a_failing_leaf_survives_ulp_noise() -> None:
    rng = np.random.default_rng(0)
    expected = rng.standard_normal((64, 96)).astype(np.float32)
    close = expected * np.float32(1 + 1e-7)
    wrong = expected.copy()
    wrong[:, :40] *= np.float32(1.5)  # a bug: 40 of 96 columns scaled
    views = []
    for seed in range(6):
        noise = NoiseInjector(seed)
        got = [compare_outputs(noise.perturb(a), noise.perturb(expected), atol=1e-5, rtol=1e-5)[0]
               for a in (close, wrong)]
        views.append([leaf_view(leaf) for leaf in got])
    assert all(v[0] == {"path": "output", "status": "pass"} for v in views)
    assert all(v[1] == views[0][1] for v in views), views  # identical under six different "machines"
    fail = views[0][1]
    assert fail["status"] == "fail" and fail["out_of_tolerance"] == "under 50%" and len(fail["worst"]) == 3


def test_evidence_covers_inputs_and_outcome_only() -> None:
    a = evidence_id({"k.py": "ab"}, {"verdict": "PASS"})
    assert a == evidence_id({"k.py": "ab"}, {"verdict": "PASS"})
    assert a != evidence_id({"k.py": "ac"}, {"verdict": "PASS"}) != evidence_id({"k.py": "ab"}, {"verdict": "FAIL"})
