"""The run trace: the one writer of events.jsonl, and the record/replay gate every model call passes.

:class:`Trace` implements :class:`agents.contracts.TraceSink` (``emit``, ``recorded_decision``, ``flush``)
for the orchestrator, and ``call_model`` / ``call_tool`` for the agents. Modes:

- ``live``: call the model; events are written but no request/response payloads (not replayable).
- ``record``: call the model and store everything needed to replay it.
- ``replay``: strict; answers come from ``source``; a miss raises :class:`ReplayMissError`; the provider
  factory is never called, so no HTTP client is constructed.
- ``replay-or-record``: answers from ``source`` when recorded, otherwise call the model and record.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from agents.llm import ChatProvider, ChatRequest, ChatResponse, LLMError
from agents.trace._events import (
    EVENT_KINDS,
    VOLATILE_EVENT_FIELDS,
    EventAdapter,
    LLMCallEvent,
    ToolCallEvent,
)
from agents.trace._key import canonical_json, canonical_request, normalize_base_url, request_key, sha256_text
from agents.trace._miss import explain_miss
from agents.trace._store import (
    TRACE_MODES,
    Manifest,
    TraceError,
    TraceMode,
    TraceReader,
    hash_op_dir,
    numerics_now,
    read_events,
    utc_now,
)

__all__ = ["Trace", "comparable_events"]

log = logging.getLogger(__name__)

_SECRET_KEYS = frozenset({"api_key", "apikey", "authorization", "openai_api_key", "password", "token", "secret"})
_REDACTED = "[REDACTED]"


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Path):
        return value.as_posix()
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return item()
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return tolist()
    raise TypeError(f"trace event field of type {type(value).__name__} is not JSON-serializable")


def _drop_secret_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_secret_keys(v) for k, v in value.items() if str(k).lower() not in _SECRET_KEYS}
    if isinstance(value, list):
        return [_drop_secret_keys(v) for v in value]
    return value


def comparable_events(events: Iterable[Any]) -> list[dict[str, Any]]:
    """Events as dicts without timing/identity fields: a record and its replay compare equal on these."""
    out = []
    for e in events:
        d = e.model_dump(mode="json") if isinstance(e, BaseModel) else dict(e)
        out.append({k: v for k, v in d.items() if k not in VOLATILE_EVENT_FIELDS})
    return out


class Trace:
    """Events + blobs + manifest of one run, and the record/replay switch.

    Example::

        trace = Trace(run_dir / "trace", run_id="20260101-abc", mode="record", op_dir=op_dir)
        seq = trace.emit("state_transition", node="verify", module=1, **{"from": "implemented", "to": "verified"})
        trace.flush()
    """

    def __init__(
        self,
        trace_dir: Path | str | None,
        *,
        run_id: str,
        mode: TraceMode = "record",
        source: Path | str | TraceReader | None = None,
        op_dir: Path | str | None = None,
        secrets: Iterable[str | None] = (),
        clock: Callable[[], str] = utc_now,
    ) -> None:
        if mode not in TRACE_MODES:
            raise TraceError(f"unknown trace mode {mode!r}; use one of: {', '.join(TRACE_MODES)}")
        self.mode: TraceMode = mode
        self.run_id = run_id
        self._clock = clock
        self._lock = threading.RLock()
        if isinstance(source, TraceReader) or source is None:
            self.source = source
        else:
            self.source = TraceReader(source)
        if mode == "replay" and self.source is None:
            raise TraceError("replay mode needs a recorded trace to replay from (source=...)")
        self._secrets = sorted({s for s in [*secrets, os.environ.get("OPENAI_API_KEY")] if s and len(s) >= 4},
                               key=len, reverse=True)
        self.events: list[Any] = []
        self._seq = 0
        self._llm_occ: dict[str, int] = defaultdict(int)
        self._tool_occ: dict[tuple[str, str], int] = defaultdict(int)
        self._decision_occ: dict[tuple[str, int | None], int] = defaultdict(int)
        self.dir = Path(trace_dir) if trace_dir is not None else None
        self._file = None
        if self.dir is not None:
            if self.source is not None and self.dir.resolve() == self.source.dir.resolve():
                raise TraceError(f"{self.dir}: a run cannot write its trace into the trace it replays from")
            (self.dir / "blobs").mkdir(parents=True, exist_ok=True)
            manifest_path = self.dir / "manifest.json"
            if manifest_path.is_file():
                self.manifest = Manifest.model_validate_json(manifest_path.read_text("utf-8"))
                self._restore()
            else:
                self.manifest = Manifest(run_id=run_id, record_mode=mode, op_dir_hash=hash_op_dir(op_dir),
                                     numerics=numerics_now())
                self._write_manifest()
            self._file = open(self.dir / "events.jsonl", "a", encoding="utf-8")  # noqa: SIM115
        else:
            self.manifest = Manifest(run_id=run_id, record_mode=mode, op_dir_hash=hash_op_dir(op_dir),
                                     numerics=numerics_now())

    # ------------------------------------------------------------------------------------------- lifecycle

    def _restore(self) -> None:
        """Continue an existing trace (a resumed run): seq and occurrence counters pick up where they were."""
        assert self.dir is not None
        path = self.dir / "events.jsonl"
        events, problems = read_events(path)
        if problems:
            raise TraceError(f"{path.parent}/{problems[0]}: cannot continue a corrupted trace")
        for event in events:
            self.events.append(event)
            self._seq = max(self._seq, event.seq)
            if isinstance(event, LLMCallEvent):
                self._llm_occ[event.request_key] = max(self._llm_occ[event.request_key], event.occurrence + 1)
            elif isinstance(event, ToolCallEvent):
                k = (event.tool, event.args_digest)
                self._tool_occ[k] = max(self._tool_occ[k], event.occurrence + 1)

    def _write_manifest(self) -> None:
        if self.dir is None:
            return
        path = self.dir / "manifest.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(self._scrub(self.manifest.model_dump_json(indent=2)) + "\n", encoding="utf-8")
        os.replace(tmp, path)

    def update_manifest(self, **fields: Any) -> None:
        """Set manifest fields (models, prompt_hashes, verifier_hash, seeds, sandbox_layers, ...)."""
        with self._lock:
            data = self.manifest.model_dump()
            for name, value in fields.items():
                if isinstance(value, dict) and isinstance(data.get(name), dict):
                    data[name] = {**data[name], **value}
                else:
                    data[name] = value
            self.manifest = Manifest.model_validate(_drop_secret_keys(data))
            self._write_manifest()

    def flush(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.flush()
                os.fsync(self._file.fileno())

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self.flush()
                self._file.close()
                self._file = None

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --------------------------------------------------------------------------------------------- writing

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, _REDACTED)
        return text

    def put_blob(self, content: str) -> str:
        """Store a payload (scrubbed of secrets) under its sha256; return the ref."""
        text = self._scrub(content)
        ref = sha256_text(text)
        if self.dir is not None:
            path = self.dir / "blobs" / ref
            if not path.exists():
                tmp = path.with_suffix(".tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, path)
        return ref

    def emit(self, kind: str, **fields: object) -> int:
        """Append one event; return its seq. Unknown kinds and non-JSON fields raise :class:`TraceError`."""
        if kind not in EVENT_KINDS:
            raise TraceError(f"unknown trace event kind {kind!r}; known kinds: {', '.join(EVENT_KINDS)}")
        for reserved in ("seq", "ts", "kind", "run_id"):
            fields.pop(reserved, None)
        try:
            payload = json.loads(json.dumps(fields, default=_jsonable))
        except (TypeError, ValueError) as exc:
            raise TraceError(f"trace event {kind!r}: {exc}") from None
        payload = _drop_secret_keys(payload)
        with self._lock:
            seq = self._seq + 1
            record = {"seq": seq, "ts": self._clock(), "kind": kind, "run_id": self.run_id, **payload}
            try:
                event = EventAdapter.validate_python(record)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(x) for x in first.get("loc", ()))
                raise TraceError(f"trace event {kind!r} is invalid: {loc}: {first.get('msg')}") from None
            line = self._scrub(json.dumps(event.model_dump(mode="json", exclude_none=False),
                                          ensure_ascii=False, separators=(",", ":")))
            if self._file is not None:
                self._file.write(line + "\n")
                self._file.flush()
            self._seq = seq
            self.events.append(event)
            return seq

    @property
    def last_seq(self) -> int:
        """The seq of the last event written (0 before the first)."""
        return self._seq

    def counters(self) -> dict[str, dict[str, int]]:
        """The occurrence counters of model and tool calls (JSON data), for a checkpoint of the run.

        ``{"llm": {request_key: n}, "tool": {"<tool> <args_digest>": n}}``: how many times each request was
        made so far; the next identical request is occurrence ``n``, which is what a replay looks up.
        """
        with self._lock:
            return {"llm": {k: v for k, v in self._llm_occ.items() if v},
                    "tool": {f"{t} {d}": v for (t, d), v in self._tool_occ.items() if v}}

    def rewind(self, counters: dict[str, dict[str, int]]) -> None:
        """Set the occurrence counters back to ``counters`` (from :meth:`counters`).

        Why: a node interrupted half-way (Ctrl-C, kill -9) runs again from the last checkpoint. Its model and
        tool calls before the interrupt stay in events.jsonl (they happened), but the calls it makes again must
        carry the occurrence numbers of an uninterrupted run, or a replay looks up the recording's next
        (non-existent) answer. Events are never rewritten; ``seq`` keeps counting.
        """
        with self._lock:
            self._llm_occ = defaultdict(int, {str(k): int(v) for k, v in (counters.get("llm") or {}).items()})
            tools: dict[tuple[str, str], int] = defaultdict(int)
            for k, v in (counters.get("tool") or {}).items():
                tool, _, digest = str(k).rpartition(" ")
                tools[(tool, digest)] = int(v)
            self._tool_occ = tools

    # --------------------------------------------------------------------------------------------- replay

    def recorded_decision(self, gate: str, module: int | None, occurrence: int) -> dict | None:
        """The human decision recorded at this gate (``occurrence`` is 0-based), when replaying; else None."""
        if self.source is None or self.mode not in ("replay", "replay-or-record"):
            return None
        decisions = self.source.decisions(gate, module)
        return decisions[occurrence] if 0 <= occurrence < len(decisions) else None

    def recorded(self, kind: str, **match: Any) -> list[dict[str, Any]]:
        """Events of ``kind`` in the source trace whose fields equal ``match`` (e.g. recorded verify verdicts
        of a module, to report a divergence when the live verdict differs). Empty outside replay modes."""
        if self.source is None or self.mode not in ("replay", "replay-or-record"):
            return []
        out = []
        for event in self.source.events:
            data = event.model_dump(mode="json")
            if data.get("kind") == kind and all(data.get(k) == v for k, v in match.items()):
                out.append(data)
        return out

    def call_model(
        self,
        request: ChatRequest,
        provider: Callable[[], ChatProvider],
        *,
        base_url: str | None,
        agent: str | None = None,
        module: int | None = None,
        attempt: int | None = None,
        node: str | None = None,
        prompt_hash: str | None = None,
        fit: dict[str, Any] | None = None,
    ) -> ChatResponse:
        """Answer ``request`` from the trace or from the provider (built lazily by ``provider()``).

        ``fit`` records how the prompt was fitted into the model's context (dropped sections, estimates).
        """
        canonical = canonical_request(request, base_url)
        key = request_key(canonical)
        with self._lock:
            occurrence = self._llm_occ[key]
            self._llm_occ[key] += 1
        common = {"node": node, "agent": agent, "module": module, "attempt": attempt,
                  "request_key": key, "occurrence": occurrence, "model": request.model,
                  "base_url": normalize_base_url(base_url), "params": canonical["params"],
                  "prompt_hash": prompt_hash, **({"fit": fit} if fit is not None else {}),
                  "tools_digest": sha256_text(canonical_json(canonical["tools"])) if canonical["tools"] else None}
        if self.source is not None and self.mode in ("replay", "replay-or-record"):
            recorded = self.source.llm_call(key, occurrence)
            if recorded is not None and (recorded.response_ref is not None or recorded.error):
                return self._replay_hit(recorded, canonical, common)
            if self.mode == "replay":
                position = sum(1 for e in self.events if getattr(e, "kind", None) == "llm_call")
                miss = explain_miss(canonical, key, occurrence, self.source, agent=agent, module=module,
                                    attempt=attempt, position=position)
                self.emit("error", node=node, agent=agent, module=module, attempt=attempt,
                          message=miss.report.splitlines()[0], field=miss.field,
                          report_ref=self.put_blob(miss.report))
                raise miss
        if self.mode == "replay":  # unreachable: replay always has a source
            raise TraceError("replay mode without a source trace")
        refs: dict[str, Any] = {}
        if self.mode != "live":
            refs = {"request_ref": self.put_blob(canonical_json(canonical)),
                    "messages_ref": self.put_blob(canonical_json(canonical["messages"]))}
        try:
            outcome = provider().complete(request)
        except LLMError as exc:
            self.emit("llm_call", **common, **refs, cache="live" if self.mode == "live" else "recorded",
                      error=str(exc), retries=exc.retries)
            raise
        response = outcome.response
        if self.mode != "live":
            refs["response_ref"] = self.put_blob(canonical_json(response.model_dump(mode="json")))
            refs["raw_ref"] = self.put_blob(canonical_json(outcome.raw)) if outcome.raw else None
        self.emit("llm_call", **common, **refs, **self._response_fields(response),
                  latency_s=round(outcome.latency_s, 6), retries=outcome.retries, cost_usd=outcome.cost_usd,
                  cache="live" if self.mode == "live" else "recorded")
        return response

    @staticmethod
    def _response_fields(response: ChatResponse) -> dict[str, Any]:
        return {
            "text": (response.text or "")[:500] if response.text is not None else None,
            "tool_calls": [c.model_dump(mode="json") for c in response.tool_calls],
            "finish_reason": response.finish_reason,
            "usage": response.usage.model_dump(mode="json"),
        }

    def _replay_hit(self, recorded: LLMCallEvent, canonical: dict[str, Any], common: dict[str, Any]) -> ChatResponse:
        assert self.source is not None
        if recorded.response_ref is None:
            self.emit("llm_call", **common, request_ref=self.put_blob(canonical_json(canonical)),
                      messages_ref=self.put_blob(canonical_json(canonical["messages"])), cache="hit",
                      error=recorded.error, retries=recorded.retries)
            raise LLMError(f"(replayed) {recorded.error}", retries=recorded.retries)
        response = ChatResponse.model_validate_json(self.source.blob(recorded.response_ref))
        refs = {
            "request_ref": self.put_blob(canonical_json(canonical)),
            "messages_ref": self.put_blob(canonical_json(canonical["messages"])),
            "response_ref": self.put_blob(self.source.blob(recorded.response_ref)),
            "raw_ref": self.put_blob(self.source.blob(recorded.raw_ref)) if recorded.raw_ref else None,
        }
        self.emit("llm_call", **common, **refs, **self._response_fields(response),
                  latency_s=recorded.latency_s, retries=recorded.retries, cost_usd=recorded.cost_usd, cache="hit")
        return response

    def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        run: Callable[[], str],
        *,
        agent: str | None = None,
        module: int | None = None,
        attempt: int | None = None,
        node: str | None = None,
    ) -> str:
        """Run a read-only agent tool, or replay its recorded result; either way it becomes a tool_call event."""
        digest = sha256_text(canonical_json({"tool": tool, "arguments": arguments}))
        with self._lock:
            occurrence = self._tool_occ[(tool, digest)]
            self._tool_occ[(tool, digest)] += 1
        recorded = None
        if self.source is not None and self.mode in ("replay", "replay-or-record"):
            recorded = self.source.tool_call(tool, digest, occurrence)
        if recorded is not None:
            result = self.source.blob(recorded.result_ref)  # type: ignore[union-attr]
            cache, duration = "hit", recorded.duration_s
        else:
            import time

            start = time.monotonic()
            result = run()
            duration = round(time.monotonic() - start, 6)
            cache = "live" if self.mode in ("live", "replay") else "recorded"
        ref = self.put_blob(result)
        self.emit("tool_call", node=node, agent=agent, module=module, attempt=attempt, tool=tool,
                  arguments=arguments, args_digest=digest, occurrence=occurrence, result_ref=ref,
                  result_preview=result[:200], duration_s=duration, cache=cache)
        return result
