"""intake: validate the op dir and record the facts the run needs (writes nothing but MEMORY.md)."""

from __future__ import annotations

from langgraph.runtime import Runtime

from orchestrator.core import opdir_bridge
from orchestrator.core.nodes._common import dev, node, op_path, services
from orchestrator.core.state import DesignState, FinalState, ForgeState


@node("intake")
def intake(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    info = opdir_bridge.load(root)
    existing = (root / "DESIGN.md").is_file() and (root / "module_interfaces.yaml").is_file()
    cx = info.complexity
    svc.trace.update_manifest(seeds=info.seeds)  # the seeds this run verifies on (a replay's too)
    svc.trace.emit("state_transition", node="intake", **{"from": "start", "to": "design"})
    return {
        "op_name": info.op_name,
        "phase": "design",
        "complexity": cx,
        "level": cx.get("level", "L1"),
        "module_count": int(cx.get("module_count", 1)),
        "inventory": info.inventory,
        "spec": info.spec_front,
        "coverage": {},
        "modules": [],
        "active": 0,
        "gate_counts": {},
        "blocked": None,
        "final": FinalState(),
        "outcome": None,
        "design": DesignState(attempts=0, status="pending", existing=existing, notes=[], problems=[],
                              budget=svc.config.design_budget, skipped=False),
        "dev_log": [dev(svc, "intake", "op dir accepted",
                        f"complexity {cx.get('total_complexity', '?')} -> module_count {cx.get('module_count')}",
                        "check the existing design" if existing else "design")],
    }
