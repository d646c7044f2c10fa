"""Renderers over one finding list: text for people (source line + caret), JSON for tools, and the skills
page for agents (generated from the rule table, so it cannot drift from the lint)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from runtime.lint._model import Finding
from runtime.lint._table import RULES

__all__ = ["render_json", "render_skill", "render_text", "summary"]


def summary(findings: Iterable[Finding]) -> dict[str, int]:
    counts = Counter(f.status for f in findings)
    return {k.lower(): counts.get(k, 0) for k in ("PASS", "FAIL", "WARN", "INFO", "SKIP")}


def render_json(findings: list[Finding]) -> str:
    """``{"passed": bool, "blocking": n, "summary": {...}, "findings": [...]}`` (passed = no S0/S1 FAIL)."""
    blocking = [f for f in findings if f.is_blocking]
    doc = {"passed": not blocking, "blocking": len(blocking), "summary": summary(findings),
           "findings": [f.model_dump() for f in findings]}
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _source_line(path: str, line: int, cache: dict[str, list[str]], sources: dict[str, str] | None) -> str:
    if line <= 0:
        return ""
    if path not in cache:
        text = (sources or {}).get(path)
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
        cache[path] = text.splitlines()
    lines = cache[path]
    # a NUL would reach the terminal raw (PF00 names it, UX s49): show it as the one-column symbol for NUL
    return lines[line - 1].replace("\x00", "\u2400") if line <= len(lines) else ""


def render_text(findings: list[Finding], *, sources: dict[str, str] | None = None) -> str:
    """One block per finding: ``file:line:col: STATUS RULE [Sx] message``, the source line, a caret, the fix."""
    out: list[str] = []
    cache: dict[str, list[str]] = {}
    for f in findings:
        if f.status == "PASS":
            continue
        out.append(f"{f.file}:{f.line}:{f.col}: {f.status} {f.rule_id} [{f.severity}] {f.message}")
        src = _source_line(f.file, f.line, cache, sources)
        if src.strip():
            out.append(f"    {src.rstrip()}")
            if f.col > 0:
                prefix = "".join(c if c == "\t" else " " for c in src[: f.col - 1])
                out.append(f"    {prefix}^")
        if f.status in ("FAIL", "WARN") and f.fix:
            out.append(f"    fix: {f.fix}")
    s = summary(findings)
    blocking = sum(1 for f in findings if f.is_blocking)
    out.append(f"[pto-forge-lint] {s['fail']} fail ({blocking} blocking), {s['warn']} warn, {s['info']} info"
               + (f", {s['skip']} skip, {s['pass']} pass" if s["skip"] or s["pass"] else ""))
    return "\n".join(out)


def render_skill() -> str:
    """The text of ``skills/lint-rules.md`` (a test checks the committed file equals this)."""
    lines = [
        "# Lint rules (generated from runtime/lint/_table.py — do not edit by hand)",
        "",
        "Regenerate: `python -m runtime.lint --list-rules > agents/skills/lint-rules.md`.",
        "Run: `python -m runtime.lint <file-or-op-dir> [--stage design|module|final] [--op-dir D] "
        "[--previous-stage F] [--json]`.",
        "S0 and S1 findings with status FAIL block the gate (exit status 2); S2 warns, S3 informs.",
        "",
        "## Rules that apply",
        "",
        "| id | sev | stages | rule | fix |",
        "|---|---|---|---|---|",
    ]
    for r in RULES.values():
        if r.applies:
            lines.append(f"| {r.id} | {r.severity} | {', '.join(r.stages)} | {_cell(r.title)} | {_cell(r.fix)} |")
    lines += ["", "## Upstream rules that do not apply to PTO Forge", "", "| id | upstream rule | why not |",
              "|---|---|---|"]
    for r in RULES.values():
        if not r.applies:
            lines.append(f"| {r.id} | {_cell(r.title)} | {_cell(r.not_applicable_reason)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
