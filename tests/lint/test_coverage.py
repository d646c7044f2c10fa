"""The rule table, the registered checks, the tests and the skills page agree one to one."""

from __future__ import annotations

from pathlib import Path

from lint_rule_cases import CASES

import runtime.lint._engine  # noqa: F401  (registers every check)
from runtime.lint import RULES, render_skill
from runtime.lint._registry import CHECKS

ROOT = Path(__file__).resolve().parents[2]


def test_table_and_cases_cover_each_other() -> None:
    implemented = {rid for rid, r in RULES.items() if r.applies}
    assert set(CASES) == implemented, {
        "rules without cases": sorted(implemented - set(CASES)),
        "cases for unknown or not-applicable rules": sorted(set(CASES) - implemented),
    }
    for rid, cases in CASES.items():
        assert cases, rid
        for case in cases:
            assert case.bad != case.good, f"{rid} {case.name}: bad and good sources are identical"


def test_every_applicable_rule_has_a_check_and_nothing_else_does() -> None:
    checked = {c.rule_id for c in CHECKS}
    applicable = {rid for rid, r in RULES.items() if r.applies}
    assert checked == applicable - {"PF00"}  # PF00 (parse/read errors) is raised by the engine itself


def test_not_applicable_rules_say_why_and_upstream_catalogue_is_complete() -> None:
    upstream = {rid for rid in RULES if rid.startswith("OL")}
    assert len(upstream) == 58  # rules.json v2.0.0
    for rid, r in RULES.items():
        if r.applies:
            assert r.stages and r.title and r.fix and r.scope and r.family, rid
            module = ROOT / "runtime" / "lint" / f"{r.family}.py"
            assert module.is_file(), f"{rid}: family module {module} missing"
        else:
            assert not r.stages and r.not_applicable_reason, rid


def test_skills_page_is_generated_from_the_table() -> None:
    page = (ROOT / "skills" / "lint-rules.md").read_text(encoding="utf-8")
    assert page == render_skill(), "skills/lint-rules.md is stale: python -m runtime.lint --list-rules > skills/lint-rules.md"
    for rid in RULES:
        assert f"| {rid} |" in page
