"""Check registration: each rule-family module registers its check functions here by rule id.

A check is ``fn(ctx) -> Iterable[Hit]``; the engine turns hits into :class:`Finding` objects using the rule
table for severity, title and fix hint, so a check never restates them. A check raises :class:`Skip` when it
cannot decide (for instance a cross-file rule without an op directory).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from runtime.lint._table import rule

if TYPE_CHECKING:
    from runtime.lint._opdir import OpContext
    from runtime.lint._source import ParsedFile

__all__ = ["CHECKS", "Check", "FileKind", "Hit", "LintContext", "Skip", "check"]

FileKind = Literal["kernel", "golden", "design", "interfaces", "memory"]


@dataclass(frozen=True)
class Hit:
    """One violation found by a check. ``status`` overrides the severity default (e.g. WARN inside an S1 rule)."""

    message: str
    line: int = 0
    col: int = 0
    status: str | None = None
    fix: str | None = None
    file: str = ""


class Skip(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by a check that cannot decide; becomes a SKIP finding with this reason."""


@dataclass
class LintContext:
    """Everything a check may look at for one file."""

    display: str
    """File name as shown in findings."""
    source: str
    kind: FileKind
    stage: str
    path: Path | None = None
    pf: ParsedFile | None = None
    op: OpContext | None = None
    previous_stage: Path | None = None
    extra: dict = field(default_factory=dict)

    def require_op(self) -> OpContext:
        if self.op is None:
            raise Skip("needs --op-dir (cross-file rule)")
        return self.op


CheckFn = Callable[[LintContext], Iterable[Hit]]


@dataclass(frozen=True)
class Check:
    rule_id: str
    kinds: tuple[str, ...]
    fn: CheckFn


CHECKS: list[Check] = []


def check(rule_id: str, *kinds: FileKind) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn`` as (part of) the check of ``rule_id`` for files of the given kinds."""
    info = rule(rule_id)  # unknown id -> KeyError at import time, never a silent skip
    if not info.applies:
        raise ValueError(f"rule {rule_id} is marked not applicable but has a check")

    def deco(fn: CheckFn) -> CheckFn:
        CHECKS.append(Check(rule_id, tuple(kinds) or ("kernel",), fn))
        return fn

    return deco
