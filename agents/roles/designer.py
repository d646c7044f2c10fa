"""Designer: SPEC.md + golden.py -> DESIGN.md + module_interfaces.yaml (+ rationale when deviating).

The module count is computed deterministically before the designer runs; the designer may choose another
count only with a written rationale, which the design gate shows to the human. The checks here catch
answers the deterministic design check would reject anyway (unparseable YAML, missing keys, a decision
line that disagrees with the modules listed) so the model can fix them within the same attempt.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field

from agents.contracts import DesignContext, DesignResult
from agents.roles._base import AnswerError, RoleCall, RoleEnv, run_role
from agents.roles._budget import Part, assemble
from agents.tools import ToolBox
from runtime.interfaces import parse_interfaces

__all__ = ["DesignAnswer", "design"]

USER_BUDGET_CHARS = 60_000
_DECISION = re.compile(r"module_count\s*[=:]\s*(\d+)")


class DesignAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")  # harmless extra keys from a model are dropped, not fatal

    design_md: str = Field(description="Full text of DESIGN.md (YAML front matter + sections).")
    module_interfaces_yaml: str = Field(description="Full text of module_interfaces.yaml.")
    rationale: str | None = Field(default=None,
                                  description="Required when module_count differs from the computed one.")


def _parts(ctx: DesignContext) -> list[Part]:
    parts = [
        Part("Task", f"Design operator `{ctx.op_name}` (design attempt {ctx.attempt}).", 10),
        Part("Computed complexity decision", json.dumps(ctx.complexity, indent=1, sort_keys=True), 10, "json"),
        Part("Design-check problems of the previous attempt", "\n".join(f"- {p}" for p in ctx.design_check_problems),
             9),
        Part("Human rejection notes (oldest first)", "\n".join(f"- {n}" for n in ctx.rejection_notes), 9),
        Part("SPEC.md", ctx.spec_md, 8, "markdown"),
        Part("golden.py", ctx.golden_py, 8, "python"),
        Part("MEMORY.md", ctx.memory_md, 2, "markdown"),
    ]
    return parts


def _user_message(ctx: DesignContext) -> str:
    """The user message under the role's own budget (what a dispatch sends when the context is unknown)."""
    return assemble(_parts(ctx), max_chars=USER_BUDGET_CHARS)


_FILE_NAME = re.compile(r"\S+\.(?:md|ya?ml|txt)")


def _names_a_file(field: str, text: str) -> None:
    """Refuse a field that holds a file name instead of the file's text.

    Why (UX audit s48): SmolLM2 answered ``"module_interfaces_yaml": "module_interfaces.yaml"`` and
    ``"design_md": "silu.md"``; the repair said "module_interfaces.yaml is not a YAML mapping", which a small model
    does not read as "send the contents", and it sent the same answer again (the dispatch stopped)."""
    if _FILE_NAME.fullmatch(text.strip()):
        raise AnswerError(f"{field} holds {text.strip()!r}, a file name: put the file's full text in {field}, "
                          "not its name")


def check_design(answer: DesignAnswer, ctx: DesignContext) -> DesignResult:
    _names_a_file("module_interfaces_yaml", answer.module_interfaces_yaml)
    _names_a_file("design_md", answer.design_md)
    model, problems = parse_interfaces(answer.module_interfaces_yaml)  # the one model (runtime.interfaces)
    if model is None:
        raise AnswerError("; ".join(problems))
    modules = model.modules
    if not answer.design_md.strip():
        raise AnswerError("design_md is empty")
    decision = _DECISION.search(answer.design_md)
    if decision is None:
        raise AnswerError("DESIGN.md must state the decision line `**Decision**: module_count = N`")
    if int(decision.group(1)) != len(modules):
        raise AnswerError(f"DESIGN.md says module_count = {decision.group(1)} but module_interfaces.yaml lists "
                          f"{len(modules)} module(s); make them agree")
    computed = ctx.complexity.get("module_count")
    rationale = (answer.rationale or "").strip() or None
    if isinstance(computed, int) and computed != len(modules) and rationale is None:
        raise AnswerError(f"the computed module_count is {computed} but the design has {len(modules)}; either "
                          "follow the computed count or give a `rationale` for the deviation")
    return DesignResult(design_md=answer.design_md, module_interfaces_yaml=answer.module_interfaces_yaml,
                        rationale=rationale)


def design(env: RoleEnv, ctx: DesignContext) -> DesignResult:
    toolbox = ToolBox("designer", env.skills, op_dir=env.op_dir, lint_stage="design")
    return run_role(env, RoleCall(role="designer", answer_model=DesignAnswer, parts=_parts(ctx),
                                  budget_chars=USER_BUDGET_CHARS, check=lambda a: check_design(a, ctx),
                                  module=None, attempt=ctx.attempt, toolbox=toolbox))
