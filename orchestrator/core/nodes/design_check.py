"""design_check: the deterministic check of the design; on success it fixes the module plan."""

from __future__ import annotations

from langgraph.runtime import Runtime

from orchestrator.core.design_check import check_design
from orchestrator.core.nodes._common import dev, node, op_path, services
from orchestrator.core.state import DesignState, ForgeState, ModuleRecord
from orchestrator.store.paths import sha256_file
from runtime.stages import final_file, final_wrapper, stage_file, stage_wrapper


def plan_modules(op_name: str, facts_modules: list[dict], budget: int) -> list[ModuleRecord]:
    n = len(facts_modules)
    mods: list[ModuleRecord] = []
    for m in facts_modules:
        k = int(m["id"])
        mods.append(ModuleRecord(
            id=k, name=str(m.get("name", f"M{k}")), outputs=list(m.get("outputs", [])), status="pending",
            attempts=0, budget=budget, stage_file=final_file(op_name) if n == 1 else stage_file(op_name, k),
            wrapper=final_wrapper(op_name) if n == 1 else stage_wrapper(op_name, k), file_sha256=None,
            verified_sha256=None, report_hash=None, verdict=None, lint_key=None, lint_streak=0, feedback=[],
            audit=None, commit=None, written=False))
    return mods


@node("design_check")
def design_check(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    d = DesignState(**state.get("design", {}))
    computed = state.get("complexity", {}).get("module_count")
    result = check_design(root, computed_module_count=int(computed) if computed else None,
                          rationale=d.get("rationale"))
    update: dict = {"phase": "design", "blocked": None}
    if result.ok and result.facts is not None:
        n = result.facts.module_count
        d.update(DesignState(status="checked", problems=[], design_sha256=sha256_file(root / "DESIGN.md"),
                             yaml_sha256=sha256_file(root / "module_interfaces.yaml")))
        if d.get("existing") and int(d.get("attempts", 0)) == 0:
            d["skipped"] = True
            d["status"] = "approved"
        update.update(design=d, module_count=n, level="L0" if n == 1 else "L1",
                      modules=plan_modules(state["op_name"], result.facts.modules, svc.config.budget))
        update["dev_log"] = [dev(svc, "design_check", "design check", f"PASS: {n} module(s)",
                                 "plan stages (design given by the user)" if d.get("skipped") else "design gate")]
        return update
    d.update(DesignState(status="failed", problems=result.problems))
    if d.get("existing") and int(d.get("attempts", 0)) == 0:
        d["existing"] = False  # the user's design failed: the designer takes over, seeing the problems
    elif int(d.get("attempts", 0)) >= int(d.get("budget", 3)):
        update["blocked"] = {"module": None, "reason": "design check keeps failing: " + "; ".join(result.problems[:3])}
    update["design"] = d
    update["rejected"] = [{"approach": f"design attempt {d.get('attempts', 0)}",
                           "evidence": "design check: " + "; ".join(result.problems[:3]), "when": svc.stamp()}]
    update["dev_log"] = [dev(svc, "design_check", "design check", f"FAIL: {len(result.problems)} problem(s)",
                             "redesign")]
    return update
