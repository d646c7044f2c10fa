"""Parent side of the sandbox: start the runner in a confined child, enforce limits, collect arrays.

Isolation level, named honestly: this is a *sandboxed subprocess*, not a container. Layers (each reported):

``process_group``  new session; the whole group is SIGKILLed on wall timeout and after every run
``rlimits``        address space, CPU seconds, open files, file size, no core dumps
``env_allowlist``  the child sees a fixed environment, the same as the golden's (``env_policy.child_env``)
``tempdir``        a fresh private working directory holding only the candidate copy and its inputs
``net_namespace``  an empty network namespace (unprivileged user + net namespace) when the kernel allows it
``socket_guard``   socket functions raise inside the child (installed before the candidate is imported)
``audit_hook``     a deny-by-default file/process/network policy inside the child (see ``_guard``)

The file system is not virtualised: the audit hook is what keeps golden.py, SPEC.md and the verifier's code
out of reach. Golden outputs and tolerances never enter the child at all.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import logging
import os
import resource
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from runtime.sandbox._guard import DENIED_MARKER
from runtime.sandbox._npz import load_arrays, save_arrays
from runtime.sandbox.env_policy import child_env

__all__ = ["LAYERS", "CandidateRun", "RunOutput", "SandboxError", "SandboxPolicy", "run_candidate"]

log = logging.getLogger(__name__)

LAYERS = ("process_group", "rlimits", "env_allowlist", "tempdir", "net_namespace", "socket_guard", "audit_hook")
_RUNNER = Path(__file__).with_name("_runner.py")
_REPO_ROOT = Path(__file__).resolve().parents[2]
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (infrastructure problem, verdict ERROR)."""


class SandboxPolicy(BaseModel):
    """Limits of one sandboxed candidate run.

    Attributes:
        wall_timeout_s: wall-clock budget of the whole child (import + all cases).
        cpu_timeout_s: CPU-seconds budget (RLIMIT_CPU; SIGXCPU then SIGKILL).
        memory_bytes: address-space limit (RLIMIT_AS); a 50 GB allocation fails with MemoryError.
        max_open_files, max_file_bytes: RLIMIT_NOFILE / RLIMIT_FSIZE.
        net_namespace: try to enter an empty network namespace.
        output_cap_bytes: how much of the child's stdout/stderr is kept.
    """

    model_config = ConfigDict(frozen=True)

    wall_timeout_s: float = 120.0
    cpu_timeout_s: int = 120
    memory_bytes: int = 4 * 1024**3
    max_open_files: int = 256
    max_file_bytes: int = 512 * 1024**2
    net_namespace: bool = True
    output_cap_bytes: int = 16 * 1024


@dataclass
class RunOutput:
    """One wrapper call in the child: outputs and post-call inputs (numpy arrays) plus the child's record."""

    case: str
    run: int
    record: dict[str, Any]
    outputs: list[np.ndarray | None] = field(default_factory=list)
    args_after: list[np.ndarray] = field(default_factory=list)


class CandidateRun(BaseModel):
    """What happened to the child process as a whole."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    status: Literal["ok", "timeout", "killed", "crashed", "import_error", "sandbox_error"]
    reason: str = ""
    layers: dict[str, bool] = {}
    returncode: int | None = None
    pid: int | None = None
    duration_s: float = 0.0
    denied: list[str] = []
    stderr_tail: str = ""
    import_error: dict[str, Any] | None = None
    runs: list[Any] = []


_LIBC: Any = None


def _libc() -> Any:
    global _LIBC
    if _LIBC is None:
        try:
            _LIBC = ctypes.CDLL(None, use_errno=True)
        except OSError:
            _LIBC = False
    return _LIBC


def _preexec(policy: SandboxPolicy, uid: int, gid: int) -> Any:
    libc = _libc() if policy.net_namespace and sys.platform.startswith("linux") else False

    def setup() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_AS, (policy.memory_bytes, policy.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (policy.cpu_timeout_s, policy.cpu_timeout_s + 1))
        resource.setrlimit(resource.RLIMIT_NOFILE, (policy.max_open_files, policy.max_open_files))
        resource.setrlimit(resource.RLIMIT_FSIZE, (policy.max_file_bytes, policy.max_file_bytes))
        if libc and libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) == 0:
            for path, text in (("/proc/self/setgroups", "deny"), ("/proc/self/uid_map", f"{uid} {uid} 1"),
                               ("/proc/self/gid_map", f"{gid} {gid} 1")):
                try:
                    with open(path, "w") as fh:
                        fh.write(text)
                except OSError:
                    pass

    return setup


def _read_roots(emulator: str) -> list[str]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages()}
    runtime_dir = _REPO_ROOT / "runtime"
    roots |= {str(runtime_dir / "__init__.py"), str(runtime_dir / "dtypes.py"), str(runtime_dir / "sandbox")}
    if emulator.endswith(".py"):
        roots.add(str(Path(emulator).resolve().parent))
    else:
        spec = importlib.util.find_spec(emulator.split(".")[0])
        found = importlib.util.find_spec(emulator) if spec is not None else None
        if found is not None and found.origin:
            origin = Path(found.origin)
            roots.add(str(origin.parent if origin.name == "__init__.py" else origin))
    return sorted(os.path.realpath(r) for r in roots)


def _net_ns() -> str:
    try:
        return os.readlink("/proc/self/ns/net")
    except OSError:
        return ""


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: Path, cap: int) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - cap))
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _scrub(text: str, work: Path) -> str:
    """Drop the random work-directory prefix so that reports of identical runs are identical."""
    return text.replace(str(work) + os.sep, "").replace(os.path.realpath(work) + os.sep, "")


def _denials(path: Path, limit: int = 50) -> list[str]:
    out: list[str] = []
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                line = raw.decode(errors="replace").strip()
                if line.startswith(DENIED_MARKER):
                    out.append(line[len(DENIED_MARKER):].strip())
                    if len(out) >= limit:
                        break
    except OSError:
        pass
    return out


def run_candidate(
    candidate: Path,
    wrapper: str,
    cases: list[tuple[str, list[np.ndarray]]],
    *,
    policy: SandboxPolicy | None = None,
    emulator: str = "runtime.emulator",
    repeat_first: bool = True,
) -> CandidateRun:
    """Run ``wrapper`` of the stage file ``candidate`` once per case (inputs copied), confined.

    Args:
        candidate: the stage file; it is copied into the fresh work directory (the child never sees the op
            directory).
        wrapper: name of the wrapper function to call.
        cases: ``(case name, input arrays)`` in call order.
        policy: limits; defaults to :class:`SandboxPolicy()`.
        emulator: module name (or path of a ``.py`` file) providing ``install()``, ``session()`` and
            ``EmulatorError``; installed as ``pypto`` in the child.
        repeat_first: call the first case once more at the end (determinism / caching check).

    Returns:
        A :class:`CandidateRun`; ``runs`` holds one :class:`RunOutput` per wrapper call when the child
        finished. Timeouts, limit kills and crashes are statuses, never exceptions.

    Raises:
        SandboxError: the work directory or the child process could not be set up.
    """
    policy = policy or SandboxPolicy()
    work = Path(tempfile.mkdtemp(prefix="pto-verify-"))
    os.chmod(work, 0o700)
    logs = Path(tempfile.mkdtemp(prefix="pto-verify-logs-"))
    try:
        return _run(candidate, wrapper, cases, policy, emulator, repeat_first, work, logs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(logs, ignore_errors=True)


def _run(candidate: Path, wrapper: str, cases: list[tuple[str, list[np.ndarray]]], policy: SandboxPolicy,
         emulator: str, repeat_first: bool, work: Path, logs: Path) -> CandidateRun:
    target = work / Path(candidate).name
    try:
        shutil.copyfile(candidate, target)
    except OSError as exc:
        raise SandboxError(f"cannot copy {candidate} into the sandbox: {exc}") from None
    case_entries = []
    for i, (name, arrays) in enumerate(cases):
        fname = f"in_{i:03d}.npz"
        save_arrays(work / fname, {f"in_{j}": a for j, a in enumerate(arrays)})
        case_entries.append({"name": name, "inputs": fname})
    rfd, wfd = os.pipe()
    request = {
        "repo_root": str(_REPO_ROOT),
        "emulator": str(Path(emulator).resolve()) if emulator.endswith(".py") else emulator,
        "candidate": target.name,
        "wrapper": wrapper,
        "cases": case_entries,
        "repeat_first": repeat_first,
        "parent_netns": _net_ns(),
        "read_roots": _read_roots(emulator),
        "trusted_fd": wfd,
        "result": "result.json",
    }
    (work / "request.json").write_text(json.dumps(request))
    out_path, err_path = logs / "stdout.txt", logs / "stderr.txt"
    started = time.perf_counter()
    with open(out_path, "wb") as out_fh, open(err_path, "wb") as err_fh:
        try:
            proc = subprocess.Popen(
                [sys.executable, "-s", "-B", str(_RUNNER), "request.json"],
                cwd=work, env=child_env(work), stdin=subprocess.DEVNULL, stdout=out_fh, stderr=err_fh,
                start_new_session=True, pass_fds=(wfd,), close_fds=True,
                preexec_fn=_preexec(policy, os.getuid(), os.getgid()),
            )
        except OSError as exc:
            os.close(rfd)
            os.close(wfd)
            raise SandboxError(f"cannot start the sandbox process: {exc}") from None
        os.close(wfd)
        timed_out = False
        try:
            proc.wait(timeout=policy.wall_timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            proc.wait()
        finally:
            _kill_group(proc.pid)
    duration = time.perf_counter() - started
    with os.fdopen(rfd, "rb") as fh:
        trusted = fh.read(65536).decode(errors="replace").strip()
    layers = {"process_group": True, "rlimits": True, "env_allowlist": True, "tempdir": True,
              "net_namespace": False, "socket_guard": False, "audit_hook": False}
    if trusted:
        try:
            reported = json.loads(trusted.splitlines()[0])["layers"]
            for key in ("net_namespace", "socket_guard", "audit_hook"):
                layers[key] = bool(reported.get(key, False))
            layers["process_group"] = bool(reported.get("process_group", False))
            layers["rlimits"] = bool(reported.get("rlimits", False))
        except (ValueError, KeyError, TypeError, IndexError):
            pass
    run = CandidateRun(
        status="ok", layers=layers, returncode=proc.returncode, duration_s=duration,
        denied=[_scrub(d, work) for d in _denials(err_path)],
        stderr_tail=_scrub(_tail(err_path, policy.output_cap_bytes), work), pid=proc.pid,
    )
    if timed_out:
        run.status, run.reason = "timeout", f"wall-clock timeout after {policy.wall_timeout_s:g} s; process group killed"
        return run
    rc = proc.returncode
    if rc is not None and rc < 0:
        sig = -rc
        run.status = "killed"
        if sig == signal.SIGXCPU:
            run.reason = f"CPU time limit of {policy.cpu_timeout_s} s exceeded (SIGXCPU)"
        elif sig == signal.SIGKILL:
            run.reason = "killed by SIGKILL (CPU hard limit or memory)"
        else:
            run.reason = f"terminated by signal {signal.Signals(sig).name}"
        return run
    if not trusted:
        run.status, run.reason = "sandbox_error", "the sandbox runner failed before the candidate was loaded"
        return run
    result_file = work / "result.json"
    try:
        record = json.loads(result_file.read_text())
    except (OSError, ValueError):
        run.status = "crashed"
        run.reason = f"the candidate process exited with code {rc} without a result" + (
            " (MemoryError)" if "MemoryError" in run.stderr_tail else "")
        return run
    if record.get("import_error"):
        run.status, run.import_error = "import_error", record["import_error"]
        run.reason = f"importing the stage file failed: {record['import_error'].get('type')}: " \
                     f"{record['import_error'].get('message', '')[:300]}"
        return run
    runs: list[RunOutput] = []
    for entry in record.get("cases", []):
        try:
            arrays = load_arrays(work / Path(str(entry.get("file", ""))).name)
        except (OSError, ValueError) as exc:
            run.status, run.reason = "crashed", f"unreadable output file for case {entry.get('case')}: {exc}"
            return run
        n_out = int(entry.get("n_outputs", 0) or 0)
        outs = [arrays.get(f"out_{i}") for i in range(n_out)]
        args = [arrays[k] for k in sorted((k for k in arrays if k.startswith("arg_")), key=lambda s: int(s[4:]))]
        runs.append(RunOutput(case=str(entry.get("case")), run=int(entry.get("run", 0)), record=entry,
                              outputs=outs, args_after=args))
    run.runs = runs
    return run
