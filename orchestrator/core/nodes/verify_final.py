"""verify_final: the cleaned ``<op>_impl.py`` against the golden outputs on all cases."""

from __future__ import annotations

from langgraph.runtime import Runtime

from orchestrator.core.delivery import write_readme
from orchestrator.core.nodes._common import dev, node, op_path, report_divergence, services
from orchestrator.core.nodes.verify import disk_matches, run_verifier, stop_if_not_candidates
from orchestrator.core.perf import request_update as perf_request_update
from orchestrator.core.second_opinion import attach as attach_second_opinion
from orchestrator.core.state import FinalState, ForgeState
from orchestrator.store.artifacts import keep_attempt
from orchestrator.store.paths import sha256_file
from runtime.stages import final_file
from runtime.verdicts import Verdict


@node("verify_final")
def verify_final(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    op = state["op_name"]
    target = final_file(op)
    outcome = run_verifier(svc, root, state.get("run_id", "run"), target, None)
    stop_if_not_candidates(outcome, target)
    keep_attempt(root, state.get("run_id", "run"), "final", len(state.get("verify_log", [])), target)
    verdict = Verdict(outcome.verdict)
    if verdict == Verdict.PASS and (why := disk_matches(outcome, root, target)):
        verdict = Verdict.ERROR
        outcome = outcome.model_copy(update={"verdict": Verdict.ERROR, "summary": f"PASS not accepted: {why}",
                                             "memory_row": ""})
    report_divergence(svc, "verify_final", None, None, target, verdict.value)
    svc.trace.emit("verify", node="verify_final", hashes=outcome.hashes, verdict=verdict.value,
                   report_hash=outcome.report_hash, target=target)
    final = FinalState(**state.get("final", {}))
    final.update(FinalState(verdict=verdict.value, report_hash=outcome.report_hash, evidence=outcome.evidence,
                            impl_sha256=sha256_file(root / target)))
    update: dict = {"final": final, "last_verdict": verdict.value, "last_report": outcome.report_path,
                    "verify_log": [{"when": svc.stamp(), "module": "final", "file": target, "verdict": verdict.value,
                                    "row": outcome.memory_row or outcome.summary,
                                    "report_hash": outcome.report_hash, "evidence": outcome.evidence}]}
    if verdict == Verdict.PASS:
        attach_second_opinion(svc, dict(state), root, target, final)  # the real compiler, when there is one
        write_readme(root, state, final)
        update.update(phase="final", blocked=None, **perf_request_update(svc))
        update["dev_log"] = [dev(svc, "verify_final", f"verify {target}", f"PASS evidence {outcome.evidence[:12]}",
                                 "final gate")]
        return update
    n = len(state["modules"])
    update.update(active=n, blocked={"module": n, "reason": f"final verification {verdict}: {outcome.summary}"})
    update["dev_log"] = [dev(svc, "verify_final", f"verify {target}", verdict.value, "blocked gate")]
    return update
