"""The campaign driver: plan (task, sample) pairs, skip what is finished, run the rest, record as they end.

Order of work: every task is prepared once (a task file imported into ``tasks/<id>/opdir``, an op dir checked
by intake) as a task of its own; a task that cannot be prepared gets a final ``failed`` line per sample
(category ``intake``) and nothing runs for it. Then every sample without a final line runs (or continues:
see :mod:`._sample`), at most ``workers`` at a time. A finished sample's line is written at once (fsynced); a
re-run of the same command reads them and never runs a finished sample again. An infrastructure failure
(a worker killed, the machine, the model endpoint) is an ``infra`` line and the sample is submitted again, up
to ``retries`` times, continuing from its checkpoint; a sample over its wall-time limit is cancelled and
counts as failed (category ``budget``). Ctrl-C cancels what runs, shuts Ray down and raises
:class:`CampaignStopped`; nothing finished is lost and the next run continues.
"""

from __future__ import annotations

import datetime as _dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.adapters.campaign._executor import Executor, WorkFailed
from orchestrator.adapters.campaign._ledger import CampaignConfig, Ledger, SampleResult, SampleState
from orchestrator.adapters.campaign._sample import Prepared, SampleSpec
from orchestrator.adapters.campaign._suite import Task, load_suite
from orchestrator.errors import ForgeError

__all__ = ["CampaignProgress", "CampaignStopped", "ProgressFn", "run_campaign"]

log = logging.getLogger(__name__)


class CampaignStopped(Exception):
    """Ctrl-C (or SIGTERM) stopped the campaign; what finished is recorded, the rest continues on a re-run."""


@dataclass
class CampaignProgress:
    """What the live progress line shows."""

    total: int
    done: int = 0
    solved: int = 0
    failed: int = 0
    parked: int = 0
    running: int = 0
    infra: int = 0
    skipped: int = 0
    """Samples that were already final when this run started (not run again)."""
    eta_s: float | None = None
    last: str = ""
    durations: list[float] = field(default_factory=list)


ProgressFn = Callable[[CampaignProgress], None]


@dataclass
class _Pending:
    kind: str
    task: Task
    sample: int = -1
    started: float = 0.0


def _check_resources(tasks: list[Task], have: dict[str, float]) -> None:
    for t in tasks:
        for name, amount in t.resources.items():
            if have.get(name, 0.0) < amount:
                hint = " (point --address at a cluster with NPU hosts)" if name == "NPU" else ""
                raise ForgeError(f"task {t.id} needs {name}: {amount:g}, the cluster has "
                                 f"{have.get(name, 0.0):g}{hint}")


def _open(out: Path, config: CampaignConfig) -> Ledger:
    ledger = Ledger(out)
    old = ledger.config()
    if old is not None:
        why = old.same_campaign(config)
        if why:
            raise ForgeError(f"{out} holds another campaign ({why}); give another --out, or the same options")
        config = config.model_copy(update={"created": old.created})
    elif out.exists() and any(out.iterdir()):
        raise ForgeError(f"{out} exists and is not a campaign directory; give a new or empty --out")
    if not config.created:
        config = config.model_copy(update={"created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")})
    ledger.write_config(config)
    return ledger


def run_campaign(suite: str | Path, out: str | Path, config: CampaignConfig, executor_factory: Callable[[], Executor],
                 *, workers: int = 1, progress: ProgressFn | None = None, poll_s: float = 0.5) -> Ledger:
    """Run (or continue) a campaign; returns its ledger.

    Raises:
        ForgeError: a bad suite, a directory holding another campaign, resources the cluster lacks, no Ray.
        CampaignStopped: interrupted (Ctrl-C / SIGTERM); re-run the same command to continue.
    """
    out = Path(out).resolve()
    tasks = load_suite(suite)
    config = config.model_copy(update={"suite": str(Path(suite).resolve())})
    ledger = _open(out, config)
    (out / "tasks.json").write_text(
        "[\n" + ",\n".join("  " + t.model_dump_json() for t in tasks) + "\n]\n", encoding="utf-8")
    states = ledger.states()
    state = CampaignProgress(total=len(tasks) * config.samples)
    state.skipped = sum(1 for t in tasks for k in range(config.samples)
                        if (st := states.get((t.id, k))) is not None and st.final is not None)
    state.done = state.skipped
    for st in states.values():
        if st.final is not None:
            state.solved += st.final.status == "solved"
            state.failed += st.final.status == "failed"
    if state.skipped == state.total:
        if progress:
            progress(state)
        return ledger
    executor = executor_factory()
    try:
        _check_resources(tasks, executor.available())
        _drive(out, tasks, config, ledger, states, executor, workers, state, progress, poll_s)
    except KeyboardInterrupt:
        raise CampaignStopped("campaign stopped") from None
    finally:
        executor.close()
    return ledger


def _drive(out: Path, tasks: list[Task], config: CampaignConfig, ledger: Ledger,
           states: dict[tuple[str, int], SampleState], executor: Executor, workers: int, state: CampaignProgress,
           progress: ProgressFn | None, poll_s: float) -> None:
    options = {k: v for k, v in (("model", config.model), ("base_url", config.base_url)) if v}
    queue: list[_Pending] = []
    sources: dict[str, str] = {}
    for t in tasks:
        if all((st := states.get((t.id, k))) is not None and st.final is not None for k in range(config.samples)):
            continue
        record = out / "tasks" / t.id / "prepared.json"
        queue.append(_Pending("prepare", t))
        if record.is_file():  # prepared by an earlier run: no need for a worker
            queue.pop()
            _prepared(Prepared.model_validate_json(record.read_text(encoding="utf-8")), t, config, ledger, states,
                      queue, sources, state)
    running: dict[Any, _Pending] = {}

    def tell(last: str = "") -> None:
        state.running = sum(1 for p in running.values() if p.kind == "sample")
        left = state.total - state.done - state.parked
        if state.durations and left > 0:
            mean = sum(state.durations) / len(state.durations)
            state.eta_s = mean * left / max(1, min(workers, left))
        elif left <= 0:
            state.eta_s = 0.0
        if last:
            state.last = last
        if progress:
            progress(state)

    tell()
    try:
        while queue or running:
            while queue and len(running) < workers:
                p = queue.pop(0)
                p.started = time.monotonic()
                if p.kind == "prepare":
                    handle = executor.submit("prepare", (str(out), p.task.model_dump()), {"CPU": 1.0})
                else:
                    spec = SampleSpec(campaign_dir=str(out), task=p.task, sample=p.sample,
                                      op_source=sources[p.task.id], agents=config.agents, model_options=options,
                                      gates=config.gates, budget=config.budget, module_gate=config.module_gate,
                                      perf=config.perf)
                    handle = executor.submit("sample", (spec.model_dump(),), p.task.resources)
                running[handle] = p
                tell()
            for handle in executor.wait(list(running), poll_s):
                p = running.pop(handle)
                elapsed = time.monotonic() - p.started
                try:
                    value = executor.result(handle)
                except WorkFailed as exc:
                    _failed_work(p, exc, elapsed, config, ledger, states, queue, state)
                    tell(f"{p.task.id} s{p.sample}: infrastructure failure ({exc.message[:80]})")
                    continue
                if p.kind == "prepare":
                    _prepared(Prepared.model_validate(value), p.task, config, ledger, states, queue, sources, state)
                    tell(f"{p.task.id}: prepared")
                    continue
                res = SampleResult.model_validate(value)
                res = res.model_copy(update={"wall_s": round(res.wall_s, 3)})
                _record(res, ledger, states, state, elapsed)
                tell(f"{res.task} s{res.sample}: {res.status}{' (' + res.category + ')' if res.category else ''}")
            now = time.monotonic()
            for handle, p in list(running.items()):
                if p.kind == "sample" and p.task.timeout and now - p.started > p.task.timeout:
                    executor.cancel(handle)
                    running.pop(handle)
                    res = SampleResult(task=p.task.id, sample=p.sample, level=p.task.level, status="failed",
                                       category="budget", wall_s=round(now - p.started, 3),
                                       message=f"wall-time limit of {p.task.timeout:g} s per sample reached",
                                       op_dir=f"runs/{p.task.id}/s{p.sample}")
                    _record(res, ledger, states, state, now - p.started)
                    tell(f"{p.task.id} s{p.sample}: over its time limit")
    except BaseException:
        for handle in list(running):
            executor.cancel(handle)
        raise
    tell("finished")


def _prepared(prep: Prepared, task: Task, config: CampaignConfig, ledger: Ledger,
              states: dict[tuple[str, int], SampleState], queue: list[_Pending], sources: dict[str, str],
              state: CampaignProgress) -> None:
    fresh: list[_Pending] = []
    for k in range(config.samples):
        st = states.get((task.id, k))
        if st is not None and st.final is not None:
            continue
        if not prep.ok:
            res = SampleResult(task=task.id, sample=k, level=task.level, status="failed", category="intake",
                               message=prep.reason)
            _record(res, ledger, states, state, None)
            continue
        sources[task.id] = prep.op_dir
        fresh.append(_Pending("sample", task, k))
    queue[0:0] = fresh  # a prepared task's samples go first: results (and the ETA) come early


def _record(res: SampleResult, ledger: Ledger, states: dict[tuple[str, int], SampleState], state: CampaignProgress,
            elapsed: float | None) -> None:
    st = states.setdefault((res.task, res.sample), SampleState())
    if res.status == "parked":
        if st.parked is not None and st.parked.run_id == res.run_id and st.parked.gate == res.gate:
            return  # still waiting at the same gate: nothing new to record
        st.parked = ledger.append(res)
        state.parked += 1
        return
    if st.parked is not None:
        state.parked = max(0, state.parked - 1)
    st.final, st.parked = ledger.append(res), None
    state.done += 1
    state.solved += res.status == "solved"
    state.failed += res.status == "failed"
    if elapsed is not None:
        state.durations.append(elapsed)


def _failed_work(p: _Pending, exc: WorkFailed, elapsed: float, config: CampaignConfig, ledger: Ledger,
                 states: dict[tuple[str, int], SampleState], queue: list[_Pending], state: CampaignProgress) -> None:
    state.infra += 1
    if p.kind == "prepare":
        st_key = (p.task.id, -1)
        st = states.setdefault(st_key, SampleState())
        st.infra += 1
        if st.infra <= config.retries:
            queue.append(_Pending("prepare", p.task))
            return
        prep = Prepared(ok=False, op_dir="", reason=f"preparing the task failed {st.infra} times: {exc.message}")
        for k in range(config.samples):
            res = SampleResult(task=p.task.id, sample=k, level=p.task.level, status="failed", category="infra",
                               message=prep.reason)
            _record(res, ledger, states, state, None)
        return
    st = states.setdefault((p.task.id, p.sample), SampleState())
    ledger.append(SampleResult(task=p.task.id, sample=p.sample, level=p.task.level, status="infra",
                               message=exc.message, wall_s=round(elapsed, 3),
                               op_dir=f"runs/{p.task.id}/s{p.sample}"))
    st.infra += 1
    if st.infra <= config.retries:
        queue.insert(0, _Pending("sample", p.task, p.sample))  # continue it next, from its checkpoint
        return
    _record(SampleResult(task=p.task.id, sample=p.sample, level=p.task.level, status="failed", category="infra",
                         message=f"{st.infra} infrastructure failures; last: {exc.message}",
                         op_dir=f"runs/{p.task.id}/s{p.sample}"), ledger, states, state, None)
