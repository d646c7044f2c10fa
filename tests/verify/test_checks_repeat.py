"""The determinism check against failed cases: a case that already fails the comparison and also differs run to
run is FAIL_NUMERIC with a hint, not FAIL_CHEAT (a bugged RoPE that left half of its output unwritten was sent
to the debugger agent as a cheat); a passing case that differs is still a cheat."""

from __future__ import annotations

import numpy as np

from runtime.sandbox._exec import CandidateRun, RunOutput
from runtime.verify._checks import Evidence, deterministic_repeat, run_checks, unrepeatable_failures


def _evidence(failed: frozenset[str]) -> Evidence:
    a, b = np.arange(4, dtype=np.float32), np.arange(4, dtype=np.float32) + 1
    runs = [RunOutput("A", 0, {}, [a]), RunOutput("B", 0, {}, [a]), RunOutput("A", 1, {}, [b]),
            RunOutput("B", 1, {}, [a.copy()])]
    return Evidence(run=CandidateRun(status="ok", runs=runs), case_names=["A", "B"],
                    given={"A": [a], "B": [a]}, expected={"A": [a], "B": [a]}, params=["x"], leaves=["y"],
                    failed=failed)


def test_an_unrepeatable_passing_case_is_a_cheat() -> None:
    ev = _evidence(frozenset())
    assert deterministic_repeat(ev) == ["case A run twice gave different outputs (non-deterministic or state kept "
                                        "across calls)"]
    assert unrepeatable_failures(ev) == []


def test_an_unrepeatable_failing_case_is_a_hint_not_a_cheat() -> None:
    ev = _evidence(frozenset({"A"}))
    assert deterministic_repeat(ev) == [] and not any("run twice" in c for c in run_checks(ev))
    hint = unrepeatable_failures(ev)
    assert len(hint) == 1 and hint[0].startswith("case A: run twice it also gave different outputs")


def test_a_repeatable_failing_case_has_no_hint() -> None:
    assert unrepeatable_failures(_evidence(frozenset({"B"}))) == []
