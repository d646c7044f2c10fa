"""Debugger: a failing file + sanitized report -> a diagnosis and patch proposals. It never writes code.

Each proposal names the failing file, a line range, the current snippet (checked against the file, so the
implementer can apply it mechanically), the proposed snippet, the expected effect and the evidence. The
report is sanitized again here: keys that could carry golden values are dropped before the model sees it.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.contracts import DebugContext, DebugResult, PatchProposal
from agents.roles._base import AnswerError, RoleCall, RoleEnv, run_role
from agents.roles._budget import Part, assemble
from agents.roles.verifier import numbered
from agents.tools import ToolBox

__all__ = ["DebugAnswer", "check_debug", "debug", "sanitize"]

USER_BUDGET_CHARS = 40_000
GOLDEN_KEYS = frozenset({"golden_tensors", "golden_values", "golden_source", "raw_inputs", "input_tensors",
                         "truth", "truth_tuple", "expected", "golden"})


class DebugAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")  # harmless extra keys from a model are dropped, not fatal

    diagnosis: str = Field(description="Root cause: line, op, why.")
    proposals: list[PatchProposal] = Field(min_length=1)


def sanitize(value: Any) -> Any:
    """Drop keys that may carry golden values or raw inputs (the information barrier)."""
    if isinstance(value, dict):
        return {k: sanitize(v) for k, v in value.items() if str(k).lower() not in GOLDEN_KEYS}
    if isinstance(value, list):
        return [sanitize(v) for v in value]
    return value


SIGNIFICANT_DIGITS = 4
"""Floats shown to the debugger are rounded to this many significant digits. The statistics come from float32
kernels whose last bits can differ between CPUs (SIMD code paths), and a prompt must be identical on every
machine for a recorded run to replay there; four digits are what a diagnosis needs anyway."""


def rounded(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """``value`` with every float rounded to ``digits`` significant digits (recursively)."""
    if isinstance(value, float):
        return value if value != value or value in (float("inf"), float("-inf")) else float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, digits) for v in value]
    return value


def _parts(ctx: DebugContext) -> list[Part]:
    parts = [
        Part("Task", f"Diagnose the failure of `{ctx.failing_file}` (operator `{ctx.op_name}`, module {ctx.module}, "
                     f"attempt {ctx.attempt}) and propose a patch to that file only.", 10),
        Part("Verification report (sanitized)", json.dumps(rounded(sanitize(ctx.report)), indent=1, sort_keys=True,
                                                           default=str), 9, "json"),
        Part("First-divergence (bisect) report", json.dumps(rounded(sanitize(ctx.bisect)), indent=1, sort_keys=True,
                                                            default=str) if ctx.bisect else "", 8, "json"),
        Part(f"{ctx.failing_file} (with line numbers)", numbered(ctx.source), 9),
        Part("MEMORY.md", ctx.memory_md, 2, "markdown"),
    ]
    return parts


def _user_message(ctx: DebugContext) -> str:
    """The user message under the role's own budget (what a dispatch sends when the context is unknown)."""
    return assemble(_parts(ctx), max_chars=USER_BUDGET_CHARS)


def _squash(text: str) -> list[str]:
    return [line.strip() for line in text.strip("\n").splitlines() if line.strip()]


def check_debug(answer: DebugAnswer, ctx: DebugContext) -> DebugResult:
    lines = ctx.source.splitlines()
    for i, p in enumerate(answer.proposals, 1):
        if p.file.replace("\\", "/").removeprefix("./") != ctx.failing_file:
            raise AnswerError(f"proposal {i}: file must be {ctx.failing_file!r} (the failing file), not {p.file!r}")
        if not 1 <= p.line_start <= p.line_end <= len(lines):
            raise AnswerError(f"proposal {i}: line range {p.line_start}-{p.line_end} is outside the file "
                              f"(1..{len(lines)})")
        actual = lines[p.line_start - 1:p.line_end]
        if _squash(p.current_snippet) != _squash("\n".join(actual)):
            shown = "\n".join(actual)
            raise AnswerError(f"proposal {i}: current_snippet does not match lines {p.line_start}-{p.line_end}, "
                              f"which read:\n{shown}")
        if _squash(p.current_snippet) == _squash(p.proposed_snippet):
            raise AnswerError(f"proposal {i}: proposed_snippet is identical to current_snippet")
        if not p.expected_effect.strip() or not p.evidence.strip():
            raise AnswerError(f"proposal {i}: expected_effect and evidence must both be filled")
    return DebugResult(diagnosis=answer.diagnosis, proposals=answer.proposals)


def debug(env: RoleEnv, ctx: DebugContext) -> DebugResult:
    toolbox = ToolBox("debugger", env.skills, op_dir=env.op_dir, target_file=ctx.failing_file)
    return run_role(env, RoleCall(role="debugger", answer_model=DebugAnswer, parts=_parts(ctx),
                                  budget_chars=USER_BUDGET_CHARS, check=lambda a: check_debug(a, ctx),
                                  module=ctx.module, attempt=ctx.attempt, toolbox=toolbox))
