"""Find the answer in what a model really writes.

Real models rarely send exactly one JSON object. They put a sentence before it, wrap it in a Markdown
fence, send two objects (a draft and the final one), stop in the middle at the token limit, or write a tool
call as text instead of using the tool-calling interface. :func:`candidates` lists every JSON object in an
answer, in order (the whole text, then fenced blocks, then bare objects found by scanning); the role takes
the first one that validates and passes its checks (:func:`pick`). Reasoning models (DeepSeek-R1, Qwen3, and
any model served without a reasoning parser) put their thinking in the answer as a leading ``<think>...</think>``
block, or only its closing tag when the chat template opened it: :func:`without_reasoning` removes it first, so
a draft object written while thinking is never taken for the answer. :func:`text_tool_call` recognises a tool
call written as text. Every problem is an :class:`AnswerError` whose message is sent back to the model and
whose :attr:`AnswerError.key` says whether two failures are "the same" (positions inside a broken JSON text
do not make two failures different).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = ["AnswerError", "TextToolCall", "candidates", "pick", "text_tool_call", "without_reasoning"]

A = TypeVar("A", bound=BaseModel)
R = TypeVar("R")

MAX_CANDIDATES = 16
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)(?:\n[ \t]*```|\Z)", re.DOTALL)
_TOOL_TAG = re.compile(r"<(tool_call|function_call|tool)>\s*(.*?)\s*</\1>", re.DOTALL)
_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|["\\/bfnrt]|.|$)', re.DOTALL)
_LENIENT = json.JSONDecoder(strict=False)
_REASONING_OPEN = re.compile(r"\A\s*<(think|thinking|reasoning)>", re.IGNORECASE)
_REASONING_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
MAX_LITERAL_CHARS = 200_000
"""A Python-literal answer larger than this is not tried with ``ast.literal_eval`` (its parser is not linear)"""


class AnswerError(ValueError):
    """The model's answer is unusable; the message is sent back to the model verbatim.

    ``key`` identifies the kind of failure: two failures with the same key in a row are a repeated failure.
    """

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key or message


@dataclass(frozen=True)
class TextToolCall:
    """A tool call the model wrote into its text (``{"name": ..., "arguments": {...}}``)."""

    name: str
    arguments: dict[str, Any]


def without_reasoning(text: str) -> str:
    """``text`` without the reasoning a thinking model puts before its answer.

    Removes leading ``<think>``/``<thinking>``/``<reasoning>`` blocks, and everything up to the first closing tag
    when the text starts inside one whose opening tag the chat template wrote (Qwen3, DeepSeek-R1: the content
    begins with the thinking, then ``</think>``). A block still open at the end is all reasoning: the result is
    empty. Text without these tags is returned unchanged (the same object).
    """
    rest = text
    closing = _REASONING_CLOSE.search(rest)
    if closing is not None and not _REASONING_OPEN.match(rest) and f"<{closing.group(1).lower()}>" not in \
            rest[:closing.start()].lower():
        rest = rest[closing.end():]
    while (opened := _REASONING_OPEN.match(rest)) is not None:
        end = re.compile(rf"</{opened.group(1)}>", re.IGNORECASE).search(rest, opened.end())
        if end is None:
            return ""
        rest = rest[end.end():]
    return rest.lstrip() if rest is not text else text


def _escaped(m: re.Match[str]) -> str:
    """An escape as JSON reads it; a backslash that starts none, as the literal backslash it was meant to be"""
    g = m.group(1)
    valid = len(g) == 5 if g[:1] == "u" else len(g) == 1 and g in '"\\/bfnrt'
    return m.group(0) if valid else "\\\\" + g


def _loads(text: str) -> Any:
    """``json.loads``, and what a model means by the three near-JSON forms models write most.

    Raw newlines and tabs inside strings (a file's source pasted into ``"content"`` without escaping them: the
    most frequent way a real model's answer fails), a backslash that starts no JSON escape (``"\\d"`` in a
    regular expression, a Windows path), and a Python dict literal (single quotes, ``True``/``None``). Each is
    read as what it evidently says instead of costing a repair round; the answer's checks and, for code, the
    verifier stay the judges of what it says. Raises the strict parse's error when none of them reads it."""
    try:
        return json.loads(text)
    except ValueError as strict:
        try:
            return _LENIENT.decode(text)
        except ValueError:
            pass
        try:
            return _LENIENT.decode(_ESCAPE.sub(_escaped, text))
        except ValueError:
            pass
        if text.startswith("{") and len(text) <= MAX_LITERAL_CHARS:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                pass
            else:
                if isinstance(value, dict) and all(isinstance(k, str) for k in value):
                    return value
        raise strict from None


def _objects(text: str, errors: list[str]) -> Iterable[dict[str, Any]]:
    """Every top-level JSON object in ``text`` by scanning for ``{`` (nested objects are not listed twice).

    The syntax error at the first ``{`` that starts no object is appended to ``errors``. Raw control characters
    inside strings are taken (see `_loads`).
    """
    decoder = _LENIENT
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except ValueError as exc:
            if not errors:
                errors.append(_syntax(exc))
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            yield value
        pos = text.find("{", end)


def candidates(text: str) -> tuple[list[dict[str, Any]], str | None]:
    """JSON objects in ``text`` in the order a reader would try them, and the first JSON syntax error seen.

    Order: the whole text (when it is one object), each fenced block (when it is one object), then every
    top-level object found by scanning the text. Duplicates are listed once.
    """
    found: list[dict[str, Any]] = []
    seen: set[str] = set()
    syntax: str | None = None

    def add(value: Any) -> None:
        if isinstance(value, dict):
            key = json.dumps(value, sort_keys=True, ensure_ascii=False)
            if key not in seen and len(found) < MAX_CANDIDATES:
                seen.add(key)
                found.append(value)

    body = text.strip()
    try:
        add(_loads(body))
    except ValueError as exc:
        if body.startswith("{"):
            syntax = _syntax(exc)
    for match in _FENCE.finditer(text):
        block = match.group(2).strip()
        if not block.startswith(("{", "[")):
            continue
        try:
            add(_loads(block))
        except ValueError as exc:
            syntax = syntax or _syntax(exc)
    scan_errors: list[str] = []
    before = len(found)
    for value in _objects(text, scan_errors):
        add(value)
    if len(found) == before and "\\" in text:  # a stray backslash inside the only object (see `_loads`)
        for value in _objects(_ESCAPE.sub(_escaped, text), []):
            add(value)
    return found, syntax or (scan_errors[0] if scan_errors else None)


def _syntax(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return str(exc)


def _shape_problem(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(x) for x in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()[:8])


def pick(text: str | None, model: type[A], check: Callable[[A], R], *, truncated: bool = False,
         max_tokens: int | None = None, generated: int = 0) -> R:
    """The checked result of the first JSON object in ``text`` that validates as ``model`` and passes ``check``.

    Raises:
        AnswerError: nothing usable; the message says why (for the best candidate: the first one that had the
            right shape, else the first object, else the syntax error), and says so when the answer was cut
            off at the token limit.
    """
    if text is None or not text.strip():
        if truncated:
            raise _truncated(max_tokens, generated)
        raise AnswerError("the answer was empty; reply with one JSON object")
    answer_text = without_reasoning(text)
    if not answer_text.strip():
        if truncated:
            raise _truncated(max_tokens, generated)
        raise AnswerError("the answer holds only reasoning (a <think> block) and nothing after it; end your "
                          "reasoning with </think> and reply with the JSON object", key="only reasoning")
    objects, syntax = candidates(answer_text)
    if not objects and answer_text is not text and not _REASONING_OPEN.match(text):
        # only a closing tag marked the reasoning, and no object follows it: the tag did not end a block the chat
        # template opened (an answer quoting it), so the whole text is read as before
        objects, syntax = candidates(text)
    shape_error: AnswerError | None = None
    check_error: AnswerError | None = None
    for obj in objects:
        try:
            answer = model.model_validate(obj)
        except ValidationError as exc:
            if shape_error is None:
                problem = _shape_problem(exc)
                shape_error = AnswerError(f"the JSON object does not match the required shape: {problem}")
            continue
        try:
            return check(answer)
        except AnswerError as exc:
            check_error = check_error or _placeholders(obj) or exc
    if truncated:
        raise _truncated(max_tokens, generated)
    if check_error is not None:
        raise check_error
    if shape_error is not None:
        raise shape_error
    if syntax is not None:
        raise AnswerError(f"the answer is not valid JSON ({syntax}); reply with exactly one JSON object and "
                          "nothing else", key=f"the answer is not valid JSON ({syntax.split(' at line ')[0]})")
    raise AnswerError("the answer contains no JSON object; reply with exactly one JSON object and nothing else")


_PLACEHOLDER = re.compile(r"<[^<>\n]{1,80}>")


def _placeholders(obj: Any) -> AnswerError | None:
    """An answer that copied the format's placeholders (``"design_md": "<full DESIGN.md>"``), said as such.

    Why (UX audit s49): SmolLM2 sent the prompt's answer format back verbatim, and was told "module_interfaces.yaml
    is not a YAML mapping" - true, but a small model does not read it as "put the real text where the placeholder
    is"; it sent the same answer again and the design stopped. Only for an answer that fails its checks: a passing
    answer with ``"notes": "<short>"`` is taken as it is."""
    if not isinstance(obj, dict):
        return None
    fields = [k for k, v in obj.items() if isinstance(v, str) and _PLACEHOLDER.fullmatch(v.strip())]
    if not fields:
        return None
    said = ", ".join(f"{k} holds {obj[k].strip()!r}" for k in fields)
    return AnswerError(f"{said}: a placeholder copied from the answer format; put the real content in its place "
                       f"(the placeholder says what belongs there)", key=f"placeholders {sorted(fields)}")


def _truncated(max_tokens: int | None, generated: int = 0) -> AnswerError:
    limit = f" ({max_tokens} tokens)" if max_tokens else ""
    if max_tokens and 0 < generated < 0.9 * max_tokens:
        # UX audit s33: 678 tokens of a 1200-token limit - the prompt had filled the server's context window, and the
        # message named the wrong limit (raising max_tokens cannot help)
        return AnswerError(
            f"the answer was cut off after {generated} tokens, below the token limit{limit}: the prompt and the answer "
            "filled the model's context window (forge.toml `[context]` declares it, so that prompts are fitted); "
            "reply with a shorter answer: the complete JSON object only, no text around it, short notes",
            key="the answer was cut off by the context window")
    return AnswerError(
        f"the answer was cut off at the token limit{limit} before the JSON object was complete; reply with a "
        "shorter answer: the complete JSON object only, no text around it, short notes, no comments that are "
        "not needed", key="the answer was cut off at the token limit")


def text_tool_call(text: str | None, tool_names: Iterable[str]) -> TextToolCall | None:
    """A call of one of ``tool_names`` written as text, e.g. ``<tool_call>{"name": "read_skill", "arguments":
    {"section": "patterns"}}</tool_call>`` or the bare object; None when there is none."""
    text = without_reasoning(text or "")
    if not text:
        return None
    names = set(tool_names)
    tagged = [m.group(2) for m in _TOOL_TAG.finditer(text)]
    pool: list[dict[str, Any]] = []
    for chunk in tagged:
        pool.extend(candidates(chunk)[0])
    pool.extend(candidates(text)[0])
    for obj in pool:
        function = obj.get("function")
        inner: dict[str, Any] = function if isinstance(function, dict) else obj  # OpenAI's own shape
        name = inner.get("name") or inner.get("tool")
        if not isinstance(name, str) or name not in names:
            continue
        args: Any = inner.get("arguments", inner.get("parameters", inner.get("args")))
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                continue
        if isinstance(args, dict):
            return TextToolCall(name=name, arguments=args)
    return None
