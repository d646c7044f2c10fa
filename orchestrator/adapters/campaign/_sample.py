"""What a worker does: prepare a task once, run one (task, sample) through the pipeline's run API.

Both functions take and return plain JSON-able dicts (they cross a Ray boundary, possibly to another host)
and touch only the campaign directory. A sample is an ordinary pipeline run in its own op dir copy
(``runs/<task>/s<k>/``), started with :func:`orchestrator.api.run` or, when that op dir already holds a run
(a killed worker, a stopped driver, a gate decision recorded since), continued with
:func:`orchestrator.api.resume` from its LangGraph checkpoint. A run that already ended is read back, never
run again.

Failures are sorted in two kinds: the task's (a verdict, the design, intake, the agents' configuration: a
final ``failed`` line) and the infrastructure's (:class:`InfraError`: the worker or the machine, a model
endpoint that is down, a run that stopped for a cause that is not the candidate's), which the driver retries.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import time
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from orchestrator.adapters.campaign._ledger import SampleResult
from orchestrator.adapters.campaign._suite import Task
from orchestrator.errors import ForgeError
from runtime.verdicts import Verdict

__all__ = ["InfraError", "Prepared", "SampleSpec", "categorize", "prepare_task", "run_sample"]

log = logging.getLogger(__name__)

_VERDICT_CATEGORY: dict[str, str] = {Verdict.FAIL_LINT: "lint", Verdict.FAIL_NUMERIC: "numeric", Verdict.FAIL_RUNTIME: "runtime",
                     Verdict.FAIL_CHEAT: "cheat", Verdict.ERROR: "runtime"}


class InfraError(RuntimeError):
    """Not the task's failure: retried by the driver (and counted apart)."""


class Prepared(BaseModel):
    """``tasks/<id>/prepared.json``: the op dir the samples copy, or why the task cannot run."""

    model_config = ConfigDict(extra="ignore")

    ok: bool
    op_dir: str
    """Absolute path of the op dir whose inputs every sample copies."""
    reason: str = ""
    cases: int = 0
    notes: list[str] = []


class SampleSpec(BaseModel):
    """Everything a worker needs for one (task, sample)."""

    campaign_dir: str
    task: Task
    sample: int
    op_source: str
    agents: str | None = None
    model_options: dict[str, str] = {}
    gates: Literal["auto", "stop"] = "auto"
    budget: int = 10
    module_gate: bool = False
    perf: bool = False


def _worker() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def prepare_task(campaign_dir: str, task: dict[str, Any]) -> dict[str, Any]:
    """Import a task file into ``tasks/<id>/`` (or check an op dir with intake) once per campaign."""
    from runtime.opdir import intake

    t = Task.model_validate(task)
    home = Path(campaign_dir) / "tasks" / t.id
    record = home / "prepared.json"
    if record.is_file():
        return Prepared.model_validate_json(record.read_text(encoding="utf-8")).model_dump()
    home.mkdir(parents=True, exist_ok=True)
    if t.kind == "task_file":
        from orchestrator.adapters.kernelbench import TaskImportError, import_task

        dest = home / "opdir"
        shutil.rmtree(dest, ignore_errors=True)
        try:
            imported = import_task(t.source, dest)
            prepared = Prepared(ok=True, op_dir=str(dest), cases=imported.cases, notes=imported.unmapped)
        except TaskImportError as exc:
            prepared = Prepared(ok=False, op_dir=str(dest), reason=f"cannot import: {exc}")
    else:
        rep = intake(t.source, timeout=120.0)
        first = "; ".join(str(p) for p in rep.problems[:2])
        prepared = Prepared(ok=rep.ok, op_dir=t.source, cases=len(rep.cases),
                            reason="" if rep.ok else f"intake: {first}")
    tmp = record.with_suffix(".tmp")
    tmp.write_text(prepared.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, record)
    return prepared.model_dump()


Status = Literal["solved", "failed", "parked"]


def categorize(result: Any) -> tuple[Status, str | None, str]:
    """(status, category, message) of a :class:`orchestrator.api.RunResult`.

    Raises:
        InfraError: the run stopped or was interrupted for a cause that is not the candidate's.
    """
    if result.status == "delivered":
        return "solved", None, ""
    if result.status == "waiting":
        gate = result.gate.gate if result.gate is not None else "?"
        return "parked", None, f"waiting at gate {gate}"
    if result.status != "aborted":
        raise InfraError(f"run {result.run_id} {result.status}: {result.cause or result.message}".strip())
    cause = result.cause or ""
    if cause.startswith(("design budget exhausted", "design check keeps failing")) or not result.modules:
        return "failed", "design_rejected", cause
    if "same blocking lint finding" in cause:
        return "failed", "lint", cause
    verdicts = [m.verdict for m in result.modules if m.verdict and m.verdict != Verdict.PASS]
    verdict = (result.final or {}).get("verdict")
    if verdict and verdict != Verdict.PASS:
        verdicts.append(verdict)
    if verdicts:
        return "failed", _VERDICT_CATEGORY.get(str(verdicts[-1]), "runtime"), cause
    return "failed", "budget", cause


def _metrics(op_dir: Path, result: Any) -> dict[str, Any]:
    from agents.trace import read_events
    from orchestrator.store.paths import trace_dir

    calls = prompt = completion = 0
    costs: list[float] = []
    try:
        events, _ = read_events(trace_dir(op_dir, result.run_id) / "events.jsonl", torn_ok=True)
    except Exception:  # noqa: BLE001 - a run without a readable trace still has a verdict
        events = []
    for e in events:
        if getattr(e, "kind", None) != "llm_call":
            continue
        calls += 1
        prompt += int(e.usage.get("prompt_tokens", 0))
        completion += int(e.usage.get("completion_tokens", 0))
        if e.cost_usd is not None:
            costs.append(float(e.cost_usd))
    final = result.final or {}
    perf = final.get("perf") or {}
    shapes = (final.get("toolchain") or {}).get("shapes") or []
    cycles = [float(s["total_cycles"]) for s in shapes if s.get("total_cycles") is not None]
    first = float(perf["baseline"]) if perf.get("scorer") == "cost_model" and perf.get("baseline") is not None \
        else (sum(cycles) if cycles else None)
    last = float(perf["delivered_score"]) if perf.get("scorer") == "cost_model" and \
        perf.get("delivered_score") is not None else first
    return {"attempts": sum(m.attempts for m in result.modules), "model_calls": calls, "prompt_tokens": prompt,
            "completion_tokens": completion, "cost_usd": sum(costs) if costs else None, "cycles_first": first,
            "cycles_final": last}


def _fresh_copy(source: Path, op_dir: Path) -> None:
    from orchestrator.api import copy_op_inputs

    partial = op_dir.with_name(op_dir.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    op_dir.parent.mkdir(parents=True, exist_ok=True)
    copy_op_inputs(source, partial, traces=True)
    os.replace(partial, op_dir)


def run_sample(spec_data: dict[str, Any]) -> dict[str, Any]:
    """Run (or continue, or read back) one sample; returns a :class:`SampleResult` as a dict.

    Raises:
        InfraError: an infrastructure failure (the driver retries the sample; its checkpoint is kept).
    """
    from orchestrator import api
    from orchestrator.store.paths import list_runs

    spec = SampleSpec.model_validate(spec_data)
    root = Path(spec.campaign_dir)
    op_dir = root / "runs" / spec.task.id / f"s{spec.sample}"
    base: dict[str, Any] = {"task": spec.task.id, "sample": spec.sample, "level": spec.task.level,
            "op_dir": op_dir.relative_to(root).as_posix(), "worker": _worker()}
    start = time.monotonic()
    if not (op_dir / "SPEC.md").is_file():
        _fresh_copy(Path(spec.op_source), op_dir)
    agents = spec.task.agents or spec.agents
    resumed = False
    try:
        if list_runs(op_dir):
            current = api.status(op_dir)
            if current.status in ("delivered", "aborted"):
                result = current
            elif current.status == "waiting" and current.pending_decision is None:
                result = current
            else:
                resumed = True
                result = api.resume(op_dir)
        else:
            if agents is None:
                kind, why = api.describe_agents(op_dir, spec.model_options)
                if kind == "local":  # a campaign never falls back to the embedded local model unasked (a
                    # 135M model on every task for minutes each; docs/campaign.md: such a task fails `no_agent`)
                    kind, why = "none", ("no model configured and no shipped trace (a campaign uses the embedded "
                                         "local model only when asked: --model local)")
                if kind == "none":
                    return SampleResult(**base, status="failed", category="no_agent", message=why,
                                        wall_s=round(time.monotonic() - start, 3)).model_dump()
            result = api.run(op_dir, api.RunOptions(agents=agents, approve=spec.gates,
                                                    budget=spec.task.budget or spec.budget,
                                                    module_gate=spec.module_gate, model_options=spec.model_options,
                                                    perf=spec.perf))
    except ForgeError as exc:
        bad = "intake" if "intake" in exc.message.split("\n")[0] else "no_agent"
        return SampleResult(**base, status="failed", category=bad, message=exc.message.splitlines()[0],
                            wall_s=round(time.monotonic() - start, 3)).model_dump()
    except InfraError:
        raise
    except Exception as exc:  # noqa: BLE001 - anything else is the machine's or the endpoint's: retried
        log.debug("sample %s/%s failed", spec.task.id, spec.sample, exc_info=True)
        raise InfraError(f"{type(exc).__name__}: {exc}"[:500]) from None
    status, category, why = categorize(result)
    parked_at = result.gate.gate if status == "parked" and result.gate is not None else None
    return SampleResult(**base, status=status, category=category, message=why, run_id=result.run_id, gate=parked_at,
                        wall_s=round(time.monotonic() - start, 3), resumed=resumed,
                        **_metrics(op_dir, result)).model_dump()
