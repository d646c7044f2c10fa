"""Run bookkeeping on disk: run ids, ``run.json`` metadata, the pid lock, pending gates and decisions.

Why files: ``approve``/``reject`` run in a different process than the waiting run, and a killed run must
be resumable; the only shared medium is the op dir's ``.forge/`` folder.
"""

from __future__ import annotations

import json
import os
import secrets
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from orchestrator.errors import ForgeError
from orchestrator.paths import FORGE_DIR, LOCK_FILE, list_runs, run_dir


class RunMeta(BaseModel):
    """What ``resume`` needs to rebuild the services of a run."""

    run_id: str
    agents: str
    """``scripted:<abs script path>`` or ``factory`` (orchestrator.agent_factory.build_agents)."""
    approve: str
    budget: int = 10
    module_gate: bool = True
    verifier: str = "runtime"
    """``runtime`` (runtime.verify) or ``injected`` (tests; must be passed again on resume)."""
    model_options: dict[str, str] = Field(default_factory=dict)
    """CLI model choices (``model``, ``base_url``; never keys) so ``resume`` rebuilds the same agents."""
    clock_origin: str | None = None
    """Start of the run's logical clock (recorded model runs); ``resume`` continues it."""
    created: str = ""


def new_run_id(now: datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(2)


def write_meta(op_dir: Path, meta: RunMeta) -> None:
    d = run_dir(op_dir, meta.run_id)
    d.mkdir(parents=True, exist_ok=True)
    (d / "run.json").write_text(meta.model_dump_json(indent=2) + "\n", encoding="utf-8")


def read_meta(op_dir: Path, run_id: str) -> RunMeta:
    path = run_dir(op_dir, run_id) / "run.json"
    try:
        return RunMeta.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ForgeError(f"run {run_id} has no readable run.json ({path}): {exc}") from exc


def latest_run(op_dir: Path) -> str:
    runs = [r for r in list_runs(op_dir) if (run_dir(op_dir, r) / "run.json").is_file()]
    if not runs:
        raise ForgeError(f"no run found under {op_dir / FORGE_DIR}")
    return runs[-1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RunLock:
    """``.forge/lock`` holding the pid of the process driving a run; stale locks (dead pid) are taken over."""

    def __init__(self, op_dir: Path, run_id: str) -> None:
        self.path = Path(op_dir) / LOCK_FILE
        self.run_id = run_id

    def __enter__(self) -> RunLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists():
            try:
                held = json.loads(self.path.read_text(encoding="utf-8"))
                pid = int(held.get("pid", 0))
            except (ValueError, OSError):
                pid = 0
            if pid and pid != os.getpid() and _alive(pid):
                raise ForgeError(f"a run is already in progress in {self.path.parent.parent} "
                                 f"(run {held.get('run_id')}, pid {pid}); wait for it or stop it first")
        self.path.write_text(json.dumps({"pid": os.getpid(), "run_id": self.run_id}) + "\n", encoding="utf-8")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            held = json.loads(self.path.read_text(encoding="utf-8"))
            if int(held.get("pid", 0)) == os.getpid():
                self.path.unlink()
        except (OSError, ValueError):
            pass


def lock_holder(op_dir: Path) -> dict | None:
    """The lock's content when a live process holds it, else None."""
    path = Path(op_dir) / LOCK_FILE
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
        pid = int(held.get("pid", 0))
    except (OSError, ValueError):
        return None
    return held if pid and _alive(pid) else None


def pending_path(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "pending_gate.json"


def decision_path(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "decision.json"
