"""verify(k): the ONLY node that can mark a module verified — from a PASS report whose hashes match disk.

The verdict is always the verifier's (``runtime.verify``): a frozen-module edit arrives as its FAIL_LINT
(lint PF05); this node only adds a pointer to the verified region to the feedback. It also keeps the lint
circuit breaker (the same blocking findings N times in a row escalate) and commits every verified stage to
the audit repository.
"""

from __future__ import annotations

from pathlib import Path

from langgraph.runtime import Runtime

from orchestrator.core.frozen import frozen_pointers
from orchestrator.core.nodes._common import (
    commit,
    dev,
    node,
    op_path,
    read_text,
    report_divergence,
    services,
    timed,
)
from orchestrator.core.nodes.implement import budget_block
from orchestrator.core.services import Services, VerifyOutcome
from orchestrator.core.state import ForgeState, replace_module
from orchestrator.core.verifier_bridge import error_cause
from orchestrator.errors import RunStopped
from orchestrator.store.artifacts import keep_attempt
from orchestrator.store.paths import reports_dir, sha256_file
from orchestrator.store.reports import hash_for
from orchestrator.store.results import model_calls
from runtime.verdicts import Verdict


def run_verifier(svc: Services, root: Path, run_id: str, target: str, prev: str | None,
                 lint_stage: str | None = None) -> VerifyOutcome:
    """Call the injected verifier; an infrastructure crash becomes an ERROR outcome, never a pass.

    ``lint_stage="performance"`` (the perf stage's variants) lets lint allow tuning constructs (OL56)."""
    extra = {"lint_stage": lint_stage} if lint_stage else {}
    try:
        return timed(svc, "verifier", svc.verifier, root, target, previous_stage=prev,
                     reports_dir=reports_dir(root, run_id), **extra)
    except Exception as exc:  # the verifier is the authority: if it cannot run, nothing passes
        return VerifyOutcome(verdict=Verdict.ERROR, target=target, hashes={}, report_hash="",
                             summary=f"verifier could not run: {type(exc).__name__}: {exc}")


STOP_CAUSES = {"golden": "golden.py", "op_dir": "the operator directory", "machine": "this machine",
               "tool": "the verification tool"}


def stop_if_not_candidates(outcome: VerifyOutcome, target: str) -> None:
    """Raise :class:`RunStopped` when an ERROR is golden.py's, the op dir's or the machine's (never debugged).

    Raised before the node changes anything: the run stays resumable at this verification.
    """
    cause = error_cause(outcome)
    if cause in STOP_CAUSES:
        why = "; ".join(outcome.reasons[:3]) or outcome.summary
        raise RunStopped(cause, f"verifying {target} failed because of {STOP_CAUSES[cause]}, not the kernel: {why}")


def disk_matches(outcome: VerifyOutcome, root: Path, target: str) -> str | None:
    """None when the report's hash of ``target`` equals the file on disk, else the reason."""
    reported = hash_for(outcome.hashes, target, root)
    on_disk = sha256_file(root / target)
    if reported is None:
        return f"the report carries no hash for {target}"
    if reported != on_disk:
        return f"{target} changed after verification (report {reported[:12]}, disk {str(on_disk)[:12]})"
    return None


@node("verify")
def verify(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    k = int(state["active"])
    m = state["modules"][k - 1].copy()
    target = m["stage_file"]
    prev = state["modules"][k - 2]["stage_file"] if k > 1 else None
    outcome = run_verifier(svc, root, state.get("run_id", "run"), target, prev)
    stop_if_not_candidates(outcome, target)
    keep_attempt(root, state.get("run_id", "run"), k, m.get("attempts"), target)
    verdict = Verdict(outcome.verdict)
    mismatch = disk_matches(outcome, root, target) if verdict == Verdict.PASS else None
    if mismatch:
        verdict = Verdict.ERROR
        outcome = outcome.model_copy(update={"verdict": Verdict.ERROR, "summary": f"PASS not accepted: {mismatch}",
                                             "memory_row": ""})
    report_divergence(svc, "verify", k, m.get("attempts"), target, verdict.value)
    seq = svc.trace.emit("verify", node="verify", module=k, attempt=m.get("attempts"), hashes=outcome.hashes,
                         verdict=verdict.value, report_hash=outcome.report_hash, target=target)
    update: dict = {"last_verdict": verdict.value, "last_report": outcome.report_path, "phase": "construction"}
    update["verify_log"] = [{"when": svc.stamp(), "module": f"M{k}", "file": target, "verdict": verdict.value,
                             "row": outcome.memory_row or outcome.summary, "report_hash": outcome.report_hash,
                             "evidence": outcome.evidence}]
    m.update({"verdict": verdict.value, "report_hash": outcome.report_hash or None,
              "evidence": outcome.evidence or None, "written": False})
    entry = {"module": k, "attempt": m.get("attempts"), "verdict": verdict.value, "reason": "",
             "model_calls": model_calls(root, state.get("run_id", "run"), "implementer", k, m.get("attempts"))}
    if verdict == Verdict.PASS:
        update["attempt_log"] = [entry]
        m.update({"status": "verified", "verified_sha256": sha256_file(root / target), "lint_streak": 0,
                  "lint_key": None, "audit": None})
        update["modules"] = replace_module(state, k, **m)
        update["blocked"] = None
        update["dev_log"] = [dev(svc, "verify", f"verify M{k} attempt {m['attempts']}",
                                 f"PASS evidence {outcome.evidence[:12]}", "golden-coverage audit")]
        svc.trace.emit("state_transition", node="verify", module=k, **{"from": "in_progress", "to": "verified"},
                       justified_by=seq)
        sha = commit(state, update, f"verify: M{k} PASS {target} report {outcome.report_hash[:16]}", {
            "forge-kind": "verify", "forge-module": str(k), "forge-file": target, "forge-verdict": Verdict.PASS.value,
            "forge-report-hash": outcome.report_hash, "forge-run": state.get("run_id", "")},
            when=svc.clock())
        update["modules"][k - 1]["commit"] = sha
        return update
    feedback = list(m.get("feedback", []))
    if verdict == Verdict.FAIL_LINT:
        key = "; ".join(sorted(f"{f.rule_id}@{Path(f.file).name}:{f.line}" for f in outcome.lint_blocking)) or "lint"
        m["lint_streak"] = int(m.get("lint_streak", 0)) + 1 if key == m.get("lint_key") else 1
        m["lint_key"] = key
        rules = ", ".join(f"{f.rule_id} line {f.line}: {f.message}" for f in outcome.lint_blocking) or outcome.summary
        feedback.append(f"attempt {m['attempts']} FAIL_LINT: {rules}")
        reason = f"FAIL_LINT: {rules}"
        if prev:
            feedback += frozen_pointers(outcome.lint_blocking, read_text(root / prev), prev)
        update["lint_log"] = [{"when": svc.stamp(), "module": f"M{k}", "file": target, "rules": key,
                               "resolution": f"streak {m['lint_streak']}/{svc.config.lint_streak_limit}"}]
    else:
        m["lint_streak"], m["lint_key"] = 0, None
        feedback.append(f"attempt {m['attempts']} {verdict}: {outcome.summary or 'see report'}")
        summary = outcome.summary or "see report"  # a summary that starts with its verdict is not prefixed twice
        reason = summary if summary.startswith(f"{verdict} ") else f"{verdict}: {summary}"
    reason = " ".join(reason.split())
    update["attempt_log"] = [{**entry, "reason": reason if len(reason) <= 300 else reason[:297] + "..."}]
    m.update({"status": "in_progress", "feedback": feedback, "last_failure": update["attempt_log"][0]["reason"]})
    blocked = budget_block(m, k, verdict.value)
    if blocked is None and verdict == Verdict.ERROR and error_cause(outcome) == "design":
        blocked = {"module": k, "reason": f"M{k}: the design does not fit golden.py ({outcome.summary}); "
                                          "roll back to design or give a hint"}
    if blocked is None and int(m.get("lint_streak", 0)) >= svc.config.lint_streak_limit:
        blocked = {"module": k, "reason": f"M{k}: the same blocking lint finding {m['lint_streak']} times in a row "
                                          f"({m['lint_key']})"}
    update["modules"] = replace_module(state, k, **m)
    update["blocked"] = blocked
    nxt = "blocked gate" if blocked else ("re-implement" if verdict == Verdict.FAIL_LINT else "debug")
    update["dev_log"] = [dev(svc, "verify", f"verify M{k} attempt {m['attempts']}", verdict.value, nxt)]
    return update
