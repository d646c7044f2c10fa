"""What changed in the op dir while a run was not running (waiting at a gate, stopped, killed): checked by
``resume`` before the run continues.

Why: a run continues from its checkpoint, which says which files were verified, which design was checked and
approved, and under which SPEC.md / golden.py. An edit made in between was silently used: a verified stage file
changed at a module gate was delivered (only ``audit`` noticed), a SPEC.md loosened at the design gate became the
contract of every later verdict. The safe behaviour is to refuse, naming the file, its recorded and current
sha256, and what to do (undo the edit, or start a new run with ``--fresh``). One case is not refused: an edit to
golden.py or SPEC.md before the run used it (golden.py before any verification, e.g. the documented "fix golden.py,
then resume" after a run stopped on it): nothing recorded depends on the old one, so the run continues and
records the new hash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.command import cli_command, shell_path
from orchestrator.store.paths import GIT_DIR, sha256_file
from runtime.verdicts import Verdict

INPUT_FILES = ("SPEC.md", "golden.py")
"""The operator's contract: a run records their sha256 when it starts (``RunMeta.inputs``)."""


def input_hashes(root: Path) -> dict[str, str]:
    """sha256 of SPEC.md and golden.py now (what a new run records)."""
    return {n: h for n in INPUT_FILES if (h := sha256_file(root / n)) is not None}


@dataclass
class EditCheck:
    """The outcome of :func:`check_edits`: ``problem`` (one line; the run must not continue) or None, and the
    input hashes to record when an edit was accepted (``inputs`` is None when nothing needs recording)."""

    problem: str | None = None
    inputs: dict[str, str] | None = None
    notes: list[str] = field(default_factory=list)


def _short(h: str | None) -> str:
    return h[:12] if h else "missing"


def _verified_files(values: dict[str, Any], waiting_at: str | None) -> list[tuple[str, str, str, str | None]]:
    """``(file, what vouched for it, recorded sha256, audit commit)`` of every file the run holds as checked:
    each verified module's stage file, the design once checked, the final kernel at the final gate."""
    out: list[tuple[str, str, str, str | None]] = []
    design = values.get("design") or {}
    if design.get("status") in ("checked", "approved"):
        for name, key in (("DESIGN.md", "design_sha256"), ("module_interfaces.yaml", "yaml_sha256")):
            if design.get(key):
                what = "the design was approved" if design.get("status") == "approved" else "the design check passed"
                out.append((name, what, str(design[key]), design.get("commit")))
    for m in values.get("modules") or []:
        if m.get("status") == "verified" and m.get("verified_sha256") and m.get("stage_file"):
            out.append((str(m["stage_file"]), f"M{m.get('id')} was verified", str(m["verified_sha256"]),
                        m.get("commit")))
    final = values.get("final") or {}
    if waiting_at == "final" and final.get("verdict") == Verdict.PASS and final.get("impl_sha256") and final.get("file"):
        out.append((str(final["file"]), "its final verification passed", str(final["impl_sha256"]), None))
    return out


def check_edits(root: Path, rid: str, values: dict[str, Any], waiting_at: str | None, recorded: dict[str, str],
                shown_as: str) -> EditCheck:
    """Compare the op dir with what the run recorded.

    ``values``: the checkpoint's state; ``waiting_at``: the gate the run waits at (None: not at a gate);
    ``recorded``: ``RunMeta.inputs`` (empty for a run made before they were recorded: not checked).
    """
    fresh = f"start a new run with `{cli_command()} run {shell_path(shown_as)} --fresh` (nothing of this run is deleted)"
    changed = [(f, what, h, c) for f, what, h, c in _verified_files(values, waiting_at) if sha256_file(root / f) != h]
    if changed:
        f, what, h, commit = changed[0]
        disk = sha256_file(root / f)
        more = f" (and {', '.join(c[0] for c in changed[1:])})" if len(changed) > 1 else ""
        how = "deleted" if disk is None else f"changed (sha256 {_short(h)} then, {_short(disk)} now)"
        restore = (f" (the checked version: `git --git-dir {Path(shown_as) / GIT_DIR} show {commit[:12]}:{f}`)"
                   if commit else "")
        return EditCheck(problem=(
            f"{f}{more} was {how} after {what}; run {rid} does not continue on a file nobody checked: undo the "
            f"edit{restore} and resume again, or {fresh}"))
    if not recorded:
        return EditCheck()
    now = input_hashes(root)
    used = {"SPEC.md": bool(values.get("op_name")),  # intake has read it: the design and verdicts follow it
            "golden.py": bool(values.get("verify_log"))}  # a verdict was made with it
    edited = [n for n in INPUT_FILES if now.get(n) != recorded.get(n)]
    refused = [n for n in edited if used[n]]
    if refused:
        n = refused[0]
        return EditCheck(problem=(
            f"{n} changed since run {rid} started (sha256 {_short(recorded.get(n))} recorded, {_short(now.get(n))} "
            f"now): its design, gate decisions and verdicts were made under the old {n}; undo the edit to continue "
            f"this run, or {fresh}"))
    if edited:
        return EditCheck(inputs=now, notes=[f"{', '.join(edited)} changed while run {rid} was stopped, before the run "
                                            "used it: continuing with the new version"])
    return EditCheck()

