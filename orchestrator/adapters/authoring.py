"""Author a shipped trace: play a hand-written script through the real agent roles, in record mode.

Why: the workspace operators must replay offline on a fresh machine, and their traces must exercise the
real path - prompts rendered by ``agents.roles``, answers parsed and checked by the roles, tool calls, the
recorder, gates, the live verification tool. Hand-editing events.jsonl would test nothing. Instead a
maintainer writes the *answers* (DESIGN.md, stage files per attempt, debugger patch proposals, audit rows,
gate decisions) in ``<op>/authoring/script.yaml``, and this module plays them as the "model" of a normal
recorded run: a :class:`~agents.llm.ScriptedProvider` answers each request with the JSON the role expects
for the dispatch the orchestrator is making right now. The resulting trace is copied to
``<op>/traces/<name>/``; its manifest says it was authored, not recorded from a live model.

Script keys (paths relative to the script): ``producer``, ``design`` (one entry per design attempt),
``implement`` (module id -> file per attempt), ``debug`` (module id -> [{attempt, diagnosis, proposals, tool?}];
``tool: {name, args}`` is one read-only tool call the debugger makes before answering, e.g. ``bisect``),
``audit`` (module id or ``final`` -> [{index, pypto_call, line}]), ``decisions`` (gate decisions in order).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents.contracts import (
    AuditContext,
    AuditResult,
    DebugContext,
    DebugResult,
    DesignContext,
    DesignResult,
    ImplementContext,
    ImplementResult,
)
from agents.trace import TraceReader, read_events
from orchestrator.adapters.scripted import is_perf_dispatch, pick_attempt
from orchestrator.core.logical_clock import LogicalClock
from orchestrator.core.second_opinion import known_answers as known_toolchain_answers
from orchestrator.errors import ForgeError, no_op_dir
from orchestrator.gates import GateDecision, GateRequest
from runtime.yamlio import load_yaml

__all__ = ["AUTHOR_BASE_URL", "AUTHOR_MODEL", "AuthoredTrace", "author_trace"]

AUTHOR_MODEL = "workspace-author"
"""The model name an authored trace records for every role (no real model answered)."""
AUTHOR_BASE_URL = "scripted://workspace-author"
AUTHOR_ORIGIN = "2026-01-01T00:00:00+00:00"
"""Logical start time of authored runs (replays reproduce it from the manifest)."""


@dataclass
class AuthoredTrace:
    """Where the trace went and what the authored run did."""

    op_dir: Path
    trace_dir: Path
    status: str
    llm_calls: int
    tool_calls: int
    decisions: int
    portability: list[str] = field(default_factory=list)
    """One line per simulated machine the trace was replayed on before shipping (empty: not checked)."""


@dataclass
class _Answers:
    """The model's side of the script: the responses for the dispatch being made right now."""

    script: dict[str, Any]
    base: Path
    pending: list[Any] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    used_decisions: int = 0
    tool_calls: int = 0

    def read(self, rel: str) -> str:
        path = (self.base / rel).resolve()
        if not path.is_file():
            raise ForgeError(f"authoring script {self.base / 'script.yaml'}: file not found: {rel}")
        return path.read_text(encoding="utf-8")

    # -- what the roles will answer -------------------------------------------------------------------

    def steer(self, role: str, answer: dict[str, Any], *, tool: tuple[str, dict[str, str]] | None = None) -> None:
        from agents.llm import text_response, tool_response

        if self.pending:
            raise ForgeError(f"authoring: {len(self.pending)} scripted response(s) were never requested "
                             f"before the {role} dispatch")
        if tool is not None:
            self.tool_calls += 1
            self.pending.append(tool_response(tool[0], json.dumps(tool[1]), call_id=f"call_{self.tool_calls}"))
        self.pending.append(text_response(json.dumps(answer, ensure_ascii=False)))

    def __call__(self, request: Any) -> Any:
        if not self.pending:
            raise ForgeError("authoring: the roles asked the model more often than the script answers "
                             "(an answer was rejected by a role's checks? run the tests in tests/workspace)")
        return self.pending.pop(0)

    def design(self, ctx: DesignContext) -> None:
        entry = pick_attempt(list(self.script["design"]), ctx.attempt)
        answer = {"design_md": self.read(entry["design_md"]),
                  "module_interfaces_yaml": self.read(entry["module_interfaces_yaml"]),
                  "rationale": entry.get("rationale")}
        tool = ("read_skill", {"section": "design-template"}) if ctx.attempt == 1 else None
        self.steer("designer", answer, tool=tool)

    def implement(self, ctx: ImplementContext) -> None:
        files = self.script["implement"].get(ctx.module) or self.script["implement"].get(str(ctx.module))
        if is_perf_dispatch(ctx):  # performance stage: one variant file per perf dispatch
            files = self.script.get("perf")
        if not files:
            raise ForgeError(f"authoring: no implement entry for module {ctx.module}")
        entry = pick_attempt(list(files), ctx.attempt)
        rel = entry["file"] if isinstance(entry, dict) else entry
        content = self.read(rel)
        # a fix attempt lints its draft first, as a careful implementer would
        tool = ("lint_draft", {"source": content}) if ctx.attempt > 1 else None
        self.steer("implementer", {"path": ctx.target_file, "content": content, "notes": ""}, tool=tool)

    def audit(self, ctx: AuditContext, final: bool) -> None:
        table = self.script.get("audit") or {}
        key: Any = "final" if final and "final" in table else ctx.module
        rows = table.get(key) or table.get(str(key)) or []
        in_scope = set(ctx.rows_in_scope)
        answer_rows = [{"index": r["index"], "status": "✅", "pypto_call": r["pypto_call"], "line": r["line"]}
                       for r in rows if r["index"] in in_scope]
        covered = {r["index"] for r in answer_rows}
        missing = sorted(in_scope - covered)
        answer_rows += [{"index": i, "status": "❌", "pypto_call": "", "line": None} for i in missing]
        verdict = "block" if missing else "ok"
        summary = (f"{len(covered)}/{len(in_scope)} inventory rows in scope implemented in {ctx.target_file}"
                   + (f"; rows {missing} are missing" if missing else "; each row's pypto call checked at its line"))
        self.steer("verifier", {"rows": sorted(answer_rows, key=lambda r: r["index"]), "verdict": verdict,
                                "summary": summary})

    def debug(self, ctx: DebugContext) -> None:
        entries = (self.script.get("debug") or {}).get(ctx.module) or \
            (self.script.get("debug") or {}).get(str(ctx.module)) or []
        match = [e for e in entries if int(e.get("attempt", 0)) == ctx.attempt]
        if not match:
            raise ForgeError(f"authoring: no debug answer for module {ctx.module} attempt {ctx.attempt}")
        entry = match[0]
        # an entry may name one read-only tool the debugger calls first (e.g. bisect with checkpoints)
        spec = entry.get("tool")
        tool = (str(spec["name"]), {str(k): str(v) for k, v in (spec.get("args") or {}).items()}) if spec else None
        self.steer("debugger", {"diagnosis": entry["diagnosis"], "proposals": entry["proposals"]}, tool=tool)

    # -- what the human decides ------------------------------------------------------------------------

    def decide(self, req: GateRequest) -> GateDecision:
        if self.used_decisions >= len(self.decisions):
            raise ForgeError(f"authoring: the run reached gate {req.gate!r} but the script has no decision left")
        entry = self.decisions[self.used_decisions]
        if entry.get("gate") != req.gate:
            raise ForgeError(f"authoring: the run reached gate {req.gate!r} (module {req.module}) but the next "
                             f"scripted decision is for gate {entry.get('gate')!r}")
        self.used_decisions += 1
        return GateDecision(decision=entry["decision"], note=str(entry.get("note") or ""))


class _SteeredAgents:
    """The real LLM roles, with the scripted model told which dispatch comes next."""

    def __init__(self, inner: Any, answers: _Answers, op_name: str) -> None:
        self.inner, self.answers, self.op_name = inner, answers, op_name

    def design(self, ctx: DesignContext) -> DesignResult:
        self.answers.design(ctx)
        return self.inner.design(ctx)

    def implement(self, ctx: ImplementContext) -> ImplementResult:
        self.answers.implement(ctx)
        return self.inner.implement(ctx)

    def audit(self, ctx: AuditContext) -> AuditResult:
        self.answers.audit(ctx, final=ctx.target_file == f"{self.op_name}_impl.py")
        return self.inner.audit(ctx)

    def debug(self, ctx: DebugContext) -> DebugResult:
        self.answers.debug(ctx)
        return self.inner.debug(ctx)


def load_script(path: Path) -> dict[str, Any]:
    """The authoring script at ``path``; a missing one, a folder or an unreadable file is one sentence saying what
    to give (UX audit s47: ``author /tmp/file`` printed ``[Errno 20] Not a directory``)."""
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "does not exist"
        raise ForgeError(f"no authoring script: {path} {what}; `author` re-records a trace from an op's hand-written "
                         "answers (authoring/script.yaml, docs/workspace.md): give its op dir, or the file with "
                         "--script FILE")
    try:
        script = load_yaml(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ForgeError(f"cannot read authoring script {path}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None
    except OSError as exc:
        raise ForgeError(f"cannot read authoring script {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ForgeError(f"cannot read authoring script {path}: {exc}") from None
    if not isinstance(script, dict) or not script.get("design") or not script.get("implement"):
        raise ForgeError(f"authoring script {path}: needs at least 'design' and 'implement' entries")
    return script


def author_trace(op_dir: Path | str, *, script: Path | str | None = None, name: str = "default",
                 check: bool = True, on_check: Any = None) -> AuthoredTrace:
    """Play ``<op>/authoring/script.yaml`` in record mode and ship the trace to ``<op>/traces/<name>/``.

    The run happens in a scratch copy of the op dir (SPEC.md + golden.py only), so the op dir itself only
    gains the trace. The manifest records the delivered artifacts' sha256 (``artifacts``). With ``check``,
    the trace ships only after it replayed byte-identically on simulated other machines
    (:func:`orchestrator.adapters.portability.check_trace`: ulp noise, no user namespaces, another BLAS core type).
    Raises ForgeError when the run does not end delivered, the script is out of step, or the check fails.
    """
    if not Path(op_dir).is_dir():
        raise ForgeError(no_op_dir(op_dir))
    if name in ("", ".", "..") or Path(name).name != name:  # `--name ../../x` wrote the trace outside traces/
        raise ForgeError(f"--name {name!r} is not a trace name: give one folder name (the trace goes to "
                         f"<op_dir>/traces/<name>/)", code=2)
    root = Path(op_dir).resolve()
    script_path = Path(script).resolve() if script else root / "authoring" / "script.yaml"
    data = load_script(script_path)  # before the pipeline loads (seconds): a mistake is said at once
    from agents.llm import ScriptedProvider
    from agents.roles import LLMAgents
    from agents.trace import Trace
    from orchestrator import api
    from orchestrator.store.paths import trace_dir

    answers = _Answers(script=data, base=script_path.parent, decisions=list(data.get("decisions") or []))
    with tempfile.TemporaryDirectory(prefix="forge-author-") as tmp:
        work = api.copy_op_inputs(root, Path(tmp) / root.name, traces=False)
        clock = LogicalClock.parse(AUTHOR_ORIGIN)
        run_id = f"authored-{root.name}"
        trace = Trace(trace_dir(work, run_id), run_id=run_id, mode="record", op_dir=work)
        config = {"model": AUTHOR_MODEL, "base_url": AUTHOR_BASE_URL}
        inner = LLMAgents(config, trace, op_dir=work, provider_factory=lambda: ScriptedProvider(answers),
                          base_url=AUTHOR_BASE_URL)
        agents = _SteeredAgents(inner, answers, op_name=_op_name(work))
        trace.update_manifest(producer=str(data.get("producer") or "authored for the workspace"),
                              authored=True, clock_origin=AUTHOR_ORIGIN)
        previous = root / "traces" / name / "events.jsonl"
        earlier = [e.model_dump(mode="json") for e in read_events(previous, torn_ok=True)[0]]  # the one parser
        seed = _shipped_seed(root / "traces" / name)
        with known_toolchain_answers(earlier):  # real-compiler answers of the shipped trace, for unchanged files
            result = api.run(work,
                             api.RunOptions(approve="prompt", run_id=run_id, perf=bool(data.get("perf")),
                                            perf_budget=len(data.get("perf") or []) or 3),
                             hooks=api.Hooks(prompt=answers.decide),
                             inject=api.Injected(agents=agents, trace=trace, clock=clock, unseen_seed=seed))
        if result.status == "delivered":
            from orchestrator.adapters.portability import artifact_digests

            trace.update_manifest(artifacts=artifact_digests(work))
        trace.close()
        if result.status != "delivered":
            raise ForgeError(f"authored run of {root.name} ended {result.status!r} at {result.node!r}, "
                             "not delivered: the script is out of step with the pipeline")
        if answers.used_decisions != len(answers.decisions):
            raise ForgeError(f"authoring: {len(answers.decisions) - answers.used_decisions} scripted decision(s) "
                             "were never asked for")
        report = None
        if check:
            from orchestrator.adapters.portability import check_trace

            report = check_trace(root, trace_dir(work, run_id), on_result=on_check)
            if not report.ok:
                raise ForgeError(f"{root.name}: the authored trace does not replay byte-identically on other "
                                 "machines, so it was not shipped:\n" + "\n".join(report.lines()))
        out = root / "traces" / name
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(trace_dir(work, run_id), out)
    events = TraceReader(out).events
    return AuthoredTrace(op_dir=root, trace_dir=out, status=result.status,
                         llm_calls=sum(e.kind == "llm_call" for e in events),
                         tool_calls=sum(e.kind == "tool_call" for e in events),
                         decisions=answers.used_decisions,
                         portability=report.lines() if report is not None else [])


def _shipped_seed(trace: Path) -> int | None:
    """The unseen-case seed of the trace being re-authored, or None (a new trace draws one). Why: the drawing a
    verification uses depends on the run seed (`runtime.opdir._unseen.unseen_version`: the shipped traces' seeds keep
    the drawing they were recorded with); re-authored with a fresh seed, a trace got the current drawing and broke
    at its next change (session 32: flash_attention)."""
    try:
        seed = json.loads((trace / "manifest.json").read_text(encoding="utf-8")).get("unseen_seed")
    except (OSError, ValueError):
        return None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def _op_name(op_dir: Path) -> str:
    from runtime.opdir import load_op_dir

    return load_op_dir(op_dir).spec.op_name
