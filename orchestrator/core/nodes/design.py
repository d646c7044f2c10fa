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
    try:
        result = timed(svc, "agents", svc.agents.design, ctx)
    except AgentError as exc:
        d["status"] = "agent_error"
        d["problems"] = [f"designer failed: {exc.message}"]
        blocked = None
        if d["attempts"] >= int(d.get("budget", 3)):
            blocked = {"module": None, "reason": f"design budget exhausted: {exc.message}"}
        return {"design": d, "phase": "design", "blocked": blocked,
                "dev_log": [dev(svc, "design", f"design attempt {d['attempts']}", f"agent error: {exc.message}")]}
    (root / "DESIGN.md").write_text(result.design_md, encoding="utf-8")
    (root / "module_interfaces.yaml").write_text(result.module_interfaces_yaml, encoding="utf-8")
    d["status"] = "written"
    d["rationale"] = result.rationale
    d["existing"] = False
    return {"design": d, "phase": "design", "blocked": None,
            "agent_calls": [{"role": "designer", "attempt": d["attempts"]}],
            "dev_log": [dev(svc, "design", f"design attempt {d['attempts']}", "DESIGN.md and module_interfaces.yaml "
                            "written", "design check")]}
