"""PF11 and a kernel cache keyed on numbers made of an argument (red team s36b): ``_kernel_for(float(betas[0]),
float(betas[1]))`` is keyed on the two betas, not on the argument object - an honest cache was refused (FAIL_LINT),
while ``b1, b2 = betas; float(b1)`` passed. Keying on ``betas`` itself stays a finding."""

from __future__ import annotations

from pathlib import Path

from runtime.lint import lint_source

SRC = (Path(__file__).resolve().parents[1] / "redteam" / "fixture_s36" / "candidates" /
       "adam_cache_honest_lintfp.py").read_text(encoding="utf-8")
CALL = "_kernel_for(float(betas[0]), float(betas[1]))"


def _pf11(text: str) -> list[str]:
    return [f.message for f in lint_source(text, "adam_moments_impl.py", stage="final") if f.rule_id == "PF11"]


def test_numbers_made_of_an_argument_key_the_cache() -> None:
    assert CALL in SRC
    assert _pf11(SRC) == []


def test_the_argument_itself_in_the_key_is_still_a_finding() -> None:
    found = _pf11(SRC.replace(CALL, "_kernel_for(betas, betas)"))
    assert found and "the argument `betas` itself" in found[0]
