"""Prompts that fit the model's context window.

Each model has a context size (``[context]`` in forge.toml; for the local model llama.cpp reads it from the
GGUF). When it is known, a dispatch is fitted before anything is sent, in this stated order:

1. the answer gets at most a quarter of the context (``max_tokens`` of the request), the tool schemas what
   they take, the later tool and repair rounds an eighth (at most 1024 tokens);
2. the skill menu shrinks to the readable topic names;
3. the user message's sections are shortened by their priority (lowest first: MEMORY.md, older feedback,
   ...; :mod:`agents.roles._budget`), but not below its sections of priority 8 and more while injected skill
   sections remain;
4. injected skill sections are dropped, the last listed first (``ROLE_SKILLS[role].inject`` is in order of
   importance);
5. the user message is shortened further, down to its priority-10 sections (the task itself).

If even the template, the task and the answer reserve do not fit, the dispatch is refused before any call
(:class:`PromptTooLargeError`). During the tool and repair rounds the conversation grows; older turns are
elided (:func:`compact`) before a request would overflow. What was dropped is recorded on every model call
in the trace (``llm_call.fit``). A model with no known context is not fitted at all (the role's fixed
character budgets apply, as before).

Tokens are estimated, not counted: ``size(text) / CHARS_PER_TOKEN`` where :func:`agents.roles._budget.size`
ignores numeric literals, plus ``NUMBER_TOKENS`` per numeric literal (so a measured number's digits never move
a cut: prompts stay portable). On the shipped prompts the SmolLM2 tokenizer gave 2.5-2.8 characters per token
(numbers included; the debugger's number-heavy reports are the lowest, ``bench/local_model.py``); GPT
tokenizers give about 4.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from agents.contracts import AgentError
from agents.roles._budget import _NUMBER, Part, assemble_noted, floor_chars, size

__all__ = ["CHARS_PER_TOKEN", "Fit", "PromptTooLargeError", "answer_tokens", "compact", "est_tokens"]

CHARS_PER_TOKEN = 2.5
NUMBER_TOKENS = 4
MESSAGE_OVERHEAD_TOKENS = 8
"""Chat-template tokens around each message (role markers, separators)."""
ANSWER_SHARE = 4
"""The answer may take at most ``context // ANSWER_SHARE`` tokens."""
ESSENTIAL_PRIORITY = 8
CONVERSATION_SHARE = 8
"""The first prompt leaves ``context // CONVERSATION_SHARE`` tokens (at most 1024) for the tool and repair rounds."""


def est_tokens(text: str) -> int:
    """Estimated tokens: the text without numbers at CHARS_PER_TOKEN, plus NUMBER_TOKENS per numeric literal
    (tokenizers split digits; counting literals, not digits, keeps the estimate the same on every machine)."""
    return math.ceil(size(text) / CHARS_PER_TOKEN) + NUMBER_TOKENS * len(_NUMBER.findall(text))


def messages_tokens(messages: list[dict[str, Any]]) -> int:
    total = 0
    for m in messages:
        total += MESSAGE_OVERHEAD_TOKENS + est_tokens(m.get("content") or "")
        if m.get("tool_calls"):
            total += est_tokens(json.dumps(m["tool_calls"], ensure_ascii=False))
    return total


def answer_tokens(max_tokens: int | None, context: int) -> int:
    share = context // ANSWER_SHARE
    return min(max_tokens, share) if max_tokens else share


class PromptTooLargeError(AgentError):
    """Even the smallest prompt of a role does not fit the model's context; nothing was sent."""


@dataclass
class Fit:
    """How one dispatch was fitted into the context (recorded on each model call)."""

    context: int
    answer_tokens: int
    prompt_tokens: int = 0
    """Estimated tokens of the request's messages (and tool schemas)."""
    dropped: list[str] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return {"context": self.context, "answer_tokens": self.answer_tokens, "prompt_tokens": self.prompt_tokens,
                "dropped": list(self.dropped)}


def fit_dispatch(
    *,
    role: str,
    model: str,
    context: int,
    max_tokens: int | None,
    tools_tokens: int,
    inject: list[str],
    render_system: Any,
    parts: list[Part],
    budget_chars: int,
) -> tuple[str, str, Fit]:
    """System prompt and user message of one dispatch, fitted into ``context`` (order in the module docstring).

    ``render_system(inject, full_menu)`` renders the system prompt with the given injected sections.

    Raises:
        PromptTooLargeError: the minimum (template, task, answer reserve) does not fit.
    """
    fit = Fit(context=context, answer_tokens=answer_tokens(max_tokens, context))
    reserve = min(context // CONVERSATION_SHARE, 1024)
    available = context - fit.answer_tokens - tools_tokens - 2 * MESSAGE_OVERHEAD_TOKENS - reserve
    essential = min(floor_chars(parts, ESSENTIAL_PRIORITY), budget_chars)
    minimum = floor_chars(parts, 10)
    kept = list(inject)
    full_menu = True
    steps: list[str] = []

    def attempt(floor: int, *, last: bool = False) -> tuple[str, str, list[str]] | None:
        system = render_system(kept, full_menu)
        room = int((available - est_tokens(system)) * CHARS_PER_TOKEN)
        budget = min(budget_chars, room)
        if budget < floor:
            if not last:
                return None
            budget = floor  # the smallest message: priority-10 sections whole, the rest cut to markers

        def fits(chars: int) -> tuple[str, list[str]] | None:
            user, notes = assemble_noted(parts, max_chars=chars)
            return (user, notes) if est_tokens(system) + est_tokens(user) <= available else None

        # numbers (headers, markers, the text's own) cost tokens that size() does not count: the largest budget
        # that fits, by bisection (deterministic: the same inputs give the same cut)
        best = fits(budget)
        if best is None:
            lo, hi = floor, budget
            best = fits(lo)
            if best is None:
                return None
            while hi - lo > 64:
                mid = (lo + hi) // 2
                found = fits(mid)
                if found is not None:
                    lo, best = mid, found
                else:
                    hi = mid
        return system, best[0], best[1]

    result = attempt(essential)
    if result is None:
        full_menu = False
        steps.append("skill menu: topic names only")
        result = attempt(essential)
    while result is None and kept:
        steps.append(f"skill section {kept.pop()}")
        result = attempt(essential)
    if result is None:
        result = attempt(minimum, last=True)
    if result is None:
        system = render_system([], False)
        smallest, _ = assemble_noted(parts, max_chars=minimum)
        need = (est_tokens(system) + est_tokens(smallest) + fit.answer_tokens + tools_tokens + reserve
                + 2 * MESSAGE_OVERHEAD_TOKENS)
        raise PromptTooLargeError(
            role, f"the smallest {role} prompt needs about {need} tokens (template, task, tools, a "
                  f"{fit.answer_tokens}-token answer and {reserve} for the repair rounds) but {model} has a context "
                  f"of {context} tokens; use a model with a larger context", attempts=0, stop=True, model_calls=0)
    system, user, notes = result
    fit.dropped = steps + [f"user message: {n}" for n in notes]
    fit.prompt_tokens = est_tokens(system) + est_tokens(user) + 2 * MESSAGE_OVERHEAD_TOKENS + tools_tokens
    return system, user, fit


def compact(messages: list[dict[str, Any]], available: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Elide older turns (after the first system and user message) until the conversation fits ``available``.

    The newest two messages stay whole as long as possible; an assistant message keeps its tool calls (their
    results must follow them), only texts and call arguments are replaced by a marker. As a last resort the
    newest message, when it is a tool result, keeps only its first lines. Returns the messages and notes.
    """
    out = [dict(m) for m in messages]
    notes: list[str] = []
    order = list(range(2, len(out) - 2)) + list(range(max(2, len(out) - 2), len(out) - 1))
    for i in order:
        if messages_tokens(out) <= available:
            break
        content = out[i].get("content")
        calls = out[i].get("tool_calls")
        if calls and any(c["function"].get("arguments") not in ("{}", None) for c in calls):
            out[i]["tool_calls"] = [{**c, "function": {**c["function"], "arguments": "{}"}} for c in calls]
            notes.append(f"conversation: tool-call arguments of message {i} omitted")
        if not content or content.startswith("[omitted"):
            continue
        out[i]["content"] = f"[omitted to fit the context: {len(content.splitlines())} lines]"
        notes.append(f"conversation: message {i} ({out[i].get('role')}) omitted")
    last = out[-1] if len(out) > 2 else None
    if last is not None and last.get("role") == "tool" and messages_tokens(out) > available:
        room = available - messages_tokens(out[:-1]) - MESSAGE_OVERHEAD_TOKENS - 30  # 30: the marker line
        lines = (last.get("content") or "").splitlines()
        kept: list[str] = []
        for line in lines:
            room -= est_tokens(line) + 1
            if room < 0:
                break
            kept.append(line)
        last["content"] = "\n".join([*kept, f"[... {len(lines) - len(kept)} more lines omitted to fit the context]"])
        notes.append(f"conversation: tool result shortened from {len(lines)} to {len(kept)} lines")
    return out, notes
