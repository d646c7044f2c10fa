"""On-disk layout of a trace: ``manifest.json``, ``events.jsonl`` (append-only) and ``blobs/<sha256>``.

:class:`TraceReader` loads and validates a recorded trace (for replay, audit and benchmarks);
:func:`validate_trace` lists every problem instead of stopping at the first.
"""

from __future__ import annotations

import functools
import json
import platform
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.trace._events import FORMAT_VERSION, EventAdapter, LLMCallEvent, ToolCallEvent
from agents.trace._key import sha256_text

__all__ = [
    "Manifest",
    "TraceError",
    "TraceMode",
    "TraceReader",
    "find_trace_dir",
    "hash_op_dir",
    "package_versions",
    "read_events",
    "utc_now",
    "validate_trace",
]

TraceMode = Literal["live", "record", "replay", "replay-or-record"]
TRACE_MODES: tuple[str, ...] = ("live", "record", "replay", "replay-or-record")


class TraceError(RuntimeError):
    """A trace cannot be written, read or validated; the message says which file and what is wrong."""


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def package_versions() -> dict[str, str]:
    """Versions of the packages a trace's behaviour depends on (a fresh dict: manifests may be edited)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> dict[str, str]:
    """Looked up once per process: each ``importlib.metadata.version`` scans ``sys.path`` for its dist-info (6 of
    them cost 7-30 ms, paid by every run's new trace), and the code this process runs is the code it imported."""
    versions = {"python": platform.python_version()}
    for dist in ("pto-forge", "openai", "pydantic", "numpy", "ml-dtypes", "langgraph"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return versions


def hash_op_dir(op_dir: Path | str | None) -> str | None:
    """sha256 over the user's inputs (SPEC.md, golden.py): which operator this trace belongs to."""
    if op_dir is None:
        return None
    root = Path(op_dir)
    parts = []
    for name in ("SPEC.md", "golden.py"):
        path = root / name
        if path.is_file():
            parts.append(f"{name}:{sha256_text(path.read_bytes())}")
    return sha256_text("\n".join(parts)) if parts else None


def numerics_now() -> dict[str, Any]:
    """This machine's numerics fingerprint (``runtime.fingerprint``), recorded in every new manifest."""
    try:
        from runtime.fingerprint import numerics_fingerprint
    except ImportError:  # agents without the runtime package: nothing to record
        return {}
    return numerics_fingerprint()


class Manifest(BaseModel):
    """What a run was made of: enough to tell whether a replay can reproduce it."""

    model_config = ConfigDict(extra="allow")

    format_version: int = FORMAT_VERSION
    run_id: str
    created: str = Field(default_factory=utc_now)
    record_mode: str = "record"
    op_dir_hash: str | None = None
    package_versions: dict[str, str] = Field(default_factory=package_versions)
    models: dict[str, str | None] = Field(default_factory=dict)
    """Model per role (designer, implementer, verifier, debugger)."""
    base_url: str | None = None
    prompt_hashes: dict[str, str] = Field(default_factory=dict)
    verifier_hash: str | None = None
    seeds: list[int] = Field(default_factory=list)
    sandbox_layers: list[str] = Field(default_factory=list)
    context_tokens: dict[str, int] = Field(default_factory=dict)
    """Context window per model (tokens) that prompts were fitted into; a replay fits with the same values."""
    local_model: dict[str, Any] | None = None
    """The embedded local model, when the run used it: stable id, file name (never its path), sha256, threads."""
    run_options: dict[str, Any] = Field(default_factory=dict)
    """How the recorded run was set up where it changes what agents see (attempt budget, module gate, perf
    stage): a replay takes them from here unless told otherwise (``orchestrator.api.RunOptions``)."""
    numerics: dict[str, Any] = Field(default_factory=dict)
    """What decides the last bits of float32 results on the recording machine (BLAS build and core type,
    numpy SIMD dispatch, CPU): a replay miss prints the fields that differ on the replaying machine."""


def find_trace_dir(path: Path | str) -> Path:
    """Accept a trace dir, a run dir (``.forge/run-<id>``) or a shipped copy (``<op>/traces/<name>``)."""
    p = Path(path)
    for candidate in (p, p / "trace"):
        if (candidate / "manifest.json").is_file():
            return candidate
    raise TraceError(f"no trace at {p}: expected {p / 'manifest.json'} (or {p / 'trace' / 'manifest.json'})")


def read_events(path: Path, *, torn_ok: bool = False) -> tuple[list[Any], list[str]]:
    """The one parser of ``events.jsonl``: (typed events, problems as ``events.jsonl:<line>: <loc>: <msg>``).

    A missing file has no events. With ``torn_ok`` an unparsable line is skipped silently (a run that crashed
    mid-write leaves a torn last line; status and audit readers still want the rest).
    """
    events: list[Any] = []
    problems: list[str] = []
    lines = path.read_text("utf-8").splitlines() if path.is_file() else []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            events.append(EventAdapter.validate_json(line))
        except ValidationError as exc:
            if torn_ok:
                continue
            first = exc.errors()[0]
            loc = ".".join(str(x) for x in first.get("loc", ()))
            problems.append(f"events.jsonl:{lineno}: " + (f"{loc}: " if loc else "") + f"{first.get('msg')}")
    return events, problems


class TraceReader:
    """A recorded trace, loaded and validated, indexed for replay.

    Example::

        reader = TraceReader("workspace/silu/traces/default")
        event = reader.llm_call(request_key, occurrence=0)
    """

    def __init__(self, path: Path | str) -> None:
        self.dir = find_trace_dir(path)
        try:
            self.manifest = Manifest.model_validate_json((self.dir / "manifest.json").read_text("utf-8"))
        except (ValidationError, ValueError) as exc:
            raise TraceError(f"{self.dir / 'manifest.json'}: not a valid trace manifest: {exc}") from None
        if self.manifest.format_version != FORMAT_VERSION:
            raise TraceError(
                f"{self.dir}: trace format version {self.manifest.format_version} is not supported "
                f"(this PTO Forge reads version {FORMAT_VERSION})"
            )
        self.events, problems = read_events(self.dir / "events.jsonl")
        if problems:
            raise TraceError(f"{self.dir}: invalid trace:\n  " + "\n  ".join(problems[:20]))
        self.llm_calls: list[LLMCallEvent] = [e for e in self.events if isinstance(e, LLMCallEvent)]
        self._llm: dict[tuple[str, int], LLMCallEvent] = {(e.request_key, e.occurrence): e for e in self.llm_calls}
        self._tools: dict[tuple[str, str, int], ToolCallEvent] = {
            (e.tool, e.args_digest, e.occurrence): e for e in self.events if isinstance(e, ToolCallEvent)
        }

    # -------------------------------------------------------------------------------------------- lookups

    def blob(self, ref: str) -> str:
        path = self.dir / "blobs" / ref
        if not path.is_file():
            raise TraceError(f"{self.dir}: missing blob {ref}")
        data = path.read_bytes()
        if sha256_text(data) != ref:
            raise TraceError(f"{self.dir}: blob {ref} is corrupted (content hash differs)")
        return data.decode("utf-8")

    def blob_json(self, ref: str) -> Any:
        return json.loads(self.blob(ref))

    def llm_call(self, key: str, occurrence: int) -> LLMCallEvent | None:
        return self._llm.get((key, occurrence))

    def llm_call_count(self, key: str) -> int:
        return sum(1 for k, _ in self._llm if k == key)

    def tool_call(self, tool: str, args_digest: str, occurrence: int) -> ToolCallEvent | None:
        return self._tools.get((tool, args_digest, occurrence))

    def decisions(self, gate: str, module: int | None) -> list[dict[str, Any]]:
        """Human decisions recorded at a gate, in order (``resume`` events, else ``interrupt`` events)."""
        found: list[dict[str, Any]] = []
        for kind in ("resume", "interrupt"):
            for e in self.events:
                if e.kind == kind and getattr(e, "gate", None) == gate and e.module == module:
                    if getattr(e, "decision", None) is not None:
                        found.append({"decision": e.decision, "note": getattr(e, "note", None)})
            if found:
                return found
        return found


def validate_trace(path: Path | str) -> list[str]:
    """Every problem of a trace (empty list = valid): schema, seq order, blob presence and hashes, keys."""
    try:
        reader = TraceReader(path)
    except TraceError as exc:
        return [str(exc)]
    problems: list[str] = []
    last = 0
    seen: set[tuple[str, int]] = set()
    for e in reader.events:
        if e.seq <= last:
            problems.append(f"events.jsonl: seq {e.seq} does not increase (previous {last})")
        last = e.seq
        refs: list[str | None] = []
        if isinstance(e, LLMCallEvent):
            refs = [e.request_ref, e.messages_ref, e.response_ref, e.raw_ref]
            if (e.request_key, e.occurrence) in seen:
                problems.append(f"seq {e.seq}: duplicate (request_key, occurrence) = ({e.request_key[:12]}, "
                                f"{e.occurrence})")
            seen.add((e.request_key, e.occurrence))
        elif isinstance(e, ToolCallEvent):
            refs = [e.result_ref]
        for ref in refs:
            if ref is None:
                continue
            try:
                reader.blob(ref)
            except TraceError as exc:
                problems.append(f"seq {e.seq}: {exc}")
    return problems
