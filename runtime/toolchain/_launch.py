"""Start the toolchain child confined, through the project's one process runner (``runtime.sandbox.run_process``).

The real toolchain writes ``./output/``, ``$HOME/.pypto`` and ``$HOME/ascend/log``, spawns helper Python
scripts and a host C++ build, and a failed compile poisons its process (spec §0.3). So every compile runs in
a fresh child whose cwd and $HOME are a private temporary directory that is deleted afterwards.

It runs under ``run_process``'s ``vendor`` profile: Bubblewrap when this machine has it (the file system
read-only but for the work dir, which the parent shares to read the cost report and plog files; a private
/tmp; no network), never seccomp (the compiler spawns processes); a fresh process group killed after the run;
rlimits; the one environment allow-list (``child_env``) plus the compiler's PATH and plog directory. The kernel
code run here never sees golden outputs or tolerances, and nothing it reports is a verdict.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from runtime.sandbox import Limits as ProcLimits
from runtime.sandbox import isolation_level, run_process
from runtime.sandbox.env_policy import child_env

__all__ = ["ChildRun", "Limits", "bwrap_works", "run_child"]


@dataclass(frozen=True)
class Limits:
    """Resource limits of one toolchain child (torch + pypto need more address space than the emulator)."""

    wall_timeout_s: float = 600.0
    cpu_timeout_s: int = 900
    memory_bytes: int = 24 * 1024**3
    max_file_bytes: int = 2 * 1024**3


@dataclass
class ChildRun:
    returncode: int | None
    timed_out: bool
    duration_s: float
    stderr_tail: str
    layers: dict[str, bool]


def bwrap_works() -> bool:
    """True when bubblewrap can create the namespaces on this machine (the sandbox's probe, cached there)."""
    return isolation_level("bwrap")[0] == "bwrap"


def _visible_paths(python: str, script: Path) -> tuple[str, ...]:
    """The interpreter's venv (``bin/python`` -> its root, unresolved: a venv's python is a symlink out of
    it) and the checkout that holds the child script; under Bubblewrap only these (and the project's own
    interpreter and packages) are visible, a venv or a checkout under /tmp included (a fresh tmpfs there
    would otherwise hide them: "execvp ... No such file")."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    base = os.path.dirname(os.path.dirname(os.path.realpath(python)))
    return (venv, os.path.realpath(venv), base, str(Path(script).resolve().parents[2]))


def _env_extra(work: Path) -> dict[str, str]:
    """What the vendor compiler needs beyond the sandbox's one allow-list (:func:`child_env`, which
    ``run_process`` builds): its host-build tools on PATH and its plog files inside the work dir, where the
    error mapper reads them."""
    return {"PATH": "/usr/local/bin:" + child_env(work)["PATH"], "ASCEND_PROCESS_LOG_PATH": str(work / "plog"),
            "ASCEND_GLOBAL_LOG_LEVEL": "3"}


def run_child(python: str, script: Path, request: Path, work: Path, limits: Limits,
              *, use_bwrap: bool | None = None) -> ChildRun:
    """Run ``python script request`` with cwd = HOME = ``work``; returns after the whole group is dead."""
    bw = bwrap_works() if use_bwrap is None else use_bwrap
    proc = run_process(
        [python, "-s", "-B", str(script), str(request)], work=work, profile="vendor",
        isolation="bwrap" if bw else "process-only", env_extra=_env_extra(work),
        read_only=_visible_paths(python, script),
        limits=ProcLimits(wall_s=limits.wall_timeout_s, cpu_s=limits.cpu_timeout_s,
                          memory_bytes=limits.memory_bytes, max_file_bytes=limits.max_file_bytes,
                          max_open_files=None, max_processes=None))
    tail = proc.stderr[-4000:].decode(errors="replace")
    layers = {"bwrap": proc.isolation == "bwrap", "process_group": True, "rlimits": True, "env_allowlist": True,
              "tempdir": True}
    return ChildRun(proc.returncode, proc.timed_out, proc.duration_s, tail, layers)
