"""Verifier audit: golden-coverage rows (pypto call + line) and a verdict text. It can block, never pass.

The verification tool has already passed the file numerically; the audit asks whether every in-scope
golden operation is really implemented by a pypto call on the line the agent names. Lines are checked
against the file here (and again by the orchestrator's tool); any in-scope row that is ❌ or missing makes
the verdict ``block`` whatever the model says.
"""

from __future__ import annotations

import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agents.contracts import AuditContext, AuditResult, AuditRow
from agents.roles._base import AnswerError, RoleCall, RoleEnv, run_role
from agents.roles._budget import Part, assemble
from agents.tools import ToolBox

__all__ = ["AuditAnswer", "audit", "check_audit", "numbered"]

USER_BUDGET_CHARS = 40_000


class AuditAnswerRow(BaseModel):
    model_config = ConfigDict(extra="ignore")  # harmless extra keys from a model are dropped, not fatal

    index: int
    status: Literal["✅", "❌"]
    pypto_call: str = ""
    line: int | None = None


class AuditAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")  # harmless extra keys from a model are dropped, not fatal

    rows: list[AuditAnswerRow]
    verdict: Literal["ok", "block"] = Field(description="'block' if any in-scope row is not implemented.")
    summary: str


def numbered(source: str) -> str:
    return "\n".join(f"{i:4d}| {line}" for i, line in enumerate(source.splitlines(), 1))


def _parts(ctx: AuditContext) -> list[Part]:
    inventory = "\n".join(
        f"| {r.get('index')} | {r.get('operation')} | {r.get('shape')} | M{r.get('module')} |"
        + (" IN SCOPE" if r.get("index") in ctx.rows_in_scope else "")
        for r in ctx.inventory)
    parts = [
        Part("Task", f"Audit golden coverage of `{ctx.target_file}` (operator `{ctx.op_name}`, module "
                     f"{ctx.module}). Rows in scope: {ctx.rows_in_scope}.", 10),
        Part("Golden function inventory (| # | operation | shape | module |)", inventory, 10),
        Part(f"{ctx.target_file} (with line numbers)", numbered(ctx.source), 9),
        Part("Verification summary (PASS report, sanitized)", json.dumps(ctx.verify_summary, indent=1,
                                                                        sort_keys=True, default=str), 4, "json"),
    ]
    return parts


def _user_message(ctx: AuditContext) -> str:
    """The user message under the role's own budget (what a dispatch sends when the context is unknown)."""
    return assemble(_parts(ctx), max_chars=USER_BUDGET_CHARS)


def _call_name(pypto_call: str) -> str:
    m = re.search(r"(pypto(?:\.\w+)+|\.\w+\(|\w+)", pypto_call)
    return (m.group(1) if m else pypto_call).strip(".(")


def check_audit(answer: AuditAnswer, ctx: AuditContext) -> AuditResult:
    lines = ctx.source.splitlines()
    known = {int(r["index"]) for r in ctx.inventory if r.get("index") is not None}
    by_index: dict[int, AuditAnswerRow] = {}
    for row in answer.rows:
        if row.index not in known:
            raise AnswerError(f"row {row.index} is not in the golden inventory (rows: {sorted(known)})")
        if row.index in by_index:
            raise AnswerError(f"row {row.index} appears twice")
        by_index[row.index] = row
        if row.status == "✅":
            if row.line is None or not 1 <= row.line <= len(lines):
                raise AnswerError(f"row {row.index} is ✅ but its line {row.line} is not a line of the file "
                                  f"(1..{len(lines)})")
            text = lines[row.line - 1]
            name = _call_name(row.pypto_call).split(".")[-1]
            if not row.pypto_call.strip() or name not in text:
                raise AnswerError(f"row {row.index}: line {row.line} reads `{text.strip()}`, which does not "
                                  f"contain the call `{row.pypto_call}`; give the line of the call itself")
    missing = [i for i in ctx.rows_in_scope if i not in by_index]
    if missing:
        raise AnswerError(f"rows in scope {missing} have no audit row; give every in-scope row ✅ or ❌")
    rows = [AuditRow(index=r.index, status=r.status, pypto_call=r.pypto_call, line=r.line)
            for r in sorted(by_index.values(), key=lambda r: r.index)]
    uncovered = [r.index for r in rows if r.index in ctx.rows_in_scope and r.status != "✅"]
    verdict: Literal["ok", "block"] = "block" if uncovered or answer.verdict == "block" else "ok"
    summary = answer.summary.strip()
    if uncovered and answer.verdict == "ok":
        summary += f"\n(blocked by the tool: in-scope rows {uncovered} are not implemented)"
    return AuditResult(rows=rows, verdict=verdict, summary=summary)


def audit(env: RoleEnv, ctx: AuditContext) -> AuditResult:
    toolbox = ToolBox("verifier", env.skills, op_dir=env.op_dir, target_file=ctx.target_file)
    return run_role(env, RoleCall(role="verifier", answer_model=AuditAnswer, parts=_parts(ctx),
                                  budget_chars=USER_BUDGET_CHARS, check=lambda a: check_audit(a, ctx),
                                  module=ctx.module, attempt=1, toolbox=toolbox))
