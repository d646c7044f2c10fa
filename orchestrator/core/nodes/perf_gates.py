"""The perf stage's two gates: ``gate_perf_start`` (before) and ``gate_perf_deliver`` (after).

Same rules as every gate (:mod:`orchestrator.core.nodes.gates`): nothing with side effects before the decision
(the node re-runs from its start when a run resumes), decisions replayed from the trace, auto-approved in
``auto`` mode, denied when malformed.
"""

from __future__ import annotations

import pathlib
import shutil

from langgraph.runtime import Runtime

from orchestrator.core.delivery import write_readme
from orchestrator.core.nodes._common import dev, node, op_path, services
from orchestrator.core.nodes.gates import decide
from orchestrator.core.nodes.perf import perf_dir
from orchestrator.core.perf import (
    PerfRow,
    PerfSummary,
    Scorer,
    emulator_estimate,
    from_state,
    round3,
)
from orchestrator.core.second_opinion import from_state as opinion_from_state
from orchestrator.core.state import FinalState, ForgeState
from orchestrator.gates import GateRequest
from orchestrator.store.paths import sha256_file
from orchestrator.store.reports import first_case_counters
from runtime.stages import final_file
from runtime.verdicts import Verdict

__all__ = ["after_gate_perf_deliver", "after_gate_perf_start", "baseline_row", "gate_perf_deliver", "gate_perf_start"]


def baseline_row(state: dict) -> tuple[PerfRow, Scorer]:
    """The kernel that passed the final verification, scored from what the run already knows (no side effect)."""
    f = state.get("final") or {}
    row = PerfRow(variant=0, verdict=Verdict(f.get("verdict") or Verdict.PASS), report_hash=f.get("report_hash"),
                  evidence=f.get("evidence"), sha256=f.get("impl_sha256"))
    row.estimate = emulator_estimate(first_case_counters(pathlib.Path(state["op_dir"]), state.get("run_id", "run"), row.report_hash))
    opinion = opinion_from_state(state)
    if opinion is not None and opinion.status == "accepted" and opinion.shapes:
        cycles = [int(s["total_cycles"]) for s in opinion.shapes if s.get("total_cycles") is not None]
        row.cycles = sum(cycles) if cycles else None
        row.first_cycles = cycles[0] if cycles else None
        row.utilization_percent = opinion.shapes[0].get("utilization_percent")
        row.toolchain = "accepted"
        return row, "cost_model"
    return row, "emulator_estimate"


@node("gate_perf_start")
def gate_perf_start(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    p = from_state(dict(state)) or PerfSummary(requested=True)
    base, scorer = baseline_row(dict(state))
    figure = f"{base.cycles} cycles (cost model, sum over shapes)" if scorer == "cost_model" \
        else f"{base.estimate} eu (emulator estimate: no real toolchain here)"
    req = GateRequest(gate="perf_start", title=f"Run the performance stage on {final_file(state['op_name'])}?",
                      details=[f"baseline (the verified kernel): {figure}",
                               f"up to {p.budget} variant(s) from the implementer, each verified on all cases",
                               "reject: deliver the verified kernel as it is"])
    decision, update = decide(state, svc, req)
    p.scorer, p.baseline = scorer, base
    if decision.decision == "approve":
        p.status = "running"
        update["dev_log"] = [dev(svc, "gate_perf_start", "perf start gate", "approved", "perf variant 1")]
    else:
        p.status = "skipped"
        update["dev_log"] = [dev(svc, "gate_perf_start", "perf start gate", f"rejected {decision.note}".strip(),
                                 "report")]
    update["perf"] = p.model_dump(mode="json")
    return update


@node("gate_perf_deliver")
def gate_perf_deliver(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    p = from_state(dict(state)) or PerfSummary()
    best = p.best_row()
    details = p.table(rounded=False)
    if best is not None and p.baseline is not None and best.variant != 0:
        details.append(f"approve: deliver v{best.variant} ({best.score(p.scorer)} vs "
                       f"{p.baseline.score(p.scorer)} {p.unit()}); reject: keep the baseline")
    else:
        details.append("no variant beat the baseline: approve or reject both keep it")
    req = GateRequest(gate="perf_deliver", title="Deliver the fastest verified variant?", details=details)
    decision, update = decide(state, svc, req)
    op = state["op_name"]
    target = final_file(op)
    pdir = perf_dir(root, state.get("run_id", "run"))
    chosen = best if decision.decision == "approve" and best is not None else p.baseline
    delivered = chosen.variant if chosen is not None else 0
    if (pdir / f"v{delivered}.py").exists():
        shutil.copyfile(pdir / f"v{delivered}.py", root / target)
    p.delivered, p.status = delivered, "done"
    update["perf"] = p.model_dump(mode="json")
    final = FinalState(**(state.get("final") or {}))
    if chosen is not None and delivered != 0:
        final.update(FinalState(report_hash=chosen.report_hash, evidence=chosen.evidence,
                                impl_sha256=sha256_file(root / target), verdict=Verdict.PASS))
    final["perf"] = {"delivered": delivered, "scorer": p.scorer,
                     "baseline": p.baseline.score(p.scorer) if p.baseline else None,
                     "delivered_score": chosen.score(p.scorer) if chosen else None}
    update["final"] = final
    write_readme(root, state, final, PerfSummary.model_validate(update["perf"]))
    shown = chosen.score(p.scorer) if chosen else None
    update["dev_log"] = [dev(svc, "gate_perf_deliver", "perf delivery gate",
                             f"{decision.decision}: deliver {'baseline' if delivered == 0 else f'v{delivered}'}"
                             f"{'' if shown is None else f' ({round3(shown)} {p.unit()})'}", "report")]
    return update


def after_gate_perf_start(state: ForgeState) -> str:
    p = from_state(dict(state))
    return "perf" if p is not None and p.status == "running" else "report"


def after_gate_perf_deliver(state: ForgeState) -> str:
    return "report"
