"""Services injected into the graph through the LangGraph runtime context.

Why: checkpoints must stay small and plain, and a node must be testable with doubles. So the agents, the
verification function, the trace sink and the clock travel in :class:`Services` (the graph's
``context_schema``), never in state. A verifier is any :class:`VerifierFn`; the default adapts
``runtime.verify.verify`` (see :mod:`orchestrator.core.verifier_bridge`).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from agents.contracts import AgentSet, TraceSink
from orchestrator.core.logical_clock import LogicalClock
from orchestrator.core.state import RunCounters
from orchestrator.gates import ApproveMode
from runtime.verdicts import Verdict


class LintItem(BaseModel):
    """One blocking lint finding as the orchestrator needs it (feedback + circuit breaker)."""

    model_config = ConfigDict(frozen=True)
    rule_id: str
    file: str = ""
    line: int | None = None
    message: str = ""


class VerifyOutcome(BaseModel):
    """What the graph keeps from one verification report (the report itself stays on disk)."""

    model_config = ConfigDict(frozen=True)
    verdict: Verdict
    target: str
    """Relative path of the verified file."""
    hashes: dict[str, str]
    """sha256 of every input file as the verifier saw it (keys as the verifier names them)."""
    report_hash: str
    """Exact identity of the stored report (audit only: commits, trace events, report file names)."""
    evidence: str = ""
    """What agents may see as the report's identity: input hashes + outcome, no measurement."""
    report_path: str | None = None
    """Relative path (to the op dir) of the stored report JSON."""
    summary: str = ""
    memory_row: str = ""
    """One MEMORY.md verification-log row (markdown, without the leading 'when' cell)."""
    lint_blocking: list[LintItem] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    """The report's reasons (what failed, in the verifier's words)."""
    sanitized: dict = Field(default_factory=dict)
    """The report's agent-visible view (``VerifyReport.sanitized``): no golden values beyond a few worst
    elements, no host facts, measurements coarse enough to be the same on every machine."""


class VerifierFn(Protocol):
    """``verify(op_dir, target, previous_stage=..., reports_dir=...) -> VerifyOutcome``; the perf stage also
    passes ``lint_stage="performance"`` (only then: test doubles of the other stages need not take it)."""

    def __call__(self, op_dir: Path, target: str, *, previous_stage: str | None,
                 reports_dir: Path, lint_stage: str | None = None) -> VerifyOutcome: ...


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


@dataclass(frozen=True)
class RunConfig:
    """How one run is set up (from ``run.json``; the same on resume). Read by nodes, never changed."""

    approve: ApproveMode = "prompt"
    """Who answers a gate the recording did not decide: a terminal prompt, ``auto``, or nobody (``stop``)."""
    module_gate: bool = True
    """Stop at the module gate after every verified module (auto mode approves it)."""
    budget: int = 10
    """Attempts per module before the blocked gate."""
    lint_streak_limit: int = 5
    design_budget: int = 3
    bisect: bool = True
    """Give the debugger runtime.bisect's first-divergence report on numeric failures."""
    perf: bool = False
    """Run the performance stage after the final gate (``--perf``; orchestrator.core.perf)."""
    perf_budget: int = 3
    """Variants the implementer may propose in the performance stage."""
    toolchain_python: str | None = None
    """Interpreter with the real pypto for the second opinion (None: ``$PTO_FORGE_PYPTO_PYTHON`` or this one
    when it has pypto; unavailable otherwise). See :mod:`orchestrator.core.second_opinion`."""


@dataclass(frozen=True)
class Services:
    """The run-scoped services every node receives as ``runtime.context``: what is injected (agents,
    verifier, trace, clock), the run's configuration, and one piece of bookkeeping (``timers``)."""

    agents: AgentSet
    verifier: VerifierFn
    trace: TraceSink
    clock: Callable[[], _dt.datetime] = utc_now
    config: RunConfig = field(default_factory=RunConfig)
    timers: dict[str, float] = field(default_factory=dict)
    """Seconds spent inside agents and the verifier (for the overhead benchmark); filled in place."""

    def stamp(self) -> str:
        """The clock as an ISO string (UTC, seconds) for logs and MEMORY.md."""
        return self.clock().strftime("%Y-%m-%d %H:%M:%S")

    def counters(self) -> RunCounters:
        """Where the run's counters stand: the logical clock's readings (None for another clock) and the
        trace's occurrence counters. Every node stores them in its update, so every checkpoint has them."""
        clock = self.clock.readings if isinstance(self.clock, LogicalClock) else None
        calls = self.trace.counters()
        return RunCounters(clock=clock, llm=calls.get("llm", {}), tool=calls.get("tool", {}))

    def rewind(self, counters: RunCounters | None) -> None:
        """Set the counters back to a checkpoint's, before a node runs.

        Why: a node interrupted half-way (Ctrl-C, kill -9, an error) has already read the clock and made model
        calls; the resumed run runs it again from the checkpoint, and it must read the same times and ask
        the same occurrences as in an uninterrupted run, or its MEMORY.md, commits and model requests differ
        (a replay then misses its recording). A no-op when nothing was interrupted (the counters already
        stand there) and for checkpoints written before the counters existed (None).
        """
        if not counters:
            return
        if isinstance(self.clock, LogicalClock) and counters.get("clock") is not None:
            self.clock.rewind(int(counters["clock"] or 0))
        self.trace.rewind({"llm": counters.get("llm") or {}, "tool": counters.get("tool") or {}})
