"""Value types shared by every lint module: stages, severities, findings and rule metadata.

They are pydantic models because findings cross package boundaries (verify reports, traces, agent
contexts) and must serialise the same way everywhere.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["BLOCKING_SEVERITIES", "Finding", "LintUsageError", "RuleInfo", "Severity", "Stage", "Status"]

Stage = Literal["design", "module", "final", "performance"]
"""Which gate is asking: ``design`` (DESIGN.md + module_interfaces.yaml + golden.py), ``module`` (a stage
file ``modules/<op>_module<sfx>_impl.py``), ``final`` (``<op>_impl.py`` + MEMORY.md) or ``performance`` (a
variant of the verified ``<op>_impl.py`` in the performance stage: the final rules, with tuning allowed)."""

Severity = Literal["S0", "S1", "S2", "S3"]
"""S0 fatal, S1 must-fix (both block), S2 warning, S3 info."""

Status = Literal["PASS", "FAIL", "WARN", "INFO", "SKIP"]

BLOCKING_SEVERITIES: frozenset[str] = frozenset({"S0", "S1"})
STAGES: tuple[str, ...] = ("design", "module", "final", "performance")


class LintUsageError(ValueError):
    """The caller misused the linter (missing path, unknown stage ...). Carries one clear message."""


class RuleInfo(BaseModel):
    """One row of the rule table (``runtime.lint.RULES``).

    Example:
        >>> from runtime.lint import RULES
        >>> RULES["OL03"].severity
        'S1'
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """Stable id: ``OLxx`` (upstream catalogue numbers) or ``PFxx`` (PTO Forge security/integrity rules)."""
    severity: Severity
    stages: tuple[Stage, ...]
    """Stages at which the rule runs; empty for rules that do not apply to PTO Forge."""
    title: str
    """What the rule demands, in one line."""
    fix: str
    """How to fix a violation, in one line."""
    doc: str
    """Where the rule comes from (spec file and section)."""
    scope: str = ""
    """``kernel`` (about one JIT function), ``file`` (file layout, host code, security), ``cross`` (needs the
    op directory) or ``design`` (design documents); empty when not applicable."""
    family: str = ""
    """Name of the module under ``runtime/lint`` that implements it (empty when not applicable)."""
    applies: bool = True
    """False for upstream rules that do not apply to PTO Forge (NPU devices, test files, Chinese headings)."""
    not_applicable_reason: str = ""


class Finding(BaseModel):
    """One result of one rule on one file location.

    ``line`` and ``col`` are 1-based (0 when the finding concerns the whole file).

    Example:
        >>> f = Finding(rule_id="OL03", severity="S1", status="FAIL", message="return in JIT", file="k.py", line=3)
        >>> f.is_blocking
        True
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule_id: str
    severity: Severity
    status: Status
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    fix: str = ""
    title: str = Field(default="", description="Rule title (from the rule table).")

    @property
    def is_blocking(self) -> bool:
        """True for an S0/S1 finding with status FAIL."""
        return self.status == "FAIL" and self.severity in BLOCKING_SEVERITIES
