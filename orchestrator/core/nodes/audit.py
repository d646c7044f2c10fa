"""audit(k): the verifier agent's golden-coverage audit, checked by the tool. It can block, never pass.

Each inventory row in scope must be ✅ with a line that exists in the file and holds the named pypto
call; anything else blocks the module (which then goes back to the implementer with the reason).
"""

from __future__ import annotations

import re

from langgraph.runtime import Runtime

from agents.contracts import AgentError, AuditContext, AuditResult
from orchestrator.core.nodes._common import dev, node, op_path, read_text, services, timed
from orchestrator.core.nodes.implement import budget_block
from orchestrator.core.state import ForgeState, replace_module


def rows_in_scope(state: ForgeState, k: int) -> list[int]:
    """Inventory rows that must be covered once module ``k`` is verified (last module / L0: all)."""
    n = len(state.get("modules", []))
    out = []
    for row in state.get("inventory", []):
        mod = row.get("module")
        if k >= n or (mod is not None and int(mod) <= k):
            out.append(int(row["index"]))
    return out


def check_rows(result: AuditResult, source: str, scope: list[int]) -> list[str]:
    """Problems with an audit answer (tool-checked line numbers and calls)."""
    lines = source.splitlines()
    by_index = {r.index: r for r in result.rows}
    problems = []
    for idx in scope:
        row = by_index.get(idx)
        if row is None:
            problems.append(f"inventory row {idx}: not audited")
            continue
        if row.status != "✅":
            problems.append(f"inventory row {idx}: marked ❌")
            continue
        if row.line is None or not 1 <= row.line <= len(lines):
            problems.append(f"inventory row {idx}: line {row.line} is not in the file")
            continue
        text = lines[row.line - 1].split("#", 1)[0]
        if not text.strip():
            problems.append(f"inventory row {idx}: line {row.line} holds no code")
        elif row.pypto_call:
            name = row.pypto_call.split("(")[0].split(".")[-1].strip()
            if re.fullmatch(r"\w+", name or ""):
                if not re.search(rf"\b{re.escape(name)}\b", text):
                    problems.append(f"inventory row {idx}: line {row.line} does not call {row.pypto_call}")
            elif name and name not in text:  # an operator such as '*' or '/'
                problems.append(f"inventory row {idx}: line {row.line} has no '{name}'")
    return problems


@node("audit")
def audit(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    k = int(state["active"])
    m = state["modules"][k - 1].copy()
    source = read_text(root / m["stage_file"])
    scope = rows_in_scope(state, k)
    inventory = [{"index": r.get("index"), "operation": r.get("operation"), "shape": r.get("shape"),
                  "module": r.get("module")} for r in state.get("inventory", [])]
    ctx = AuditContext(op_dir=str(root), op_name=state["op_name"], module=k, target_file=m["stage_file"],
                       source=source, inventory=inventory, rows_in_scope=scope,
                       verify_summary={"verdict": m.get("verdict"), "evidence": m.get("evidence"),
                                       "attempt": m.get("attempts")})
    try:
        result = timed(svc, "agents", svc.agents.audit, ctx)
        problems = check_rows(result, source, scope)
        if result.verdict == "block":
            problems.insert(0, f"verifier audit blocked: {result.summary}")
    except AgentError as exc:
        result, problems = None, [f"audit failed: {exc.reason}"]
    update: dict = {"agent_calls": [{"role": "verifier", "module": k, "attempt": m.get("attempts")}]}
    if not problems and result is not None:
        cov = dict(state.get("coverage", {}))
        for r in result.rows:
            if r.index in scope:
                cov[str(r.index)] = {"status": r.status, "pypto_call": r.pypto_call, "line": r.line}
        m["audit"] = "ok"
        update.update(coverage=cov, modules=replace_module(state, k, **m), blocked=None)
        update["dev_log"] = [dev(svc, "audit", f"audit M{k}", f"ok: {len(scope)} inventory row(s) covered",
                                 "module gate" if state.get("level") == "L1" else "cleanup")]
        return update
    m.update({"audit": "block", "status": "in_progress",
              "feedback": list(m.get("feedback", [])) + [f"audit: {p}" for p in problems]})
    update["modules"] = replace_module(state, k, **m)
    update["blocked"] = budget_block(m, k, "audit blocked")
    update["dev_log"] = [dev(svc, "audit", f"audit M{k}", "block: " + "; ".join(problems[:3]), "re-implement")]
    return update
