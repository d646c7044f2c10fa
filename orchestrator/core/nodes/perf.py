"""perf: one performance variant per dispatch - implementer proposes, runtime.verify decides, the cost model scores.

The variant is written to ``<op>_impl.py`` (the only name the verifier accepts for a final kernel), verified
on all cases, scored, and copied to ``.forge/run-<id>/perf/v<k>.py``; then the best verified file so far is
put back, so ``<op>_impl.py`` is always a kernel with a PASS report, also if the run stops here. Never sets a
verdict: a variant that does not PASS is kept in the table with its verdict and is never a candidate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from langgraph.runtime import Runtime

from agents.contracts import AgentError, ImplementContext
from orchestrator.core.nodes._common import dev, node, op_path, read_text, report_divergence, services, timed
from orchestrator.core.nodes.verify import disk_matches, run_verifier
from orchestrator.core.perf import (
    PERF_MARKER,
    PerfRow,
    PerfSummary,
    emulator_estimate,
    from_state,
    round3,
)
from orchestrator.core.second_opinion import toolchain_result
from orchestrator.core.services import Services
from orchestrator.core.state import ForgeState
from orchestrator.store.paths import run_dir, sha256_file
from orchestrator.store.reports import first_case_counters
from runtime.stages import final_file, final_wrapper
from runtime.verdicts import Verdict

__all__ = ["after_perf", "perf", "perf_dir", "score_variant"]


def perf_dir(root: Path, run_id: str) -> Path:
    return run_dir(root, run_id) / "perf"


def score_variant(svc: Services, root: Path, run_id: str, target: str, row: PerfRow, scorer: str) -> None:
    """Fill ``row``'s figures for the verified file at ``target`` (cost model when used, estimate always)."""
    row.estimate = emulator_estimate(first_case_counters(root, run_id, row.report_hash))
    if scorer != "cost_model":
        return
    res, _source = toolchain_result(svc, root, target)
    if res is None:
        row.note = "no cost-model figure (toolchain unavailable)"
        return
    row.toolchain = res.status
    if res.status == "accepted":
        cycles = [s.cost.total_cycles for s in res.shapes if s.cost is not None]
        row.cycles = sum(cycles) if cycles else None
        first = res.shapes[0].cost if res.shapes else None
        row.first_cycles = first.total_cycles if first else None
        row.utilization_percent = first.utilization_percent if first else None
    elif res.error is not None:
        row.note = f"real compiler rejects: {res.error.one_line()[:160]}"


def _feedback(p: PerfSummary, k: int) -> str:
    """What the implementer is told: the task and the table so far, figures rounded (ARCHITECTURE §0.2)."""
    lines = [f"{PERF_MARKER}: variant {k} of {p.budget}. The current file PASSes verification; propose ONE faster "
             "variant of it with the same numerics: change tile shapes (set_vec_tile_shapes / "
             "set_cube_tile_shapes), the loop structure or unroll choices. Keep the wrapper and the kernel "
             f"signature. Variants are scored by the {p.unit()} (lower is better) after they PASS on all cases.",
             "Variants so far:", *p.table(rounded=True)]
    for r in p.variants:
        if r.verdict != Verdict.PASS or r.note:
            lines.append(f"v{r.variant}: {r.shown()}{' - ' + r.note if r.note else ''}")
    return "\n".join(lines)


def _best(p: PerfSummary) -> int:
    scored = [(r.score(p.scorer), r.variant) for r in p.rows()]
    scored = [(s, v) for s, v in scored if s is not None]
    return min(scored)[1] if scored else 0


@node("perf")
def perf(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    op = state["op_name"]
    run_id = state.get("run_id", "run")
    target = final_file(op)
    p = from_state(dict(state)) or PerfSummary(requested=True)
    k = len(p.variants) + 1
    pdir = perf_dir(root, run_id)
    pdir.mkdir(parents=True, exist_ok=True)
    base = pdir / "v0.py"
    if not base.exists():
        shutil.copyfile(root / target, base)
    best_src = read_text(pdir / f"v{p.best}.py") or read_text(root / target)
    n = len(state.get("modules", [])) or 1
    ctx = ImplementContext(
        op_dir=str(root), op_name=op, module=n, module_count=n, level=state.get("level", "L0"),
        target_file=target, wrapper_name=final_wrapper(op), spec_md=read_text(root / "SPEC.md"),
        golden_py=read_text(root / "golden.py"), design_md=read_text(root / "DESIGN.md"),
        module_interfaces_yaml=read_text(root / "module_interfaces.yaml"), memory_md=read_text(root / "MEMORY.md"),
        current_source=best_src, feedback=[_feedback(p, k)], attempt=k)
    rel = str((pdir / f"v{k}.py").relative_to(root))
    row = PerfRow(variant=k, file=rel)
    update: dict = {"agent_calls": [{"role": "implementer", "module": n, "attempt": k, "stage": "perf"}]}
    try:
        result = timed(svc, "agents", svc.agents.implement, ctx)
        if result.path.replace("\\", "/") != target:
            raise AgentError("implementer", f"returned {result.path!r}, may only write {target!r}")
    except AgentError as exc:
        row.note = exc.reason[:200]  # no verdict: nothing was verified
        svc.trace.emit("error", node="perf", attempt=k, message=row.note)
    else:
        (pdir / f"v{k}.py").write_text(result.content, encoding="utf-8")
        (root / target).write_text(result.content, encoding="utf-8")
        row.sha256 = sha256_file(root / target)
        outcome = run_verifier(svc, root, run_id, target, None, lint_stage="performance")
        verdict = Verdict(outcome.verdict)
        if verdict == Verdict.PASS and (why := disk_matches(outcome, root, target)):
            verdict, outcome = Verdict.ERROR, outcome.model_copy(update={"summary": f"PASS not accepted: {why}"})
        report_divergence(svc, "perf", None, k, target, verdict.value)
        svc.trace.emit("verify", node="perf", attempt=k, hashes=outcome.hashes, verdict=verdict.value,
                       report_hash=outcome.report_hash, target=target)
        row.verdict, row.report_hash, row.evidence = verdict, outcome.report_hash or None, outcome.evidence or None
        if verdict == Verdict.PASS:
            score_variant(svc, root, run_id, target, row, p.scorer)
        else:
            row.note = (outcome.summary or "")[:200]
        update["verify_log"] = [{"when": svc.stamp(), "module": f"perf v{k}", "file": target, "verdict": verdict.value,
                                 "row": outcome.memory_row or outcome.summary, "report_hash": outcome.report_hash,
                                 "evidence": outcome.evidence}]
    p.variants = [*p.variants, row]
    p.status = "running"
    p.best = _best(p)
    shutil.copyfile(pdir / f"v{p.best}.py", root / target)  # the best verified kernel is always in place
    update["perf"] = p.model_dump(mode="json")
    shown = row.cycles if p.scorer == "cost_model" else row.estimate
    update["dev_log"] = [dev(svc, "perf", f"perf variant {k}/{p.budget}",
                             f"{row.shown()}{'' if shown is None else f', {round3(shown)} {p.unit()}'}",
                             "next variant" if k < p.budget else "perf delivery gate")]
    return update


def after_perf(state: ForgeState) -> str:
    p = from_state(dict(state))
    return "perf" if p is not None and len(p.variants) < p.budget else "gate_perf_deliver"
