"""design: the designer writes DESIGN.md + module_interfaces.yaml (the only files it owns)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from agents.contracts import AgentError, DesignContext
from orchestrator.core.nodes._common import dev, node, op_path, read_text, services, timed
from orchestrator.core.state import DesignState, ForgeState


@node("design")
def design(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    d = DesignState(**state.get("design", {}))
    d["attempts"] = int(d.get("attempts", 0)) + 1
    ctx = DesignContext(op_dir=str(root), op_name=state["op_name"], spec_md=read_text(root / "SPEC.md"),
                        golden_py=read_text(root / "golden.py"), complexity=state.get("complexity", {}),
                        memory_md=read_text(root / "MEMORY.md"), rejection_notes=list(d.get("notes", [])),
                        design_check_problems=list(d.get("problems", [])), attempt=d["attempts"])
    calls = [{"role": "designer", "attempt": d["attempts"]}]
    try:
        result = timed(svc, "agents", svc.agents.design, ctx)
    except AgentError as exc:
        previous = (d.get("problems") or [""])[0] if d.get("status") == "agent_error" else None
        d["status"] = "agent_error"
        d["problems"] = [f"designer failed: {exc.reason}"]
        blocked = None
        if exc.stop:
            blocked = {"module": None, "reason": f"design attempt {d['attempts']} stopped early, trying again "
                                                 f"cannot help: {exc.reason}"}
        elif previous == d["problems"][0]:
            blocked = {"module": None, "reason": f"design attempts {d['attempts'] - 1} and {d['attempts']} failed "
                                                 f"the same way: {exc.reason}"}
        elif d["attempts"] >= int(d.get("budget", 3)):
            blocked = {"module": None, "reason": f"design budget exhausted: {exc.reason}"}
        return {"design": d, "phase": "design", "blocked": blocked, "agent_calls": calls,
                "dev_log": [dev(svc, "design", f"design attempt {d['attempts']}", f"agent error: {exc.reason}")]}
    (root / "DESIGN.md").write_text(result.design_md, encoding="utf-8")
    (root / "module_interfaces.yaml").write_text(result.module_interfaces_yaml, encoding="utf-8")
    d["status"] = "written"
    d["rationale"] = result.rationale
    d["existing"] = False
    return {"design": d, "phase": "design", "blocked": None,
            "agent_calls": calls,
            "dev_log": [dev(svc, "design", f"design attempt {d['attempts']}", "DESIGN.md and module_interfaces.yaml "
                            "written", "design check")]}
