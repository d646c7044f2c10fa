"""Deterministic scripted agents (an :class:`agents.contracts.AgentSet` without a model).

Why: every path of the graph (pass first time, lint failure then fix, numeric failure -> debug -> fix,
budget exhausted, design rejected, frozen-module violation) must be testable and demonstrable without an
LLM. A script file (YAML) names prepared files per role and attempt; the attempt number comes from the
context the orchestrator passes, never from an in-memory counter, so a run killed and resumed replays
exactly the same steps.

Script format (paths relative to the script file)::

    design:                      # entry i answers design attempt i+1 (the last entry repeats)
      - {design_md: DESIGN.md, module_interfaces_yaml: module_interfaces.yaml, rationale: null}
    implement:
      1: [m1_bad_lint.py, m1.py] # module id -> file per attempt (last repeats); or {file: f, path: p}
      2: [m12.py]
    debug: {diagnosis: "..."}   # optional
    audit: {block: {2: [1]}}     # optional: module -> attempts at which the audit blocks
    pause: {module: 2, attempt: 1, marker: /abs/marker, seconds: 60}   # optional (crash tests)
"""

from __future__ import annotations

import logging
import re
import time
from pathlib import Path

import yaml

from agents.contracts import (
    AgentError,
    AuditContext,
    AuditResult,
    AuditRow,
    DebugContext,
    DebugResult,
    DesignContext,
    DesignResult,
    ImplementContext,
    ImplementResult,
    PatchProposal,
)
from orchestrator.adapters.script_check import ScriptProblem, check_data
from orchestrator.core.perf import PERF_MARKER
from orchestrator.errors import ForgeError
from runtime.yamlio import load_yaml

log = logging.getLogger(__name__)

_PYPTO_CALL = re.compile(r"\bpypto\.([A-Za-z_][\w.]*)\s*\(")


_OPERATOR = re.compile(r"=\s*[^=#]*?([*/+-])")


_NOT_COMPUTE = ("pypto.frontend", "pypto.Tensor", "pypto.loop", "pypto.set_", "pypto.DT_", "view(")


def compute_lines(source: str) -> list[tuple[int, str]]:
    """(line, call) of the tile computations in a kernel: assignments that are no views.

    A deterministic stand-in for the verifier agent's reading of the code; the audit node checks the
    answer against the file like any other. Lines annotated with their tile shape (``# [rows, cols]``, the
    workspace kernels' habit) are taken first; a kernel without such comments is read from its ``pypto.``
    calls and arithmetic assignments (a correct kernel without them was blocked, attempt after attempt).
    """
    annotated, plain = [], []
    for i, line in enumerate(source.splitlines(), start=1):
        code, _, comment = line.partition("#")
        if "=" not in code or "np." in code or any(s in code for s in _NOT_COMPUTE) or code.lstrip().startswith("def "):
            continue
        m = _PYPTO_CALL.search(code)
        found = f"pypto.{m.group(1)}" if m else (op.group(1) if (op := _OPERATOR.search(code)) else None)
        if found is None:
            continue
        (annotated if comment.strip().startswith("[") else plain).append((i, found))
    return annotated or plain


def is_perf_dispatch(ctx: ImplementContext) -> bool:
    """True for an implementer dispatch of the performance stage (its feedback starts with the perf marker)."""
    return bool(ctx.feedback) and ctx.feedback[-1].startswith(PERF_MARKER)


def pick_attempt(entries: list, attempt: int):
    """Entry ``attempt`` (1-based) of a per-attempt list; the last entry repeats for later attempts."""
    return entries[min(max(attempt, 1), len(entries)) - 1]


class ScriptedAgents:
    """Answers every role from a script; see the module docstring for the format."""

    def __init__(self, script_path: Path | str) -> None:
        self.path = Path(script_path).resolve()
        if not self.path.is_file():
            raise ForgeError(f"agent script not found: {script_path}")
        try:
            data = load_yaml(self.path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ForgeError(f"agent script {script_path} is not valid YAML: {exc}") from exc
        self.base = self.path.parent
        try:
            check_data(data, self.base)
        except ScriptProblem as exc:
            raise ForgeError(f"agent script {script_path}: {exc}", code=2) from None
        self.script = data
        self.calls: list[tuple[str, int, int]] = []

    def _read(self, rel: str) -> str:
        p = self.base / rel
        if not p.is_file():
            raise AgentError("scripted", f"script file {rel} not found")
        return p.read_text(encoding="utf-8")

    def design(self, ctx: DesignContext) -> DesignResult:
        self.calls.append(("design", 0, ctx.attempt))
        entries = self.script.get("design") or []
        if not entries:
            raise AgentError("designer", "the script has no design entries")
        e = pick_attempt(entries, ctx.attempt)
        return DesignResult(design_md=self._read(e["design_md"]),
                            module_interfaces_yaml=self._read(e["module_interfaces_yaml"]),
                            rationale=e.get("rationale"))

    def implement(self, ctx: ImplementContext) -> ImplementResult:
        self.calls.append(("implement", ctx.module, ctx.attempt))
        self._maybe_pause(ctx.module, ctx.attempt)
        table = self.script.get("implement") or {}
        entries = table.get(ctx.module) or table.get(str(ctx.module))
        if is_perf_dispatch(ctx):  # performance stage: `perf: [variant files]` (orchestrator.core.perf)
            entries = self.script.get("perf") or []
            if not entries:
                raise AgentError("implementer", "the script has no perf variants")
        if not entries:
            raise AgentError("implementer", f"the script has no files for module {ctx.module}")
        e = pick_attempt(entries, ctx.attempt)
        if isinstance(e, str):
            e = {"file": e}
        if e.get("error"):
            raise AgentError("implementer", str(e["error"]))
        return ImplementResult(path=e.get("path", ctx.target_file), content=self._read(e["file"]),
                               notes=f"scripted {e['file']}")

    def audit(self, ctx: AuditContext) -> AuditResult:
        blocks = (self.script.get("audit") or {}).get("block") or {}
        attempts = blocks.get(ctx.module) or blocks.get(str(ctx.module)) or []
        self.calls.append(("audit", ctx.module, 0))
        calls = compute_lines(ctx.source)
        rows = []
        for n, idx in enumerate(ctx.rows_in_scope):
            if calls:
                line, call = calls[min(n, len(calls) - 1)]
                rows.append(AuditRow(index=idx, status="✅", pypto_call=call, line=line))
            else:
                rows.append(AuditRow(index=idx, status="❌"))
        block = bool(attempts) and self._attempt_hint(ctx) in attempts
        if block:
            return AuditResult(rows=rows, verdict="block", summary=f"M{ctx.module}: golden coverage incomplete")
        if any(r.status == "❌" for r in rows):
            return AuditResult(rows=rows, verdict="block", summary=(
                f"M{ctx.module}: golden coverage incomplete: the scripted auditor found no computation in "
                f"{ctx.target_file} (it maps inventory rows to `pypto.<op>(...)` calls and arithmetic assignments)"))
        return AuditResult(rows=rows, verdict="ok", summary=f"M{ctx.module}: all {len(rows)} rows in scope covered")

    @staticmethod
    def _attempt_hint(ctx: AuditContext) -> int:
        return int(ctx.verify_summary.get("attempt", 1)) if isinstance(ctx.verify_summary, dict) else 1

    def debug(self, ctx: DebugContext) -> DebugResult:
        self.calls.append(("debug", ctx.module, ctx.attempt))
        diag = (self.script.get("debug") or {}).get("diagnosis", "scripted diagnosis")
        first = ctx.source.splitlines()[:1] or [""]
        return DebugResult(diagnosis=f"{diag} (verdict {ctx.report.get('verdict')})", proposals=[PatchProposal(
            file=ctx.failing_file, line_start=1, line_end=1, current_snippet=first[0], proposed_snippet=first[0],
            expected_effect="the module output matches its golden boundary", evidence="scripted")])

    def _maybe_pause(self, module: int, attempt: int) -> None:
        pause = self.script.get("pause")
        if not pause or int(pause.get("module", -1)) != module or int(pause.get("attempt", 1)) != attempt:
            return
        marker = Path(pause["marker"])
        if marker.exists():  # pause once: a resumed run goes straight through
            return
        marker.write_text("paused\n", encoding="utf-8")
        time.sleep(float(pause.get("seconds", 60)))
