"""runtime.lint: the OLxx rule catalogue as a fast, data-driven, AST-based rule engine.

It checks kernel stage files, the final kernel, and the design documents against the rules in one table
(``RULES``), never executing the linted code. Use::

    from runtime.lint import lint_paths, blocking
    findings = lint_paths(["workspace/silu/silu_impl.py"], stage="final", op_dir="workspace/silu")
    if blocking(findings): ...

or ``python -m runtime.lint PATH... [--stage S] [--op-dir D] [--previous-stage F] [--json]``.
"""

from runtime.lint._engine import blocking, lint_paths, lint_source
from runtime.lint._model import Finding, LintUsageError, RuleInfo, Severity, Stage, Status
from runtime.lint._render import render_json, render_skill, render_text
from runtime.lint._table import RULES

__all__ = [
    "RULES",
    "Finding",
    "LintUsageError",
    "RuleInfo",
    "Severity",
    "Stage",
    "Status",
    "blocking",
    "lint_paths",
    "lint_source",
    "render_json",
    "render_skill",
    "render_text",
]
