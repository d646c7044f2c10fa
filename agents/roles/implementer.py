"""Implementer: exactly one stage file per dispatch (``ImplementContext.target_file``).

The answer must name the target path exactly, be valid Python, define the required wrapper and one
``@pypto.frontend.jit`` kernel, and (L1) carry the current module's marker. Anything else goes back to the
model as a repair request; the orchestrator, not the agent, writes the file.
"""

from __future__ import annotations

import ast
import re

from pydantic import BaseModel, ConfigDict, Field

from agents.contracts import ImplementContext, ImplementResult
from agents.roles._base import AnswerError, RoleCall, RoleEnv, run_role
from agents.roles._budget import Part, assemble
from agents.tools import ToolBox
from runtime import pyast
from runtime.markers import markers

__all__ = ["ImplementAnswer", "check_implementation", "implement", "user_message"]

USER_BUDGET_CHARS = 34_000
"""With the system prompt and injected skills this keeps implementer calls under ~12k prompt tokens."""

_FENCE = re.compile(r"^\s*```(?:python|py)?\s*\n(.*?)\n```\s*$", re.DOTALL)
_INNER_FENCE = re.compile(r"^[ \t]*```(?:python|py)?[ \t]*\n(.*?)\n[ \t]*```[ \t]*$", re.DOTALL | re.MULTILINE)


class ImplementAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")  # harmless extra keys from a model are dropped, not fatal

    path: str = Field(description="Must be exactly the target file given in the task.")
    content: str = Field(description="The complete Python source of the file.")
    notes: str = Field(default="", description="Short notes for the log (assumptions, open risks).")


def _norm(path: str) -> str:
    return path.strip().replace("\\", "/").removeprefix("./")


def _parts(ctx: ImplementContext) -> list[Part]:
    task = (f"Write `{ctx.target_file}` for operator `{ctx.op_name}`: module {ctx.module} of {ctx.module_count} "
            f"(level {ctx.level}), attempt {ctx.attempt}. Required wrapper: `{ctx.wrapper_name}`.")
    if ctx.previous_stage_file:
        task += (f" Start from the verified previous stage `{ctx.previous_stage_file}`: its module regions are "
                 "frozen and must be copied unchanged.")
    recent, older = ctx.feedback[-3:], ctx.feedback[:-3]
    numbered = [f"[{i}] {f}" for i, f in enumerate(ctx.feedback, 1)]
    # On a fix attempt the current file already holds the frozen regions, so the previous stage matters less.
    previous_priority = 4 if ctx.current_source else 9
    parts = [
        Part("Task", task, 10),
        Part("Older feedback", "\n\n".join(numbered[: len(older)]), 3),
        Part("Latest feedback (newest last)", "\n\n".join(numbered[len(older):]) if recent else "", 9),
        Part(f"Current content of {ctx.target_file}", ctx.current_source or "", 8, "python"),
        Part(f"Previous verified stage {ctx.previous_stage_file}", ctx.previous_stage_source or "",
             previous_priority, "python"),
        Part("module_interfaces.yaml", ctx.module_interfaces_yaml, 8, "yaml"),
        Part("DESIGN.md", ctx.design_md, 6, "markdown"),
        Part("SPEC.md", ctx.spec_md, 6, "markdown"),
        Part("golden.py", ctx.golden_py, 5, "python"),
        Part("MEMORY.md", ctx.memory_md, 1, "markdown"),
    ]
    return parts


def user_message(ctx: ImplementContext) -> str:
    """The user message under the role's own budget (what a dispatch sends when the context is unknown)."""
    return assemble(_parts(ctx), max_chars=USER_BUDGET_CHARS)


def check_implementation(answer: ImplementAnswer, ctx: ImplementContext) -> ImplementResult:
    if _norm(answer.path) != _norm(ctx.target_file):
        raise AnswerError(f"path must be exactly {ctx.target_file!r} (the only file you may write), "
                          f"not {answer.path!r}")
    content = answer.content
    fenced = _FENCE.match(content)
    if fenced:
        content = fenced.group(1)
    if not content.strip():
        raise AnswerError("content is empty; give the complete file")
    try:
        tree = pyast.parse(content, filename=ctx.target_file)
    except SyntaxError as exc:
        # a sentence around the fenced file inside "content" ("Here is the kernel:\n```python ..."): the one fenced
        # block, when there is exactly one and it parses; anything else goes back as the syntax error
        blocks = _INNER_FENCE.findall(content)
        tree = _parsed(blocks[0], ctx.target_file) if len(blocks) == 1 else None
        if tree is None:
            raise AnswerError(f"content is not valid Python: line {exc.lineno}: {exc.msg}") from None
        content = blocks[0]
    functions = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    if ctx.wrapper_name not in functions:
        raise AnswerError(f"the file must define the wrapper `def {ctx.wrapper_name}(...)`")
    if "pypto.frontend.jit" not in content:
        raise AnswerError("the file must contain exactly one kernel decorated with `@pypto.frontend.jit`")
    if ctx.level == "L1":
        if ctx.module not in {m.module for m in markers(content.splitlines())}:  # runtime.markers' definition
            raise AnswerError(f"stage files mark module code with `# --- Module M{ctx.module}: <role> ---`; "
                              f"the marker for M{ctx.module} is missing")
    if not content.endswith("\n"):
        content += "\n"
    return ImplementResult(path=ctx.target_file, content=content, notes=answer.notes)


def _parsed(source: str, filename: str) -> ast.Module | None:
    try:
        return pyast.parse(source, filename=filename)
    except SyntaxError:
        return None


def implement(env: RoleEnv, ctx: ImplementContext) -> ImplementResult:
    toolbox = ToolBox("implementer", env.skills, op_dir=env.op_dir, target_file=ctx.target_file,
                      wrapper_name=ctx.wrapper_name, lint_stage="final" if ctx.level == "L0" else "module",
                      previous_stage=ctx.previous_stage_file)
    return run_role(env, RoleCall(role="implementer", answer_model=ImplementAnswer, parts=_parts(ctx),
                                  budget_chars=USER_BUDGET_CHARS, check=lambda a: check_implementation(a, ctx),
                                  module=ctx.module, attempt=ctx.attempt, toolbox=toolbox))
