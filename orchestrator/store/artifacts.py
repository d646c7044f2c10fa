"""Files a run keeps beside its checkpoints for humans: design snapshots and per-attempt copies.

Why here: nodes and the driver write them while a run goes (stage files are overwritten by the next
attempt, DESIGN.md by the next design), and the views read them later (the design diff at a later design
gate, the HTML report's attempt diffs and bisect findings). Nothing here reaches an agent.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import shutil
from collections.abc import Callable
from pathlib import Path

from orchestrator.command import cli_command, shell_path
from orchestrator.errors import ForgeError
from orchestrator.store.paths import FORGE_DIR, list_runs, run_dir, sha256_file
from orchestrator.store.runs import read_meta

log = logging.getLogger(__name__)

OP_INPUTS = ("SPEC.md", "golden.py")
"""What the user writes; a fresh run (and every replay) starts from these alone."""
PRODUCED = ("DESIGN.md", "module_interfaces.yaml", "MEMORY.md", "README.md", "modules")
"""What a run writes into the op dir besides the delivered ``<op>_impl.py``."""
DESIGN_FILES = ("DESIGN.md", "module_interfaces.yaml")
"""Design files a user may provide (a valid design skips the design stage); a run may also write them."""


def copy_op_inputs(src: Path | str, dest: Path | str, *, traces: bool = True) -> Path:
    """Make ``dest`` a fresh op dir holding ``src``'s inputs (and its shipped ``traces/`` unless told not to).

    ``dest`` must not exist yet; nothing produced by an earlier run is copied.
    """
    src, dest = Path(src), Path(dest)
    dest.mkdir(parents=True)
    for name in OP_INPUTS:
        shutil.copy2(src / name, dest / name)
    if traces and (src / "traces").is_dir():
        shutil.copytree(src / "traces", dest / "traces")
    return dest


def design_hashes(root: Path) -> dict[str, str]:
    """sha256 of the design files in the op dir now (recorded as the user's when a run starts)."""
    return {n: h for n in DESIGN_FILES if (h := sha256_file(root / n)) is not None}


def _user_design_hashes(root: Path) -> set[str]:
    """Hashes of design files that earlier runs found in the op dir before they started (the user's)."""
    found: set[str] = set()
    for rid in list_runs(root):
        try:
            found |= set(read_meta(root, rid).user_files.values())
        except ForgeError:
            continue
    return found


def produced_artifacts(root: Path, op_name: str | None, *, keep_user_design: bool) -> list[Path]:
    """Files an earlier run produced. With ``keep_user_design``, design files the user provided are not
    among them: the first run recorded their hashes as the user's (``RunMeta.user_files``); a design file
    in an op dir that has had runs is the user's only if its hash is one of those."""
    names = list(PRODUCED) + ([f"{op_name}_impl.py"] if op_name else [])
    found = [root / n for n in names if (root / n).exists()]
    if keep_user_design:
        had_runs = bool(list_runs(root))
        users = _user_design_hashes(root)
        found = [p for p in found if not (p.name in DESIGN_FILES and (not had_runs or sha256_file(p) in users))]
    return found


def clear_previous_artifacts(root: Path, op_name: str | None, fresh: bool, *, keep_user_design: bool,
                             what: str, why_not_resumable: Callable[[str], str | None] | None = None) -> str:
    """Refuse an op dir holding an earlier run's artifacts (as `earlier_run_refusal` says), or with ``fresh`` move them to
    ``.forge/previous/<time>/`` (nothing is deleted). Call it holding the run lock.

    In an op dir no run has used, files a run would write (an imported kernel ``<op>_impl.py``, a README.md)
    are not an earlier run's: they are moved aside the same way without ``fresh``, and the returned notice says
    so (a run's cleanup would otherwise overwrite them). Returns "" when nothing moved silently.
    """
    found = produced_artifacts(root, op_name, keep_user_design=keep_user_design)
    if not found:
        return ""
    listed = ", ".join(p.name for p in found)
    runs = list_runs(root)
    first_run = not runs
    if not fresh and not first_run:
        raise ForgeError(_refusal(root, listed, runs[-1], what, why_not_resumable))
    dest = root / FORGE_DIR / "previous" / _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    dest.mkdir(parents=True)
    for p in found:
        p.rename(dest / p.name)
    log.info("moved %s to %s", listed, dest)
    if first_run and not fresh:
        return (f"moved {listed} (no run wrote {'it' if len(found) == 1 else 'them'}: imported or your own) to "
                f"{dest.relative_to(root)}/ so that this run does not overwrite {'it' if len(found) == 1 else 'them'}")
    return ""


def earlier_run_refusal(root: Path, op_name: str | None, *, keep_user_design: bool, what: str,
                        why_not_resumable: Callable[[str], str | None] | None = None) -> str | None:
    """Why a run without ``--fresh`` is refused here (the op dir holds an earlier run's artifacts), else None.
    Reads only: a new run asks before intake runs golden.py on every case, and again under the run lock."""
    found = produced_artifacts(root, op_name, keep_user_design=keep_user_design)
    runs = list_runs(root)
    if not found or not runs:
        return None
    return _refusal(root, ", ".join(p.name for p in found), runs[-1], what, why_not_resumable)


def _refusal(root: Path, listed: str, latest: str, what: str,
             why_not_resumable: Callable[[str], str | None] | None) -> str:
    """The refusal of a new run in an op dir holding ``listed``, artifacts of the runs whose latest is ``latest``."""
    # a run stopped by Ctrl-C, kill -9 or a gate is continued by `resume`: say so before --fresh, which
    # starts over (a user who re-typed `run` after a crash was only offered the way that drops the progress)
    why = why_not_resumable(latest) if why_not_resumable is not None else None
    if why:  # a delivered run is not offered to `resume` (which would say "nothing to resume")
        return (f"{root} holds artifacts of an earlier run ({listed}); {what}. The latest run ({latest}) "
                f"{why}: to start over, pass --fresh, which moves them to .forge/previous/ first")
    return (f"{root} holds artifacts of an earlier run ({listed}); {what}. To continue the latest "
            f"run ({latest}) where it stopped: {cli_command()} resume {shell_path(root)}. To start "
            "over: pass --fresh, which moves them to .forge/previous/ first")


def snapshot_dir(op_dir: Path, run_id: str) -> Path:
    """Where the design shown at each design gate is kept (``<seq>-design/``)."""
    return run_dir(op_dir, run_id) / "gates"


def snapshot_design(op_dir: Path, run_id: str, seq: int) -> None:
    """Keep the design shown at design gate ``seq`` (so a later design gate can diff against it)."""
    dest = snapshot_dir(op_dir, run_id) / f"{seq:03d}-design"
    if dest.exists():
        return
    dest.mkdir(parents=True)
    for name in ("DESIGN.md", "module_interfaces.yaml"):
        if (op_dir / name).is_file():
            shutil.copy2(op_dir / name, dest / name)


def previous_design(op_dir: Path, run_id: str, seq: int) -> Path | None:
    """The snapshot of the last design gate before ``seq``, or None."""
    base = snapshot_dir(op_dir, run_id)
    if not base.is_dir():
        return None
    earlier = sorted(p for p in base.iterdir() if p.name.endswith("-design") and int(p.name[:3]) < seq)
    return earlier[-1] if earlier else None


def attempts_dir(op_dir: Path, run_id: str) -> Path:
    """Copies of every verified file per attempt and the bisect findings (for the HTML run report only)."""
    return run_dir(op_dir, run_id) / "attempts"


def keep_attempt(op_dir: Path, run_id: str, module: int | str, attempt: int | None, target: str) -> None:
    """Keep the file as it was verified at this attempt (stage files are overwritten by the next attempt)."""
    src = op_dir / target
    if not src.is_file():
        return
    dest = attempts_dir(op_dir, run_id) / f"M{module}" / f"attempt{int(attempt or 0):02d}-{Path(target).name}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def keep_bisect(op_dir: Path, run_id: str, module: int, attempt: int | None, findings: dict | None) -> None:
    """Keep runtime.bisect's first-divergence findings given to the debugger at this attempt."""
    if not findings:
        return
    dest = attempts_dir(op_dir, run_id) / f"M{module}" / f"attempt{int(attempt or 0):02d}-bisect.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(findings, indent=2, default=str), encoding="utf-8")


def _before_write_path(op_dir: Path, run_id: str, module: int, attempt: int, target: str) -> Path:
    return run_dir(op_dir, run_id) / "before-write" / f"M{module}-attempt{int(attempt):02d}-{Path(target).name}.json"


def keep_before_write(op_dir: Path, run_id: str, module: int, attempt: int, target: str) -> None:
    """Keep ``target`` as it is before implement attempt ``attempt`` of ``module`` overwrites it (once per attempt).

    Why: the implementer reads the current stage file. An attempt interrupted after its write (Ctrl-C, kill -9)
    runs again from the checkpoint, which knows nothing of that write; :func:`undo_interrupted_write` puts the
    file back first, so the attempt sees what it saw the first time (a replay asks the recorded request).
    """
    path = _before_write_path(op_dir, run_id, module, attempt, target)
    if path.is_file():  # an earlier, interrupted run of this attempt kept the original
        return
    src = op_dir / target
    content = src.read_text(encoding="utf-8") if src.is_file() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"target": target, "content": content}), encoding="utf-8")
    tmp.replace(path)


def undo_interrupted_write(op_dir: Path, run_id: str, module: int, attempt: int, target: str) -> bool:
    """Put ``target`` back as it was before an interrupted run of this implement attempt wrote it (True if so)."""
    path = _before_write_path(op_dir, run_id, module, attempt, target)
    if not path.is_file():
        return False
    content = json.loads(path.read_text(encoding="utf-8")).get("content")
    dest = op_dir / target
    if content is None:
        dest.unlink(missing_ok=True)
    else:
        dest.write_text(content, encoding="utf-8")
    log.info("implement M%s attempt %s runs again after an interrupt: %s restored as it was before", module,
             attempt, target)
    return True
