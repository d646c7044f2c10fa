"""The graph state: plain, serialisable data only (paths, sha256 hashes, verdict summaries).

Why TypedDicts (also for the sub-states ``design``, ``gate`` and ``final``) rather than pydantic models: every
value is checkpointed by LangGraph's SQLite saver after each node, so it must round-trip through its serializer
without allowlists (a pydantic model is stored by class path and needs one), and checkpoints written before the
sub-states were typed (plain dicts with the same keys) must still resume. A TypedDict is a plain dict at run
time and a checked shape for mypy and for the tests (``tests/orchestrator/test_state_types.py`` validates every
sub-state of a run, across a stop and a resume, against these declarations with unknown keys forbidden).
The state must also stay small — file contents never live here, only their path and hash. Services (agents,
verifier, trace sink, clock) are injected through the LangGraph runtime context (:mod:`orchestrator.core.services`),
never stored here.

Append-only logs use the ``operator.add`` reducer so nodes return only the new rows.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, Literal, NotRequired, TypedDict, cast

ModuleStatus = Literal["pending", "in_progress", "verified", "blocked"]
Phase = Literal["intake", "design", "construction", "cleanup", "final", "done", "aborted"]



DesignStatus = Literal["pending", "written", "agent_error", "checked", "failed", "approved", "rejected", "rolled_back"]


class DesignState(TypedDict, total=False):
    """``ForgeState.design``: the design stage (intake creates it; design, design_check, the gates update it)."""

    attempts: int
    """Designer dispatches so far (each counts against ``budget``)."""
    budget: int
    status: DesignStatus
    existing: bool
    """DESIGN.md + module_interfaces.yaml were given by the user (checked before any designer call)."""
    skipped: bool
    """The user's design passed the design check: no designer call and no design gate."""
    notes: list[str]
    """Rejection notes from the human, in order (the designer sees them)."""
    problems: list[str]
    """Problems of the last design check (or the designer's failure), for the next designer call."""
    rationale: str | None
    design_sha256: str | None
    yaml_sha256: str | None
    commit: str | None
    """Audit-repo commit of the approved design."""


class GateRecord(TypedDict, total=False):
    """``ForgeState.gate``: the last gate decision (also a ``resume`` trace event)."""

    gate: str
    module: int | None
    decision: str
    """``GateDecision.encoded()``: approve | reject | abort | hint | raise_budget | rollback:<k> ..."""
    note: str | None
    source: str
    """Who decided: ``human``, ``auto`` (``--approve auto``) or ``replay`` (a recorded decision)."""


class FinalPerf(TypedDict, total=False):
    """``FinalState.perf``: which performance variant was delivered and its score against the baseline."""

    delivered: int
    scorer: str
    baseline: float | None
    delivered_score: float | None


class FinalState(TypedDict, total=False):
    """``ForgeState.final``: the delivered kernel (cleanup, verify_final, the perf stage and report fill it)."""

    file: str
    """``<op>_impl.py``, relative to the op dir."""
    impl_sha256: str | None
    verdict: str
    report_hash: str | None
    evidence: str | None
    commit: str | None
    """Audit-repo commit of the delivery."""
    toolchain: dict[str, Any]
    """``orchestrator.core.second_opinion.SecondOpinion`` as JSON (the real compiler's answer), when one was had."""
    perf: FinalPerf


class ModuleRecord(TypedDict, total=False):
    """One semantic module of the decomposition (L0: exactly one, target ``<op>_impl.py``)."""

    id: int
    name: str
    status: ModuleStatus
    attempts: int
    """Implementer dispatches for this module so far (each counts against ``budget``)."""
    budget: int
    stage_file: str
    """Relative path of the file the implementer writes for this module."""
    wrapper: str
    file_sha256: str | None
    """Hash of the stage file as last written by the implementer."""
    verified_sha256: str | None
    """Hash of the stage file at the PASS report that verified it (set only by the verify node)."""
    report_hash: str | None
    evidence: NotRequired[str | None]
    """Agent-visible identity of the last report (inputs + outcome; see ``VerifyOutcome.evidence``)."""
    verdict: str | None
    lint_key: str | None
    """Identity of the last blocking lint finding set (for the 5-in-a-row circuit breaker)."""
    lint_streak: int
    feedback: list[str]
    audit: str | None
    commit: str | None
    outputs: list[str]
    written: bool
    """True when the implementer wrote the stage file in its latest dispatch."""
    last_failure: NotRequired[str]
    """One line: why the latest attempt failed (progress, status, report)."""


class RunCounters(TypedDict, total=False):
    """``ForgeState.counters``: the run's counters after the last node (:meth:`Services.counters`).

    A node that runs again after an interrupt starts from them (:meth:`Services.rewind`), so it reads the same
    times and makes the same numbered model/tool calls as in a run that was never interrupted.
    """

    clock: int | None
    """Readings of the run's logical clock so far (None: the run reads another clock)."""
    llm: dict[str, int]
    """Model calls so far per request key (the next identical request is this occurrence)."""
    tool: dict[str, int]
    """Agent tool calls so far per ``"<tool> <args digest>"``."""


class ForgeState(TypedDict, total=False):
    """Everything the orchestrator knows about one run."""

    op_dir: str
    op_name: str
    run_id: str
    phase: Phase
    node: str
    """The last node that ran (for status and MEMORY.md)."""
    level: Literal["L0", "L1"]
    module_count: int
    complexity: dict
    inventory: list[dict]
    coverage: dict[str, dict]
    """Inventory row index (as str) -> {status, pypto_call, line} from the last accepted audit."""
    spec: dict
    """SPEC.md front matter (small; used for README and MEMORY.md)."""
    design: DesignState
    modules: list[ModuleRecord]
    active: int
    """1-based index of the active module; 0 before construction."""
    last_verdict: str | None
    last_report: str | None
    blocked: dict | None
    """Set while routing to the blocked gate: {module, reason}."""
    gate: GateRecord | None
    """The last gate decision."""
    gate_counts: dict[str, int]
    final: FinalState
    perf: dict | None
    """The optional performance stage (``--perf``): ``orchestrator.core.perf.PerfSummary`` as a dict."""
    outcome: str | None
    """``delivered`` | ``aborted`` | None while running."""
    stop_reason: str | None
    """Why an aborted run ended (shown to the human only; never rendered into MEMORY.md)."""
    verify_log: Annotated[list[dict], operator.add]
    lint_log: Annotated[list[dict], operator.add]
    dev_log: Annotated[list[dict], operator.add]
    rejected: Annotated[list[dict], operator.add]
    agent_calls: Annotated[list[dict], operator.add]
    """One entry per dispatch of a role (``{role, module, attempt}``), whether it answered or failed."""
    attempt_log: Annotated[list[dict], operator.add]
    """One entry per finished module attempt: ``{module, attempt, verdict, reason, model_calls}`` (``verdict``
    AGENT_ERROR when the implementer gave no usable file; ``reason`` one line; never rendered into MEMORY.md)."""
    counters: RunCounters
    """Clock readings and model/tool call occurrences at the end of the last node (restored when a node runs
    again after an interrupt; see :class:`RunCounters`)."""


def module_by_id(state: ForgeState, k: int) -> ModuleRecord:
    """The record of module ``k`` (1-based)."""
    return state["modules"][k - 1]


def replace_module(state: ForgeState, k: int, **changes: Any) -> list[ModuleRecord]:
    """A new module list with module ``k`` updated (state values are never mutated in place)."""
    mods = [m.copy() for m in state.get("modules", [])]
    # keyword names are not checked by mypy here; tests/orchestrator/test_state_types.py refuses unknown keys
    mods[k - 1] = cast(ModuleRecord, {**mods[k - 1], **changes})
    return mods
