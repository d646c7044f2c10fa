"""Start the toolchain child confined: fresh process group, rlimits, a private writable work dir, no network.

The real toolchain writes ``./output/``, ``$HOME/.pypto`` and ``$HOME/ascend/log``, spawns helper Python
scripts and a host C++ build, and a failed compile poisons its process (spec §0.3). So every compile runs in
a fresh child whose cwd and $HOME are a private temporary directory that is deleted afterwards.

Layers (reported in ``ToolchainResult.layers``):

``bwrap``          bubblewrap: the whole file system read-only except the work dir, a private /tmp, new
                   user/pid/net/ipc namespaces (no network), killed with the parent. Used when ``bwrap``
                   is on PATH and works; otherwise the remaining layers still apply.
``process_group``  new session; the whole group is SIGKILLed on timeout and after the run
``rlimits``        address space, CPU seconds, file size, no core dumps
``env_allowlist``  the sandbox's environment allow-list (HOME = work dir, single-threaded BLAS) plus the
                   compiler's PATH and plog directory

This mirrors ``runtime.sandbox`` (whose runner is specific to the emulator: it installs the emulator as
``pypto`` and an audit hook that would deny the toolchain's own compiler subprocesses). The kernel code run
here never sees golden outputs or tolerances, and nothing it reports is a verdict.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

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


@functools.cache
def bwrap_works() -> bool:
    """True when bubblewrap is installed and can create the namespaces on this machine (probed once)."""
    exe = shutil.which("bwrap")
    if not exe:
        return False
    try:
        proc = subprocess.run([exe, *(_bwrap_args(Path("/tmp"))), "/bin/true"], capture_output=True,
                              timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _bwrap_args(work: Path, visible: tuple[str, ...] = ()) -> list[str]:
    """``visible``: paths that must stay readable although they live under /tmp, which the child gets as a
    fresh tmpfs (a toolchain venv or a checkout in /tmp would otherwise vanish: "execvp ... No such file")."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for path in sorted(set(visible)):
        if path.startswith("/tmp/") and os.path.exists(path):
            args += ["--ro-bind", path, path]
    return [*args, "--bind", str(work), str(work), "--chdir", str(work), "--unshare-all", "--die-with-parent"]


def _visible_paths(python: str, script: Path) -> tuple[str, ...]:
    """The interpreter's venv (``bin/python`` -> its root, unresolved: a venv's python is a symlink out of
    it) and the checkout that holds the child script."""
    venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    return (venv, os.path.realpath(venv), str(Path(script).resolve().parents[2]))


def _env(work: Path) -> dict[str, str]:
    """The sandbox's one allow-list (:func:`runtime.sandbox.env_policy.child_env`: fixed base, HOME = TMPDIR =
    work, single-threaded BLAS, the numerics pass-through) plus what the vendor compiler needs: its host-build
    tools on PATH and its plog files inside the work dir, where the error mapper reads them."""
    env = child_env(work)
    env["PATH"] = "/usr/local/bin:" + env["PATH"]
    env["ASCEND_PROCESS_LOG_PATH"] = str(work / "plog")
    env["ASCEND_GLOBAL_LOG_LEVEL"] = "3"
    return env


def _preexec(limits: Limits):  # type: ignore[no-untyped-def]
    def setup() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_timeout_s, limits.cpu_timeout_s + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.max_file_bytes, limits.max_file_bytes))

    return setup


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_child(python: str, script: Path, request: Path, work: Path, limits: Limits,
              *, use_bwrap: bool | None = None) -> ChildRun:
    """Run ``python script request`` with cwd = HOME = ``work``; returns after the whole group is dead."""
    bw = bwrap_works() if use_bwrap is None else use_bwrap
    cmd = [python, "-s", "-B", str(script), str(request)]
    if bw:
        cmd = [shutil.which("bwrap") or "bwrap", *_bwrap_args(work, _visible_paths(python, script)), *cmd]
    err_path = work / "child.stderr"
    started = time.perf_counter()
    with open(work / "child.stdout", "wb") as out_fh, open(err_path, "wb") as err_fh:
        proc = subprocess.Popen(cmd, cwd=work, env=_env(work), stdin=subprocess.DEVNULL, stdout=out_fh,
                                stderr=err_fh, start_new_session=True, close_fds=True,
                                preexec_fn=_preexec(limits))
        timed_out = False
        try:
            proc.wait(timeout=limits.wall_timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            proc.wait()
        finally:
            _kill_group(proc.pid)
    tail = err_path.read_bytes()[-4000:].decode(errors="replace") if err_path.is_file() else ""
    layers = {"bwrap": bw, "process_group": True, "rlimits": True, "env_allowlist": True, "tempdir": True}
    return ChildRun(proc.returncode, timed_out, time.perf_counter() - started, tail, layers)
