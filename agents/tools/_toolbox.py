"""Read-only tools the roles may call in their bounded tool loop.

- ``read_skill(section)`` — a skill section (``patterns#online-softmax``) or a file overview (``patterns``),
  limited to the role's allowed files and its cap on distinct files per dispatch.
- ``lookup_api(name)`` — whether ``pypto.<name>`` exists in the emulator and what the skills say about it.
- ``lint_draft(source)`` — lint findings for a draft stage file (``runtime.lint``).
- ``smoke_run(source)`` — run the draft on small cases in the OS sandbox with the emulator: diagnostics and
  output shapes/dtypes only, never golden values.

Tools never raise: a failure is returned as text starting with ``error:`` so the model can react.
"""

from __future__ import annotations

import difflib
import json
import logging
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.skills import ROLE_SKILLS, SkillError, SkillLibrary
from runtime.bisect import bisect as run_bisect
from runtime.emulator import API_SURFACE, NOT_EMULATED, UNSUPPORTED
from runtime.lint import lint_source

__all__ = ["ROLE_TOOLS", "ToolBox", "ToolSpec"]

log = logging.getLogger(__name__)

MAX_TOOL_RESULT_CHARS = 6000
"""Tool-result budget; enforced in lines (``MAX_TOOL_RESULT_CHARS // 40``), see :func:`_clip`."""
MAX_LINE_CHARS = 2000
SMOKE_TIMEOUT_S = 60.0
SMOKE_MEMORY_BYTES = 4 * 1024**3

ROLE_TOOLS: dict[str, tuple[str, ...]] = {
    "designer": ("read_skill", "lookup_api"),
    "implementer": ("read_skill", "lookup_api", "lint_draft", "smoke_run"),
    "verifier": ("read_skill", "lookup_api"),
    "debugger": ("read_skill", "lookup_api", "lint_draft", "smoke_run", "bisect"),
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]

    def schema(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


_SPECS = {
    "read_skill": ToolSpec(
        "read_skill",
        "Read one skill section by id (e.g. 'patterns#online-softmax') or a file overview by name "
        "(e.g. 'patterns'). Only the skill files listed in your instructions are readable.",
        {"type": "object", "properties": {"section": {"type": "string"}}, "required": ["section"],
         "additionalProperties": False},
    ),
    "lookup_api": ToolSpec(
        "lookup_api",
        "Check whether pypto.<name> exists in the emulated PyPTO API and show what the API notes say about it.",
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
         "additionalProperties": False},
    ),
    "lint_draft": ToolSpec(
        "lint_draft",
        "Lint a draft of your stage file (full Python source). Returns the findings that are not PASS.",
        {"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"],
         "additionalProperties": False},
    ),
    "smoke_run": ToolSpec(
        "smoke_run",
        "Run a draft of your stage file on one small case in the CPU emulator. Returns emulator diagnostics "
        "and output shapes/dtypes only (no reference values: correctness is judged by the verifier).",
        {"type": "object", "properties": {"source": {"type": "string"}}, "required": ["source"],
         "additionalProperties": False},
    ),
    "bisect": ToolSpec(
        "bisect",
        "Localize where the failing file first departs from the golden on one verification case (default: the "
        "first case that diverges): source line, op, loop iteration, tile offsets and statistics. Read-only; "
        "reports carry no reference values beyond outlier listings.",
        {"type": "object", "properties": {"case": {"type": "string"}}, "required": [],
         "additionalProperties": False},
    ),
}


def _clip(text: str, limit: int = MAX_TOOL_RESULT_CHARS) -> str:
    """Bound a tool result by its structure (lines), never by the exact character count of its text.

    Tool results go into model requests; a cut at character ``limit`` would move with every digit of a
    measurement before it and make the recorded request machine-specific (ARCHITECTURE §0.2). Over-long
    single lines are cut at a fixed column, which a digit change before it cannot amplify.
    """
    max_lines = max(1, limit // 40)
    lines = [ln if len(ln) <= MAX_LINE_CHARS else ln[:MAX_LINE_CHARS] + " [... rest of line cut]"
             for ln in text.splitlines()]
    if len(lines) <= max_lines:
        return text if all(len(ln) <= MAX_LINE_CHARS for ln in text.splitlines()) else "\n".join(lines)
    return "\n".join(lines[:max_lines]) + f"\n[... {len(lines) - max_lines} more lines cut]"


@dataclass
class ToolBox:
    """The tools of one role for one dispatch (the skill-file cap is counted per ToolBox)."""

    role: str
    skills: SkillLibrary
    op_dir: Path | None = None
    target_file: str | None = None
    wrapper_name: str | None = None
    lint_stage: str = "module"
    previous_stage: str | None = None
    """Path (relative to op_dir) of the verified previous stage file, for the frozen-module lint rules."""
    opened: list[str] = field(default_factory=list)

    @property
    def names(self) -> tuple[str, ...]:
        return ROLE_TOOLS[self.role]

    def schemas(self) -> list[dict[str, Any]]:
        return [_SPECS[n].schema() for n in self.names]

    def run(self, name: str, arguments: dict[str, Any]) -> str:
        if name not in self.names:
            return f"error: unknown tool {name!r}; your tools are: {', '.join(self.names)}"
        handlers: dict[str, Callable[..., str]] = {
            "read_skill": self.read_skill, "lookup_api": self.lookup_api,
            "lint_draft": self.lint_draft, "smoke_run": self.smoke_run, "bisect": self.bisect,
        }
        params = _SPECS[name].parameters
        missing = [p for p in params.get("required", []) if not isinstance(arguments.get(p), str)]
        if missing:
            return f"error: {name} needs string argument(s) {missing}"
        try:
            return _clip(handlers[name](**{k: arguments[k] for k in params["properties"] if k in arguments}))
        except Exception as exc:  # a tool must never take the agent down
            log.exception("tool %s failed", name)
            return f"error: {name} failed: {type(exc).__name__}: {exc}"

    # ------------------------------------------------------------------------------------------ read_skill

    def read_skill(self, section: str) -> str:
        policy = ROLE_SKILLS[self.role]
        topic = section.partition("#")[0].strip()
        if topic not in policy.allowed:
            return f"error: the {self.role} may read only: {', '.join(policy.allowed)}"
        if topic not in self.opened:
            if len(self.opened) >= policy.cap:
                return (f"error: skill cap reached ({policy.cap} files per dispatch); already opened: "
                        f"{', '.join(self.opened)}")
            self.opened.append(topic)
        try:
            return self.skills.get(section.strip()).text
        except SkillError as exc:
            return f"error: {exc}"

    # ------------------------------------------------------------------------------------------ lookup_api

    def lookup_api(self, name: str) -> str:
        bare = name.strip().removeprefix("pypto.")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", bare):
            return "error: give a plain API name such as 'view' or 'frontend.jit'"
        surface = API_SURFACE
        lines = [f"pypto.{bare}"]
        why = UNSUPPORTED.get(bare) or NOT_EMULATED.get(bare)
        if why:
            lines.append(f"emulator: NOT emulated ({why}) - calling it raises EmulatorUnsupported")
        elif bare in surface or bare.split(".")[0] in surface:
            lines.append("emulator: implemented")
        else:
            close = difflib.get_close_matches(bare, sorted(surface), n=5, cutoff=0.6)
            lines.append("emulator: NOT in the API surface — do not use it"
                         + (f"; close names: {', '.join('pypto.' + c for c in close)}" if close else ""))
        notes = _api_notes(self.skills, bare)
        lines.append(notes or "API notes: nothing specific; see skill pypto-api.")
        return "\n".join(lines)

    # ------------------------------------------------------------------------------------------ lint_draft

    def lint_draft(self, source: str) -> str:
        filename = self.target_file or "draft_impl.py"
        previous = None
        if self.op_dir is not None and self.previous_stage and (Path(self.op_dir) / self.previous_stage).is_file():
            previous = Path(self.op_dir) / self.previous_stage
        op_dir = self.op_dir if self.op_dir is not None and Path(self.op_dir).is_dir() else None
        findings = lint_source(source, filename, stage=self.lint_stage or "module", op_dir=op_dir,
                               previous_stage=previous)
        rows = []
        for f in findings:
            data = f.model_dump(mode="json")
            if data.get("status") in ("PASS", "SKIP"):
                continue
            rows.append({k: data.get(k) for k in ("rule_id", "severity", "status", "line", "message", "fix")})
        if not rows:
            return "lint: no findings (all rules PASS)"
        return "lint findings:\n" + "\n".join(json.dumps(r, ensure_ascii=False) for r in rows)

    # ------------------------------------------------------------------------------------------- smoke_run

    def smoke_run(self, source: str) -> str:
        if self.op_dir is None:
            return "error: smoke_run needs the operator directory"
        from agents.tools._smoke import smoke

        # the draft runs only inside the verifier's OS sandbox (runtime.sandbox.run_candidate); this temp folder
        # just holds the source the sandbox reads, under the target's file name (results name it, not the path)
        with tempfile.TemporaryDirectory(prefix="forge-smoke-") as tmp:
            name = Path(self.target_file or "draft_impl.py").name
            draft = Path(tmp) / name
            draft.write_text(source, encoding="utf-8")
            try:
                report = smoke(Path(self.op_dir), draft, self.wrapper_name or "", timeout=SMOKE_TIMEOUT_S)
            except Exception as exc:  # noqa: BLE001 - the op dir is the orchestrator's; report, never crash a role
                report = {"status": "error", "error": f"smoke runner: {type(exc).__name__}: {str(exc)[:800]}"}
        text = json.dumps(report, default=str).replace(tmp, ".")
        return "smoke_run result:\n" + text

    # ---------------------------------------------------------------------------------------------- bisect

    def bisect(self, case: str = "") -> str:
        """runtime.bisect on the failing file (the candidate runs in the verifier's sandbox, as in verify)."""
        if self.op_dir is None or not self.target_file:
            return "error: bisect needs the operator directory and the failing file"
        report = run_bisect(self.op_dir, self.target_file, case=case or None)
        return "bisect result:\n" + json.dumps(report.to_agent_context(), sort_keys=True, indent=1, default=str)




def _api_notes(skills: SkillLibrary, name: str) -> str:
    """Lines of skills/pypto-api.md that mention ``pypto.<name>`` or ``<name>(``, with their section ids."""
    try:
        sections = skills.sections("pypto-api")
    except SkillError:
        return ""
    pattern = re.compile(rf"(pypto\.{re.escape(name)}\b|`{re.escape(name)}[(`])")
    hits = []
    for s in sections:
        for line in s.text.splitlines():
            if pattern.search(line):
                hits.append(f"[{s.id}] {line.strip()}")
    return "API notes:\n" + "\n".join(hits[:15]) if hits else ""
