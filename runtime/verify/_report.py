"""The verification report: one pydantic value, deterministic JSON, a MEMORY.md row, a sanitized view.

Determinism: everything except the fields in :data:`VOLATILE_FIELDS` is a pure function of the input files
(seeded cases, single-threaded numerics, sorted keys), so ``report_hash`` - sha256 over the canonical JSON
without those fields - identifies "this verdict on these exact files". Floats are serialised by pydantic
(``repr`` round-trip); infinities as the strings ``"Infinity"``/``"-Infinity"``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runtime.agent_view import coarse, coarse_share, coarse_tree, evidence_id, leaf_view
from runtime.compare import LeafResult
from runtime.targets import DEFAULT_NPUARCH, DEFAULT_TARGET
from runtime.verdicts import Verdict

__all__ = ["VOLATILE_FIELDS", "TOOL_HASH_KEYS", "CaseReport", "ErrorInfo", "LintSection", "SandboxSection", "Verdict", "VerifyReport"]

# fields that differ between two runs of the same inputs: clocks, durations, process ids (and the hash itself)
VOLATILE_FIELDS = frozenset({"created_at", "durations", "duration_s", "golden_duration_s", "report_hash", "pid"})
"""Fields that vary between identical runs (timing, process ids); excluded from ``report_hash``."""
TOOL_HASH_KEYS = frozenset({"verifier", "emulator", "lint"})
"""Entries of ``hashes`` that identify the tools, not the inputs; recorded, but not part of ``report_hash``."""
_FORBIDDEN_FOR_AGENTS = frozenset({"golden_tensors", "golden_values", "golden_source", "raw_inputs",
                                   "input_tensors", "truth", "truth_tuple"})
SCHEMA_VERSION = 1


class _M(BaseModel):
    model_config = ConfigDict(ser_json_inf_nan="strings", extra="forbid")


class ErrorInfo(_M):
    """An error that stopped a case: emulator code, message and kernel file:line when known."""

    type: str
    message: str
    code: str | None = None
    file: str | None = None
    line: int | None = None
    op: str | None = None


class CaseReport(_M):
    """One case: what ran and how every output leaf compared."""

    name: str
    dims: dict[str, int]
    dtype: str
    seed: int
    band: str
    tail: bool
    unseen: bool = False
    """A case the author could not see (drawn from the run's unseen seed; agents see its shape, not its seed)."""
    status: Literal["pass", "fail_numeric", "fail_runtime", "not_run"]
    atol: float
    rtol: float
    leaves: list[LeafResult] = []
    error: ErrorInfo | None = None
    kernel_calls: int | None = None
    counters: dict[str, Any] | None = None
    diagnostics: list[dict[str, Any]] = []
    duration_s: float = 0.0
    golden_duration_s: float = 0.0


class LintSection(_M):
    """Lint step: ``available`` False means the lint package was missing (the verdict cannot be PASS)."""

    available: bool
    stage: str
    findings: list[dict[str, Any]] = []
    blocking: list[dict[str, Any]] = []
    frozen: list[str] = []
    message: str = ""


class SandboxSection(_M):
    """How the candidate was isolated (not part of ``report_hash``: the same files give the same report identity
    whatever the machine offered; agents never see this section's host facts)."""

    isolation: str = "not_run"
    """``bwrap+seccomp`` | ``bwrap`` | ``process-only`` (docs/verification.md)."""
    isolation_note: str = ""
    """Why the isolation is weaker than ``bwrap+seccomp``, in one line ("" when it is not)."""
    layers: dict[str, bool] = {}
    required: bool = False
    status: str = "not_run"
    reason: str = ""
    denied: list[str] = []
    stderr_tail: str = ""
    pid: int | None = None


class VerifyReport(_M):
    """Everything one ``verify(op_dir, target)`` established. Serialise with :meth:`to_json`."""

    schema_version: int = SCHEMA_VERSION
    tool: str = "pto-forge verify"
    op_name: str = ""
    target: str
    kind: Literal["module", "final", "unknown"] = "unknown"
    module: int | None = None
    wrapper: str = ""
    expected_leaves: list[str] = []
    pypto_target: str = "head"
    """The PyPTO version the emulator followed (``runtime.targets``: head or 0.2.0)."""
    pypto_target_source: str = "default"
    """Where the target came from: ``settings``, ``SPEC.md``, a forge.toml path, or ``default``."""
    npuarch: str = DEFAULT_NPUARCH
    """The Ascend architecture the kernels ran on (SPEC.md ``npuarch``; ``DAV_2201`` = A2/A3, the default)."""
    verdict: Verdict
    reasons: list[str] = []
    unseen_seed: int | None = None
    """Seed of the unseen cases and of the call order (part of the report's identity, never shown to agents)."""
    hashes: dict[str, str] = {}
    lint: LintSection | None = None
    cases: list[CaseReport] = []
    cheats: list[str] = []
    sandbox: SandboxSection = Field(default_factory=SandboxSection)
    counters: dict[str, Any] = {}
    diagnostics: list[dict[str, Any]] = []
    durations: dict[str, float] = {}
    created_at: str = ""
    report_hash: str = ""
    evidence: str = ""
    """Agent-visible identity: input hashes + outcomes, no measurement (:meth:`compute_evidence`)."""

    # -------------------------------------------------------------------------------------- serialisation
    def canonical_dict(self) -> dict[str, Any]:
        """The report as JSON data without volatile fields (what ``report_hash`` covers).

        The identity is "these input files gave these results": the source hashes of the tools (verifier,
        emulator, lint) and the sandbox layers stay in the report for audit but are not part of it. Agents
        see report hashes (MEMORY.md), so a tool edit that changes no result must not change them, or every
        recorded run would stop replaying; a tool edit that changes a result changes the hash through it.
        """
        data = _strip(json.loads(self.model_dump_json()), VOLATILE_FIELDS)
        data.pop("sandbox", None)
        data.pop("evidence", None)  # derived from the rest
        if data.get("npuarch") == DEFAULT_NPUARCH:  # the default architecture: recorded reports (which predate it) keep
            data.pop("npuarch", None)          # their hashes
        data["hashes"] = {k: v for k, v in data.get("hashes", {}).items() if k not in TOOL_HASH_KEYS}
        return data

    def outcome(self) -> dict[str, Any]:
        """What happened, without any measurement: verdict, per-case status, per-leaf pass/fail, error kinds."""
        return {
            "target": self.target, "kind": self.kind, "module": self.module, "verdict": self.verdict,
            "cases": [{"name": c.name, "status": c.status,
                       "leaves": [[leaf.path, leaf.all_close] for leaf in c.leaves],
                       "error": [c.error.type, c.error.code, c.error.line] if c.error else None} for c in self.cases],
        }

    def compute_evidence(self) -> str:
        """The identity agents see (MEMORY.md, dev log, cleanup header): input files + outcome, never numbers.

        ``report_hash`` covers full-precision statistics, whose last bits differ between CPUs; shown to an
        agent it would make every recorded run machine-specific (ARCHITECTURE §0.2). It stays for the audit.
        """
        inputs = {k: v for k, v in self.hashes.items() if k not in TOOL_HASH_KEYS}
        return evidence_id(inputs, self.outcome())

    def compute_hash(self) -> str:
        blob = json.dumps(self.canonical_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    def to_json(self, indent: int | None = 2) -> str:
        """JSON with sorted keys (byte-identical for identical inputs apart from volatile fields)."""
        return json.dumps(json.loads(self.model_dump_json()), sort_keys=True, indent=indent, ensure_ascii=True)

    # -------------------------------------------------------------------------------------- views
    @property
    def summary(self) -> str:
        """One line for logs and state: verdict, cases passed, first reason."""
        passed = sum(1 for c in self.cases if c.status == "pass")
        first = f": {self.reasons[0]}" if self.reasons else ""
        return f"{self.verdict} {self.target} ({passed}/{len(self.cases)} cases pass){first}"[:500]

    def stats(self) -> dict[str, Any]:
        """Worst statistics over all cases and leaves (the numbers a MEMORY.md row quotes)."""
        leaves = [leaf for c in self.cases for leaf in c.leaves]
        tol = sorted({(c.dtype, c.rtol, c.atol) for c in self.cases})
        return {
            "all_close": bool(leaves) and all(leaf.all_close for leaf in leaves),
            "out_of_tolerance_ratio": max((leaf.out_of_tolerance_ratio for leaf in leaves), default=0.0),
            "max_diff": max((leaf.max_diff for leaf in leaves), default=0.0),
            "rtol": "/".join(f"{r:g}" for _, r, _ in tol) or "-",
            "atol": "/".join(f"{a:g}" for _, _, a in tol) or "-",
            "cases": len(self.cases),
            "failing_leaves": sorted({f"{c.name}:{leaf.path}" for c in self.cases for leaf in c.leaves
                                      if not leaf.all_close}),
        }

    def memory_row(self) -> str:
        """One MEMORY.md verification-log row: when | module | file | tensors | rtol | atol | all_close |
        out_of_tolerance share | max_diff | verdict and evidence id.

        Agents read MEMORY.md, so the row holds only what is stable across machines (ARCHITECTURE §0.2): a
        pass shows no numbers, a failure a coarse share and two significant digits, and the identity is the
        evidence id (inputs + outcome), not the report hash.
        """
        s = self.stats()
        module = f"M{self.module}" if self.module is not None else ("final" if self.kind == "final" else "-")
        passed = bool(s["all_close"])
        share = coarse_share(float(s["out_of_tolerance_ratio"])) if self.cases and not passed else "-"
        max_diff = f"{coarse(float(s['max_diff']))}" if self.cases and not passed else "-"
        cells = [self.created_at or "-", module, self.target, ", ".join(self.expected_leaves) or "-",
                 s["rtol"], s["atol"], str(s["all_close"]), share, max_diff,
                 f"{self.verdict} {(self.evidence or self.compute_evidence())[:12]}"]
        return "| " + " | ".join(c.replace("|", "/") for c in cells) + " |"

    def sanitized(self) -> dict[str, Any]:
        """THE agent-visible view of this report (debugger, feedback): a function of inputs and outcomes.

        No golden values beyond a few worst elements of a failing leaf; no timing, no host facts (sandbox
        layers, stderr), no tool source hashes, no report hash; measurements coarsened by
        :mod:`runtime.agent_view` (passing leaves carry no numbers). The exact report stays on disk for the
        audit. Whatever is here must be identical on every machine, or a recorded run could not replay there.
        """
        data = _strip(json.loads(self.model_dump_json()), _FORBIDDEN_FOR_AGENTS | VOLATILE_FIELDS)
        for key in ("sandbox", "evidence", "schema_version", "tool", "unseen_seed", "pypto_target_source"):
            data.pop(key, None)
        if data.get("pypto_target") == DEFAULT_TARGET:  # the default target goes without saying (recorded runs predate it)
            data.pop("pypto_target", None)
        if data.get("npuarch") == DEFAULT_NPUARCH:  # the default architecture too
            data.pop("npuarch", None)
        data["hashes"] = {k: v for k, v in data.get("hashes", {}).items() if k not in TOOL_HASH_KEYS}
        for case in data.get("cases", []):
            case["leaves"] = [leaf_view(leaf) for leaf in case.get("leaves", [])]
            if case.get("unseen"):  # its seed would tell the run's unseen seed; agents see shape and outcome
                case.pop("seed", None)
        data["evidence"] = self.evidence or self.compute_evidence()
        s = self.stats()
        passed = bool(s["all_close"])
        data["summary"] = {"all_close": passed, "cases": s["cases"], "rtol": s["rtol"], "atol": s["atol"],
                           "failing_leaves": s["failing_leaves"]}
        if self.cases and not passed:
            data["summary"]["out_of_tolerance"] = coarse_share(float(s["out_of_tolerance_ratio"]))
            data["summary"]["max_diff"] = coarse(float(s["max_diff"]))
        return coarse_tree(data)


def _strip(obj: Any, keys: frozenset[str]) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v, keys) for k, v in obj.items() if k not in keys}
    if isinstance(obj, list):
        return [_strip(v, keys) for v in obj]
    return obj
