"""The typed boundary between the orchestrator and the four agent roles.

The orchestrator builds a context for a role, calls the role, and receives a typed result. Roles never
decide stage transitions and never write files themselves: they *return* file contents, and the
orchestrator writes only the files the role owns (designer: DESIGN.md + module_interfaces.yaml;
implementer: exactly one stage file; verifier-audit: nothing; debugger: nothing, it proposes a patch).

Every implementation of :class:`AgentSet` (LLM-backed roles in ``agents.roles``, deterministic scripted
agents for tests) must accept these contexts and return these results. Paths are relative to the op
directory, always with forward slashes.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "AgentError",
    "AgentSet",
    "AuditContext",
    "AuditResult",
    "AuditRow",
    "DebugContext",
    "DebugResult",
    "DesignContext",
    "DesignResult",
    "ImplementContext",
    "ImplementResult",
    "PatchProposal",
    "RoleName",
    "TraceSink",
]

RoleName = Literal["designer", "implementer", "verifier", "debugger"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentError(RuntimeError):
    """A role could not produce a valid result (e.g. the model kept answering malformed output).

    The orchestrator counts this as a failed attempt of the current module; it never crashes the run.
    """

    def __init__(self, role: str, message: str, *, attempts: int = 1, stop: bool = False,
                 model_calls: int | None = None) -> None:
        super().__init__(f"{role}: {message}")
        self.role = role
        self.message = message
        self.attempts = attempts
        self.stop = stop
        """Trying again cannot help (the same failure repeated, or the prompt cannot fit): the orchestrator
        stops the module's attempt loop at the blocked gate with this reason instead of using its budget."""
        self.model_calls = model_calls
        """Model calls this dispatch made (None: not a model-backed agent)."""

    @property
    def reason(self) -> str:
        """The failure in one line (for progress lines, status, the report's error column and MEMORY.md)."""
        line = " ".join(self.message.split())
        return line if len(line) <= 300 else line[:297] + "..."


# ---------------------------------------------------------------------------------------------- designer


class DesignContext(_Model):
    """What the designer sees."""

    op_dir: str
    op_name: str
    spec_md: str
    """Full text of SPEC.md."""
    golden_py: str
    """Full text of golden.py."""
    complexity: dict
    """Deterministic complexity decision: signals, total_complexity, module_count, level (L0/L1)."""
    memory_md: str = ""
    rejection_notes: list[str] = Field(default_factory=list)
    """Notes from humans who rejected earlier designs at the design gate, oldest first."""
    design_check_problems: list[str] = Field(default_factory=list)
    """Problems the deterministic design check found in the previous design attempt."""
    attempt: int = 1


class DesignResult(_Model):
    design_md: str
    module_interfaces_yaml: str
    rationale: str | None = None
    """Required when the design's module_count differs from the computed one; shown at the design gate."""


# ------------------------------------------------------------------------------------------- implementer


class ImplementContext(_Model):
    """What the implementer sees for one dispatch: exactly one target file to write."""

    op_dir: str
    op_name: str
    module: int
    """1-based index of the module being implemented (L0: always 1)."""
    module_count: int
    level: Literal["L0", "L1"]
    target_file: str
    """The only file the implementer may write, e.g. ``modules/rms_norm_module12_impl.py`` or ``rms_norm_impl.py``."""
    wrapper_name: str
    """Required wrapper function name, e.g. ``rms_norm_module12_wrapper``."""
    spec_md: str
    golden_py: str
    design_md: str
    module_interfaces_yaml: str
    memory_md: str = ""
    previous_stage_file: str | None = None
    """Path of the verified stage file of module k-1 (its module regions are frozen)."""
    previous_stage_source: str | None = None
    current_source: str | None = None
    """The current content of ``target_file`` when this is a fix attempt."""
    feedback: list[str] = Field(default_factory=list)
    """Lint findings, verification summaries and debugger patch proposals from earlier attempts, oldest first."""
    attempt: int = 1


class ImplementResult(_Model):
    path: str
    """Must equal ``ImplementContext.target_file``; anything else is a contract violation."""
    content: str
    notes: str = ""


# ------------------------------------------------------------------------------------- verifier (audit)


class AuditContext(_Model):
    op_dir: str
    op_name: str
    module: int
    target_file: str
    source: str
    """Content of the verified file under audit."""
    inventory: list[dict]
    """Golden function inventory rows: {"index": int, "operation": str, "shape": str, "module": int | None}."""
    rows_in_scope: list[int]
    """Inventory row numbers that must be covered at this gate (module gate: rows of modules 1..k; final: all)."""
    verify_summary: dict = Field(default_factory=dict)
    """Sanitized summary of the PASS report (no golden values)."""


class AuditRow(_Model):
    index: int
    status: Literal["✅", "❌"]
    pypto_call: str = ""
    line: int | None = None
    """1-based line in ``target_file`` of the pypto call implementing the row; checked by the tool."""


class AuditResult(_Model):
    rows: list[AuditRow]
    verdict: Literal["ok", "block"]
    summary: str
    """Human-readable verdict text. An audit can block a module, never pass one."""


# --------------------------------------------------------------------------------------------- debugger


class DebugContext(_Model):
    op_dir: str
    op_name: str
    module: int
    failing_file: str
    source: str
    report: dict
    """Sanitized verify report (verdict, diagnostics, per-leaf statistics, outlier listings only)."""
    bisect: dict | None = None
    """First-divergence report from runtime.bisect, when available."""
    memory_md: str = ""
    attempt: int = 1


class PatchProposal(_Model):
    file: str
    line_start: int
    line_end: int
    current_snippet: str
    proposed_snippet: str
    expected_effect: str
    evidence: str


class DebugResult(_Model):
    diagnosis: str
    proposals: list[PatchProposal]


# ------------------------------------------------------------------------------------------------- roles


@runtime_checkable
class AgentSet(Protocol):
    """The four roles behind one interface, injected into the graph.

    Each method may raise :class:`AgentError`; any other exception is an infrastructure error.
    """

    def design(self, ctx: DesignContext) -> DesignResult: ...

    def implement(self, ctx: ImplementContext) -> ImplementResult: ...

    def audit(self, ctx: AuditContext) -> AuditResult: ...

    def debug(self, ctx: DebugContext) -> DebugResult: ...


# ------------------------------------------------------------------------------------------------ traces


@runtime_checkable
class TraceSink(Protocol):
    """Where the orchestrator writes its events (one events.jsonl per run, shared with the LLM recorder).

    Implemented by ``agents.trace.Trace``; see ``../shared/spec/traces.md`` for event kinds and fields. Every
    member a caller uses is declared here, so callers call them and never probe with ``getattr``.
    """

    @property
    def mode(self) -> str:
        """``record`` | ``replay`` | ``replay-or-record`` (``agents.trace.TRACE_MODES``)."""
        ...

    def emit(self, kind: str, **fields: object) -> int:
        """Append one event (common fields ``node, agent, module, attempt`` among ``fields``); return its seq."""
        ...

    def recorded_decision(self, gate: str, module: int | None, occurrence: int) -> dict | None:
        """In replay: the human decision recorded at this gate (``{"decision": ..., "note": ...}``), else None."""
        ...

    def recorded(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        """In replay: the source trace's events of ``kind`` whose fields equal ``match``; else []."""
        ...

    def update_manifest(self, **fields: Any) -> None:
        """Set manifest fields (models, prompt hashes, clock origin, ...)."""
        ...

    def counters(self) -> dict[str, dict[str, int]]:
        """The replay counters (occurrences of each model/tool request so far) as JSON data, for a checkpoint."""
        ...

    def rewind(self, counters: dict[str, dict[str, int]]) -> None:
        """Set the replay counters back to a checkpoint's (a node that runs again after an interrupt)."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None:
        """Flush and close the events file (idempotent)."""
        ...
