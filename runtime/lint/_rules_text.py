"""Plain-text rules (regex is fine here: nothing security-relevant).

OL41: a lint report pasted into a kernel or golden file is an agent trying to talk to the gate instead of
fixing the code; it also confuses later readers.
"""

from __future__ import annotations

from collections.abc import Iterator

from runtime.lint._registry import Hit, LintContext, check

LINT_TOKENS = ("[pypto-op-lint]", "交付门禁阻断", "以下规则违规", "fix_hints:", "blocking_rules:", "docs_ref:",
               "[pto-forge-lint]")


@check("OL41", "kernel", "golden")
def ol41_no_pasted_lint(ctx: LintContext) -> Iterator[Hit]:
    for i, text in enumerate(ctx.source.splitlines(), start=1):
        for token in LINT_TOKENS:
            col = text.find(token)
            if col >= 0:
                yield Hit(f"pasted lint output `{token}`", i, col + 1)
                break
