"""plan_stages: the design is approved and frozen; commit it and start the module loop."""

from __future__ import annotations

from langgraph.runtime import Runtime

from orchestrator.core.nodes._common import commit, dev, node, services
from orchestrator.core.state import DesignState, ForgeState


@node("plan_stages")
def plan_stages(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    d = DesignState(**state.get("design", {}))
    mods = state.get("modules", [])
    first = next((m["id"] for m in mods if m.get("status") != "verified"), 1)
    update: dict = {"phase": "construction", "active": first,
                    "dev_log": [dev(svc, "plan_stages", "design frozen",
                                    f"{len(mods)} module(s), level {state.get('level')}", f"implement M{first}")]}
    how = "given by the user, design check passed" if d.get("skipped") else "approved"
    sha = commit(state, update, f"design: {how} ({len(mods)} module(s), {state.get('level')})", {
        "forge-kind": "design", "forge-design-sha256": str(d.get("design_sha256")),
        "forge-yaml-sha256": str(d.get("yaml_sha256")), "forge-run": state.get("run_id", "")},
                 when=svc.clock())
    d["commit"] = sha
    update["design"] = d
    svc.trace.emit("state_transition", node="plan_stages", **{"from": "design", "to": "construction"})
    return update
