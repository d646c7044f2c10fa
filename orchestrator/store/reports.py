"""Stored verify reports (``.forge/run-<id>/reports/<report_hash>.json``): the one place that reads them back.

Why one reader: the gate views, the HTML report, the perf stage, the debugger's context, the audit and
``show`` all need a report back after the verifier wrote it; each used to parse the JSON its own way (two
copies of a number parser disagreed on booleans). Every reader here returns the typed
:class:`runtime.verify.VerifyReport` (validated, infinities restored), never raw JSON.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from orchestrator.command import cli_command, shell_path
from orchestrator.errors import ForgeError, no_op_dir
from orchestrator.store.paths import FORGE_DIR, reports_dir

if TYPE_CHECKING:
    from runtime.verify import VerifyReport

log = logging.getLogger(__name__)


def parse_report(path: Path) -> VerifyReport:
    """The report stored at ``path``. Raises OSError (unreadable) or ValueError (not a verify report)."""
    from runtime.verify import VerifyReport  # the verifier's package is heavy; only readers pay for it

    return VerifyReport.model_validate_json(path.read_text(encoding="utf-8"))


def read_report(path: Path) -> VerifyReport | None:
    """The report stored at ``path``, or None when there is none or it cannot be read (logged)."""
    try:
        return parse_report(path)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("stored verify report %s cannot be read: %s", path, str(exc).splitlines()[0])
        return None


def load_report(op_dir: Path, run_id: str, report_hash: str | None) -> VerifyReport | None:
    """A run's stored report by its hash, or None."""
    if not report_hash:
        return None
    return read_report(reports_dir(op_dir, run_id) / f"{report_hash}.json")


def report_reasons(op_dir: Path, rel: str | None) -> list[str]:
    """The reasons of the report stored at ``op_dir/rel`` (a state's ``last_report``), or []."""
    report = read_report(op_dir / rel) if rel else None
    return list(report.reasons) if report is not None else []


def first_case_counters(op_dir: Path, run_id: str, report_hash: str | None) -> dict[str, Any]:
    """The first case's emulator counters of a stored report ({} when none)."""
    report = load_report(op_dir, run_id, report_hash)
    if report is None or not report.cases:
        return {}
    return dict(report.cases[0].counters or {})


def report_file(op_dir: Path, report_hash: str) -> Path | None:
    """Where the report with this exact hash is stored (any run of the op dir), or None."""
    return next(iter(sorted((op_dir / FORGE_DIR).glob(f"run-*/reports/{report_hash}.json"))), None)


def find_report(op_dir: Path, prefix: str | None) -> Path:
    """The stored report named by a hash prefix (any run of the op dir), or the newest one.

    Raises:
        ForgeError: no op dir, no report, no match or more than one.
    """
    if not op_dir.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    found = sorted((op_dir / FORGE_DIR).glob("run-*/reports/*.json"), key=lambda p: p.stat().st_mtime)
    if not found:  # UX audit s44: "run it first" to a run waiting at its design gate (nothing verified yet)
        if any((op_dir / FORGE_DIR).glob("run-*")):
            raise ForgeError(f"no stored verify report under {op_dir / FORGE_DIR}: its run has verified nothing yet "
                             f"(`{cli_command()} status {shell_path(op_dir)}` shows where it is)")
        raise ForgeError(f"no stored verify report under {op_dir / FORGE_DIR}; run it first")
    if not prefix:
        return found[-1]
    matches = {p.stem: p for p in found if p.stem.startswith(prefix.lower())}
    if not matches:  # an evidence id, as the delivered README.md and MEMORY.md cite a report (UX audit s33)
        matches = {p.stem: p for p in found if _evidence_of(p).startswith(prefix.lower())}
    if not matches:
        raise ForgeError(f"no stored report matches {prefix!r} (a report hash or evidence id; reports live in "
                         ".forge/run-*/reports/)")
    if len(matches) > 1:
        raise ForgeError(f"{prefix!r} matches {len(matches)} reports ({', '.join(sorted(matches)[:4])}, ...): "
                         "give more characters")
    return next(iter(matches.values()))


def _evidence_of(path: Path) -> str:
    """The ``evidence`` id a stored report carries ("" when it cannot be read)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8")).get("evidence")
    except (OSError, ValueError, AttributeError):
        return ""
    return value if isinstance(value, str) else ""


def hash_for(hashes: dict[str, str], rel: str, op_dir: Path) -> str | None:
    """Find the verifier's hash of ``rel`` whatever key style it uses (relative, absolute, basename)."""
    candidates = [rel, rel.replace("\\", "/"), str(op_dir / rel), str((op_dir / rel).resolve()), Path(rel).name]
    for key in candidates:
        if key in hashes:
            return hashes[key]
    for key, value in hashes.items():
        if key.replace("\\", "/").endswith("/" + rel) or key.endswith(rel):
            return value
    return None
