"""implement(k): the implementer writes exactly one file — the stage file of the active module."""

from __future__ import annotations

from langgraph.runtime import Runtime

from agents.contracts import AgentError, ImplementContext
from orchestrator.core.nodes._common import dev, node, op_path, read_text, services, timed
from orchestrator.core.state import ForgeState, ModuleRecord, replace_module
from orchestrator.store.artifacts import keep_before_write, undo_interrupted_write
from orchestrator.store.paths import sha256_file
from orchestrator.store.results import model_calls
from runtime.verdicts import AGENT_ERROR


def budget_block(m: ModuleRecord, k: int, reason: str) -> dict | None:
    """The ``blocked`` marker when module ``k`` has used its attempt budget."""
    if int(m.get("attempts", 0)) >= int(m.get("budget", 10)):
        return {"module": k, "reason": f"M{k}: attempt budget {m.get('budget')} exhausted ({reason})"}
    return None


def repeat_block(m: ModuleRecord, k: int, reason: str, *, stop: bool) -> dict | None:
    """The ``blocked`` marker when trying again cannot help, instead of spending the rest of the budget.

    ``stop``: the agent said so (the same problem or a byte-identical answer twice in a row within the
    attempt, or a prompt that cannot fit the model's context). Otherwise: the previous attempt of this module
    ended with exactly the same failure.
    """
    n = int(m.get("attempts", 0))
    if stop:
        return {"module": k, "reason": f"M{k}: attempt {n} stopped early, trying again cannot help: {reason}"}
    if n > 1 and m.get("last_failure") == reason:
        return {"module": k, "reason": f"M{k}: attempts {n - 1} and {n} failed the same way: {reason}"}
    return None


@node("implement")
def implement(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    k = int(state["active"])
    m = state["modules"][k - 1].copy()
    m["attempts"] = int(m.get("attempts", 0)) + 1
    target = m["stage_file"]
    prev = state["modules"][k - 2] if k > 1 else None
    prev_file = prev["stage_file"] if prev else None
    run_id = state.get("run_id", "run")
    undo_interrupted_write(root, run_id, k, m["attempts"], target)  # this attempt ran before, up to its write
    ctx = ImplementContext(
        op_dir=str(root), op_name=state["op_name"], module=k, module_count=len(state["modules"]),
        level=state.get("level", "L1"), target_file=target, wrapper_name=m["wrapper"],
        spec_md=read_text(root / "SPEC.md"), golden_py=read_text(root / "golden.py"),
        design_md=read_text(root / "DESIGN.md"), module_interfaces_yaml=read_text(root / "module_interfaces.yaml"),
        memory_md=read_text(root / "MEMORY.md"), previous_stage_file=prev_file,
        previous_stage_source=read_text(root / prev_file) if prev_file else None,
        current_source=read_text(root / target) or None, feedback=list(m.get("feedback", [])),
        attempt=m["attempts"])
    problem = None
    stop = False
    try:
        result = timed(svc, "agents", svc.agents.implement, ctx)
        if result.path.replace("\\", "/") != target:
            problem = f"contract violation: implementer returned {result.path!r}, may only write {target!r}"
    except AgentError as exc:
        problem, stop = f"implementer failed: {exc.reason}", exc.stop
    update: dict = {"phase": "construction", "agent_calls": [{"role": "implementer", "module": k,
                                                              "attempt": m["attempts"]}]}
    if problem is not None:
        blocked = repeat_block(m, k, problem, stop=stop) or budget_block(m, k, problem)
        m.update({"written": False, "verdict": AGENT_ERROR, "feedback": list(m.get("feedback", [])) + [problem],
                  "status": "in_progress", "last_failure": problem})
        update["modules"] = replace_module(state, k, **m)
        update["blocked"] = blocked
        update["attempt_log"] = [{"module": k, "attempt": m["attempts"], "verdict": AGENT_ERROR, "reason": problem,
                                  "model_calls": model_calls(root, state.get("run_id", "run"), "implementer", k,
                                                              m["attempts"])}]
        update["dev_log"] = [dev(svc, "implement", f"M{k} attempt {m['attempts']}", problem,
                                 "blocked gate" if blocked else "retry")]
        svc.trace.emit("error", node="implement", module=k, attempt=m["attempts"], message=problem)
        return update
    path = root / target
    path.parent.mkdir(parents=True, exist_ok=True)
    keep_before_write(root, run_id, k, m["attempts"], target)
    path.write_text(result.content, encoding="utf-8")
    m.update({"written": True, "status": "in_progress", "file_sha256": sha256_file(path), "verdict": None})
    update["modules"] = replace_module(state, k, **m)
    update["blocked"] = None
    update["dev_log"] = [dev(svc, "implement", f"M{k} attempt {m['attempts']}", f"wrote {target}", "verify")]
    return update
