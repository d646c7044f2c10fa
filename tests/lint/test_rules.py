"""Every implemented rule fires on its triggering source and stays quiet on the close variant."""

from __future__ import annotations

import pytest
from lint_rule_cases import CASES, Case

from runtime.lint import RULES, lint_source

PARAMS = [pytest.param(rid, case, id=f"{rid}-{case.name}") for rid, cases in sorted(CASES.items()) for case in cases]


def _lint(case: Case, source: str):
    return lint_source(source, case.filename, stage=case.stage, op_dir=case.op_dir, previous_stage=case.previous_stage)


@pytest.mark.parametrize(("rule_id", "case"), PARAMS)
def test_rule_fires_on_bad_source(rule_id: str, case: Case) -> None:
    hits = [f for f in _lint(case, case.bad) if f.rule_id == rule_id]
    assert hits, f"{rule_id} did not fire on {case.name!r}"
    assert case.status in {f.status for f in hits}, [f.model_dump() for f in hits]
    for f in hits:
        assert f.severity == RULES[rule_id].severity
        assert f.message and f.fix
        if f.status != "SKIP" and f.file == case.filename:
            assert f.line >= 1, f


@pytest.mark.parametrize(("rule_id", "case"), PARAMS)
def test_rule_quiet_on_close_variant(rule_id: str, case: Case) -> None:
    hits = [f for f in _lint(case, case.good) if f.rule_id == rule_id and f.status != "PASS"]
    assert not hits, [f.model_dump() for f in hits]
