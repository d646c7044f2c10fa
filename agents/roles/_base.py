"""The loop every role shares: prompt -> bounded tool rounds -> JSON answer -> validation -> repair.

A role supplies its answer model (what the model must return), a user message built from its context,
and a ``check`` that turns a parsed answer into the contract result or raises :class:`AnswerError` with a
message the model can act on. Malformed answers go back to the model up to ``max_repairs`` times; after
that the role raises :class:`agents.contracts.AgentError` (the orchestrator counts a failed attempt).
Every model call and tool call goes through the :class:`agents.trace.Trace` (record/replay).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from agents.config import AgentsConfig
from agents.contracts import AgentError
from agents.llm import ChatProvider, ChatRequest
from agents.prompts import PromptTemplate
from agents.skills import ROLE_SKILLS, SkillLibrary
from agents.tools import ToolBox
from agents.trace import Trace

__all__ = ["AnswerError", "RoleCall", "RoleEnv", "parse_json_answer", "run_role"]

log = logging.getLogger(__name__)

A = TypeVar("A", bound=BaseModel)
R = TypeVar("R")

NODE_OF_ROLE = {"designer": "design", "implementer": "implement", "verifier": "audit", "debugger": "debug"}


class AnswerError(ValueError):
    """The model's answer is unusable; the message is sent back to the model verbatim."""


@dataclass
class RoleEnv:
    """Services shared by the four roles (built once by :func:`agents.build_agents`)."""

    config: AgentsConfig
    trace: Trace
    provider: Callable[[], ChatProvider]
    skills: SkillLibrary
    prompts: dict[str, PromptTemplate]
    base_url: str
    op_dir: Any = None


@dataclass
class RoleCall(Generic[A, R]):
    """One dispatch of one role."""

    role: str
    answer_model: type[A]
    user_message: str
    check: Callable[[A], R]
    module: int | None
    attempt: int
    toolbox: ToolBox


_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(.*)\n```\s*$", re.DOTALL)


def parse_json_answer(text: str | None, model: type[A]) -> A:
    """Parse the model's final text as the answer object; errors are phrased for the model."""
    if text is None or not text.strip():
        raise AnswerError("the answer was empty; reply with one JSON object")
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise AnswerError(f"the answer is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                          "reply with exactly one JSON object and nothing else") from None
    if not isinstance(data, dict):
        raise AnswerError("the answer must be a JSON object, not " + type(data).__name__)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:8])
        raise AnswerError(f"the JSON object does not match the required shape: {problems}") from None


def _response_format(role: str, model: type[BaseModel], mode: str) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": f"{role}_answer", "schema": model.model_json_schema(), "strict": False}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def system_prompt(env: RoleEnv, role: str, toolbox: ToolBox, answer_model: type[BaseModel]) -> str:
    """The role's template, rendered with its injected skills and its skill menu."""
    policy = ROLE_SKILLS[role]
    injected = []
    for section_id in policy.inject:
        try:
            injected.append(env.skills.get(section_id).text)
        except LookupError:
            log.warning("skill section %s missing; prompt rendered without it", section_id)
    readable = [t for t in policy.allowed]
    menu = env.skills.menu(readable)
    text = env.prompts[role].render(
        skills=("\n".join(injected)).strip() or "(none)",
        skills_menu=menu or "(none)",
        skill_cap=str(policy.cap),
        tools=", ".join(toolbox.names),
    )
    if env.config.llm.structured_output != "json_schema":
        schema = json.dumps(answer_model.model_json_schema(), separators=(",", ":"))
        text += f"\n\nAnswer JSON schema:\n{schema}\n"
    return text


def run_role(env: RoleEnv, call: RoleCall[A, R]) -> R:
    """Drive one dispatch to a checked result, or raise AgentError."""
    cfg = env.config.llm
    model = env.config.model_for(call.role)
    if not model:
        raise AgentError(call.role, "no model configured for this role (set FORGE_MODEL or [models] in forge.toml)")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(env, call.role, call.toolbox, call.answer_model)},
        {"role": "user", "content": call.user_message},
    ]
    response_format = _response_format(call.role, call.answer_model, cfg.structured_output)
    tool_rounds = 0
    repairs = 0
    node = NODE_OF_ROLE.get(call.role)
    prompt_hash = env.prompts[call.role].sha256
    while True:
        offer_tools = tool_rounds < cfg.max_tool_rounds and bool(call.toolbox.names)
        request = ChatRequest(
            model=model,
            messages=messages,
            tools=call.toolbox.schemas() if offer_tools else None,
            tool_choice="auto" if offer_tools else None,
            response_format=response_format,
            params=env.config.sampling_params(),
        )
        response = env.trace.call_model(request, env.provider, base_url=env.base_url, agent=call.role,
                                        module=call.module, attempt=call.attempt, node=node,
                                        prompt_hash=prompt_hash)
        if response.tool_calls:
            if not offer_tools:
                problem = (f"tool budget exhausted ({cfg.max_tool_rounds} rounds); "
                           "answer now with the JSON object, without calling tools")
            else:
                tool_rounds += 1
                messages = [*messages, {
                    "role": "assistant", "content": response.text,
                    "tool_calls": [{"id": c.id, "type": "function",
                                    "function": {"name": c.name, "arguments": c.arguments}}
                                   for c in response.tool_calls]}]
                for c in response.tool_calls:
                    result = _run_tool(env, call, c.name, c.arguments, node)
                    messages.append({"role": "tool", "tool_call_id": c.id, "content": result})
                continue
        else:
            try:
                answer = parse_json_answer(response.text, call.answer_model)
                return call.check(answer)
            except AnswerError as exc:
                problem = str(exc)
        repairs += 1
        log.info("%s answer rejected (%d/%d): %s", call.role, repairs, cfg.max_repairs, problem)
        if repairs > cfg.max_repairs:
            raise AgentError(call.role, f"no valid answer after {repairs} tries; last problem: {problem}",
                             attempts=repairs)
        messages = [*messages,
                    {"role": "assistant", "content": response.text or ""},
                    {"role": "user", "content": f"Your answer was rejected: {problem}\n"
                                                "Reply again with the complete corrected JSON object only."}]


def _run_tool(env: RoleEnv, call: RoleCall[Any, Any], name: str, raw_arguments: str, node: str | None) -> str:
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"error: tool arguments are not valid JSON ({exc.msg}); call the tool again with a JSON object"
    if not isinstance(arguments, dict):
        return "error: tool arguments must be a JSON object"
    return env.trace.call_tool(name, arguments, lambda: call.toolbox.run(name, arguments), agent=call.role,
                               module=call.module, attempt=call.attempt, node=node)
