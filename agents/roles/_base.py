"""The loop every role shares: prompt -> bounded tool rounds -> JSON answer -> validation -> repair.

A role supplies its answer model (what the model must return), the sections of its user message, and a
``check`` that turns a parsed answer into the contract result or raises :class:`AnswerError` with a message
the model can act on. The answer is found in what models really write (:mod:`agents.roles._answer`: prose
around a fence, several objects, a tool call written as text, a truncated answer). Malformed answers go back
to the model up to ``max_repairs`` times; the same problem twice in a row (or a byte-identical answer) stops
at once with ``AgentError(stop=True)``, since asking again cannot help. Prompts are fitted into the model's
context when it is known (:mod:`agents.roles._fit`). Every model call and tool call goes through the
:class:`agents.trace.Trace` (record/replay).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from agents.config import AgentsConfig
from agents.contracts import AgentError
from agents.llm import ChatProvider, ChatRequest, ChatResponse
from agents.prompts import PromptTemplate
from agents.roles._answer import AnswerError, pick, text_tool_call, without_reasoning
from agents.roles._budget import Part, assemble
from agents.roles._fit import Fit, compact, est_tokens, fit_dispatch, messages_tokens
from agents.skills import ROLE_SKILLS, SkillLibrary
from agents.tools import ToolBox
from agents.trace import Trace

__all__ = ["AnswerError", "RoleCall", "RoleEnv", "parse_json_answer", "run_role"]

log = logging.getLogger(__name__)

A = TypeVar("A", bound=BaseModel)
R = TypeVar("R")

NODE_OF_ROLE = {"designer": "design", "implementer": "implement", "verifier": "audit", "debugger": "debug"}


def _no_context(model: str) -> int | None:  # noqa: ARG001 - the signature of RoleEnv.context_for
    return None


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
    context_for: Callable[[str], int | None] = field(default=_no_context)
    """Context window (tokens) of a model, or None when unknown (then prompts are not fitted)."""


@dataclass
class RoleCall(Generic[A, R]):
    """One dispatch of one role."""

    role: str
    answer_model: type[A]
    parts: list[Part]
    """Sections of the user message (assembled under ``budget_chars``, or fitted into the context)."""
    budget_chars: int
    check: Callable[[A], R]
    module: int | None
    attempt: int
    toolbox: ToolBox

    @property
    def user_message(self) -> str:
        """The user message under the role's own budget (what an unfitted dispatch sends)."""
        return assemble(self.parts, max_chars=self.budget_chars)


def parse_json_answer(text: str | None, model: type[A]) -> A:
    """The first JSON object in ``text`` that validates as ``model``; errors are phrased for the model."""
    return pick(text, model, lambda answer: answer)


def _response_format(role: str, model: type[BaseModel], mode: str) -> dict[str, Any] | None:
    if mode == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": f"{role}_answer", "schema": model.model_json_schema(), "strict": False}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def system_prompt(env: RoleEnv, role: str, toolbox: ToolBox, answer_model: type[BaseModel],
                  inject: list[str] | None = None, full_menu: bool = True) -> str:
    """The role's template, rendered with its injected skills and its skill menu.

    ``inject`` (default: the role's whole list) and ``full_menu`` (False: topic names only) are what prompt
    fitting shrinks.
    """
    policy = ROLE_SKILLS[role]
    injected = []
    for section_id in policy.inject if inject is None else inject:
        try:
            injected.append(env.skills.get(section_id).text)
        except LookupError:
            log.warning("skill section %s missing; prompt rendered without it", section_id)
    readable = [t for t in policy.allowed]
    menu = env.skills.menu(readable) if full_menu else "- " + ", ".join(readable) + " (read_skill shows a topic's sections)"
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


def _signature(response: ChatResponse) -> str:
    return json.dumps([response.text, [[c.name, c.arguments] for c in response.tool_calls]], ensure_ascii=False)


def run_role(env: RoleEnv, call: RoleCall[A, R]) -> R:
    """Drive one dispatch to a checked result, or raise AgentError."""
    cfg = env.config.llm
    model = env.config.model_for(call.role)
    if not model:
        raise AgentError(call.role, "no model configured for this role (set FORGE_MODEL or [models] in forge.toml)")
    params = env.config.sampling_params()
    tools = call.toolbox.schemas() if call.toolbox.names else None
    context = env.context_for(model)
    fit: Fit | None = None
    if context is None:
        system = system_prompt(env, call.role, call.toolbox, call.answer_model)
        user = call.user_message
    else:
        tools_tokens = est_tokens(json.dumps(tools, ensure_ascii=False)) if tools and cfg.max_tool_rounds else 0
        system, user, fit = fit_dispatch(
            role=call.role, model=model, context=context, max_tokens=params.get("max_tokens"),
            tools_tokens=tools_tokens, inject=list(ROLE_SKILLS[call.role].inject),
            render_system=lambda inject, full_menu: system_prompt(env, call.role, call.toolbox, call.answer_model,
                                                                  inject, full_menu),
            parts=call.parts, budget_chars=call.budget_chars)
        params["max_tokens"] = fit.answer_tokens
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    response_format = _response_format(call.role, call.answer_model, cfg.structured_output)
    tool_rounds = repairs = calls = 0
    last_key: str | None = None
    last_answer: str | None = None
    node = NODE_OF_ROLE.get(call.role)
    prompt_hash = env.prompts[call.role].sha256
    while True:
        offer_tools = tool_rounds < cfg.max_tool_rounds and bool(call.toolbox.names)
        fit_record = None
        if fit is not None:
            tools_tokens = est_tokens(json.dumps(tools, ensure_ascii=False)) if offer_tools and tools else 0
            available = fit.context - fit.answer_tokens - tools_tokens
            messages, notes = compact(messages, available)
            fit_record = {**fit.record(), "prompt_tokens": messages_tokens(messages) + tools_tokens,
                          "dropped": fit.dropped + notes}
            if messages_tokens(messages) > available:
                raise AgentError(call.role, f"the conversation no longer fits the context of {model} "
                                            f"({fit.context} tokens) even with its earlier turns omitted",
                                 attempts=repairs, stop=True, model_calls=calls)
        request = ChatRequest(
            model=model,
            messages=messages,
            tools=tools if offer_tools else None,
            tool_choice="auto" if offer_tools else None,
            response_format=response_format,
            params=params,
        )
        response = env.trace.call_model(request, env.provider, base_url=env.base_url, agent=call.role,
                                        module=call.module, attempt=call.attempt, node=node,
                                        prompt_hash=prompt_hash, fit=fit_record)
        calls += 1
        call_seq = env.trace.last_seq
        truncated = response.finish_reason == "length"
        problem: AnswerError
        if response.tool_calls and offer_tools:
            tool_rounds += 1
            messages = [*messages, {
                "role": "assistant", "content": response.text and _history_text(response.text),
                "tool_calls": [{"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": c.arguments}}
                               for c in response.tool_calls]}]
            for c in response.tool_calls:
                result = _run_tool(env, call, c.name, c.arguments, node)
                messages.append({"role": "tool", "tool_call_id": c.id, "content": result})
            continue
        if response.tool_calls:
            problem = AnswerError(f"tool budget exhausted ({cfg.max_tool_rounds} rounds); answer now with the JSON "
                                  "object, without calling tools", key="tool budget exhausted")
        else:
            try:
                return pick(response.text, call.answer_model, call.check, truncated=truncated,
                            max_tokens=params.get("max_tokens"),
                            generated=response.usage.completion_tokens)
            except AnswerError as exc:
                problem = exc
            written = None if truncated else text_tool_call(response.text, call.toolbox.names)
            if written is not None and offer_tools:
                tool_rounds += 1
                result = _run_tool(env, call, written.name, json.dumps(written.arguments), node)
                messages = [*messages, {"role": "assistant", "content": _history_text(response.text)},
                            {"role": "user", "content": f"Result of {written.name}:\n{result}\n\n(Next time call "
                                                        "tools through the tool-calling interface, not as text.)"}]
                continue
            if written is not None:
                problem = AnswerError(f"you wrote a call of {written.name} as text, but no tools are available now; "
                                      "answer with the JSON object", key="tool call written as text")
        repairs += 1
        signature = _signature(response)
        repeated = None
        if signature == last_answer:
            repeated = "the model sent a byte-identical answer twice in a row"
        elif problem.key == last_key:
            repeated = "the same problem twice in a row"
        last_answer, last_key = signature, problem.key
        log.info("%s answer rejected (%d/%d): %s", call.role, repairs, cfg.max_repairs, problem)
        env.trace.emit("error", node=node, agent=call.role, module=call.module, attempt=call.attempt,
                       message=f"answer rejected: {problem}", rejected_call=call_seq)
        if repeated is not None:
            raise AgentError(call.role, f"{repeated} ({repairs} tries): {problem}{_last_answer(response)}",
                             attempts=repairs, stop=True, model_calls=calls)
        if repairs > cfg.max_repairs:
            raise AgentError(call.role, f"no valid answer after {repairs} tries; last problem: {problem}"
                                        f"{_last_answer(response)}", attempts=repairs, model_calls=calls)
        messages = [*messages,
                    {"role": "assistant", "content": _history_text(response.text)},
                    {"role": "user", "content": f"Your answer was rejected: {problem}\n"
                                                "Reply again with the complete corrected JSON object only."}]


def _last_answer(response: ChatResponse, limit: int = 100) -> str:
    """`` (its last answer: "...")``: the start of the answer that ended the dispatch, on one line.

    Why: a model that refused ("I'm sorry, but I can't help with that."), sent nothing, or wrote prose was shown
    at the blocked gate only as "the answer contains no JSON object" - the human deciding had to dig the answer
    out of the trace's blobs (UX audit s44)."""
    if response.tool_calls and not response.text:
        return f" (its last answer: a call of {response.tool_calls[0].name})"
    text = " ".join((response.text or "").split())
    if not text:  # the problem says so already ("the answer was empty")
        return ""
    return f' (its last answer: "{text if len(text) <= limit else text[: limit - 3] + "..."}")'


def _history_text(text: str | None) -> str:
    """What the conversation keeps of an answer: without a thinking model's reasoning block, as the model's own
    chat templates (Qwen3, DeepSeek-R1) keep earlier turns - the reasoning is spent context, not part of the
    exchange. An answer that was all reasoning stays whole (the repair message says what was missing)."""
    if not text:
        return ""
    return without_reasoning(text) or text


def _run_tool(env: RoleEnv, call: RoleCall[Any, Any], name: str, raw_arguments: str, node: str | None) -> str:
    try:
        arguments = json.loads(raw_arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"error: tool arguments are not valid JSON ({exc.msg}); call the tool again with a JSON object"
    if not isinstance(arguments, dict):
        return "error: tool arguments must be a JSON object"
    return env.trace.call_tool(name, arguments, lambda: call.toolbox.run(name, arguments), agent=call.role,
                               module=call.module, attempt=call.attempt, node=node)
