"""The one subprocess runner of the project: every child that computes numbers for the verifier starts here.

Two profiles share one implementation (ARCHITECTURE.md invariant 4, "one definition of subprocess policy"):

``trusted``   golden.py (the user's reference code): own process group and session, rlimits (CPU, memory,
              files, no core dumps), the environment allow-list (:func:`runtime.sandbox.env_policy.child_env`),
              killed when its parent dies, private temporary working directory removed afterwards.
``untrusted`` candidate kernels (verify, the agents' smoke_run, bisect): all of the above, inside the best
              OS isolation this machine offers (see :func:`isolation_level`):

              ``bwrap+seccomp``  Bubblewrap: fresh user/PID/network/IPC/UTS/cgroup namespaces, a read-only view of
                                 only the interpreter, the installed packages and the emulator, a private tmpfs
                                 work dir, ``--die-with-parent``, ``--new-session``; plus a seccomp filter (built
                                 by libseccomp through ``pyseccomp``) that refuses process creation, ptrace,
                                 mounts, namespaces, kernel keyrings and non-local sockets;
              ``bwrap``          the same without the seccomp filter (``pyseccomp``/libseccomp missing);
              ``process-only``   no Bubblewrap (or no user namespaces): a plain child process with the limits
                                 above. It still runs, and says so; ``require_sandbox`` refuses it.

Cleanup that survives the parent being interrupted: every live child and temporary directory is registered;
``SIGTERM`` (when nobody else handles it), ``atexit`` and every ``finally`` kill the registered process groups and
remove the directories. Children also die with their parent (``PR_SET_PDEATHSIG`` / ``--die-with-parent``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import logging
import os
import resource
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from runtime.sandbox.env_policy import child_env

__all__ = ["ISOLATION_LEVELS", "Isolation", "Limits", "ProcResult", "Running", "isolation_level", "no_fork",
           "private_dir", "run_process", "start_process"]

log = logging.getLogger(__name__)

Isolation = Literal["bwrap+seccomp", "bwrap", "process-only"]
ISOLATION_LEVELS: tuple[Isolation, ...] = ("bwrap+seccomp", "bwrap", "process-only")
_PR_SET_PDEATHSIG = 1
_BWRAP_CANDIDATES = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one child (``None`` = leave the limit as inherited).

    Attributes:
        wall_s: wall-clock budget; the whole child (and its sandbox) is killed after it.
        cpu_s: RLIMIT_CPU (SIGXCPU, then SIGKILL one second later).
        memory_bytes: RLIMIT_AS (an oversized allocation is a MemoryError in the child).
        max_open_files: RLIMIT_NOFILE.
        max_file_bytes: RLIMIT_FSIZE (a file written past it is SIGXFSZ / EFBIG).
        max_processes: RLIMIT_NPROC (per real user; not enforced for root, where the seccomp filter and the
            PID namespace are what stop fork bombs).
    """

    wall_s: float = 120.0
    cpu_s: int | None = 120
    memory_bytes: int | None = 4 * 1024**3
    max_open_files: int | None = 256
    max_file_bytes: int | None = 512 * 1024**2
    max_processes: int | None = 256


@dataclass
class ProcResult:
    """How a child ended and what it said (stdout/stderr capped, the result channel in full)."""

    returncode: int | None
    timed_out: bool
    duration_s: float
    isolation: Isolation
    stdout: bytes = b""
    stderr: bytes = b""
    channel: bytes | bytearray = b""
    """The channel's bytes: the reader's own buffer when it has finished (no copy: a several-GB op's outputs
    arrive here), else a snapshot."""
    channel_overflow: bool = False
    """The child wrote more than the channel cap (the rest was read and dropped)."""
    channel_eof: bool = True
    """EOF was seen on the channel: no process that could write to it was left alive."""
    denials: list[str] = field(default_factory=list)
    pid: int = 0
    """Process id (= process group id) of the direct child, for "is anything left?" checks."""


# ------------------------------------------------------------------------------------------ cleanup registry

_LOCK = threading.Lock()
_LIVE_GROUPS: set[int] = set()
_TEMP_DIRS: set[str] = set()
_HANDLERS_INSTALLED = False


def _cleanup_all() -> None:
    """Kill every registered child group and remove every registered temp dir (atexit / SIGTERM)."""
    with _LOCK:
        groups, dirs = list(_LIVE_GROUPS), list(_TEMP_DIRS)
        _LIVE_GROUPS.clear()
        _TEMP_DIRS.clear()
    for pgid in groups:
        _kill_group(pgid)
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


def _on_sigterm(signum: int, frame: object) -> None:
    _cleanup_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)  # die of the same signal, as without us


def _install_handlers() -> None:
    """Register the cleanup once: atexit always; SIGTERM only if nobody set a handler and we are in the main
    thread (a CLI that handles SIGTERM itself ends through SystemExit, which runs atexit)."""
    global _HANDLERS_INSTALLED
    if _HANDLERS_INSTALLED:
        return
    _HANDLERS_INSTALLED = True
    atexit.register(_cleanup_all)
    if threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, None):
                signal.signal(signal.SIGTERM, _on_sigterm)


@contextlib.contextmanager
def private_dir(prefix: str, parent: str | None = None) -> Iterator[Path]:
    """A fresh 0700 temporary directory, removed on exit, at interpreter exit and on SIGTERM (under ``parent``, or
    the default temporary directory)."""
    _install_handlers()
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    os.chmod(path, 0o700)
    with _LOCK:
        _TEMP_DIRS.add(path)
    try:
        yield Path(path)
    finally:
        shutil.rmtree(path, ignore_errors=True)
        with _LOCK:
            _TEMP_DIRS.discard(path)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# ------------------------------------------------------------------------------------------ isolation probing


def bwrap_path() -> str | None:
    """The Bubblewrap binary, or None."""
    found = shutil.which("bwrap")
    if found:
        return found
    return next((p for p in _BWRAP_CANDIDATES if os.access(p, os.X_OK)), None)


@functools.lru_cache(maxsize=1)
def _bwrap_works() -> tuple[bool, str]:
    exe = bwrap_path()
    if exe is None:
        return False, "bubblewrap (bwrap) is not installed"
    argv = [exe, *_bwrap_base_args(_ro_roots(()), "/tmp/pto-probe"), "--", inside_path(sys.executable), "-c", "pass"]
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False,
                              env=child_env("/tmp"))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"bwrap does not start: {exc}"
    if proc.returncode != 0:
        return False, "bwrap cannot create namespaces here: " + proc.stderr.decode(errors="replace").strip()[:200]
    return True, ""


def isolation_level(requested: str = "auto") -> tuple[Isolation, str]:
    """The isolation level candidate code gets on this machine, and why it is not the best one (or "").

    Args:
        requested: ``auto`` (the best available) or one of :data:`ISOLATION_LEVELS` to force a weaker one
            (tests of the fallback path).
    """
    if requested == "process-only":
        return "process-only", "process-only isolation was requested"
    ok, why = _bwrap_works()
    if not ok:
        return "process-only", why
    if requested == "bwrap":
        return "bwrap", "seccomp was not requested"
    from runtime.sandbox._seccomp import seccomp_program

    bpf, why = seccomp_program()
    if bpf is None:
        return "bwrap", why
    return "bwrap+seccomp", ""


def inside_path(exe: str) -> str:
    """``exe`` as the sandbox can reach it: its directory resolved (``..``, symlinked folders), its own name kept.

    Why: the sandbox mounts the interpreter's folders by their real paths (`_ro_roots`), so an interpreter started
    as ``../repo/.venv/bin/python`` or through a symlinked folder was not found inside it, and verify fell back to
    process-only isolation (session 49). The last component stays as it is: a venv's ``python`` is a symlink to the
    base interpreter, and resolving it would lose the venv (its ``pyvenv.cfg`` is found next to the path run)."""
    if not os.path.isabs(exe) and os.sep not in exe:
        return exe
    return os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(exe))), os.path.basename(exe))


def _ro_roots(extra: Sequence[str]) -> list[str]:
    """What the sandbox may see (read-only): the interpreter, its installed packages and ``extra``."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages(),
             os.path.dirname(os.path.realpath(sys.executable))}
    user_site = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user_site and os.path.isdir(user_site):
        roots.add(user_site)
    roots |= _pth_dirs([r for r in roots if r.endswith(("site-packages", "dist-packages"))])
    roots |= set(extra)
    out: list[str] = []
    for r in sorted({os.path.realpath(r) for r in roots if r and os.path.exists(r)}):
        if not any(r.startswith(o.rstrip("/") + "/") for o in out):
            out.append(r)
    return out


def _pth_dirs(site_dirs: list[str]) -> set[str]:
    """Directories that ``.pth`` files of the site directories add to ``sys.path`` (packages installed elsewhere),
    except the project checkout itself, which holds operator directories and golden files."""
    repo = os.path.realpath(Path(__file__).resolve().parents[2])
    out: set[str] = set()
    for sd in site_dirs:
        try:
            pth_files = [p for p in os.listdir(sd) if p.endswith(".pth")]
        except OSError:
            continue
        for name in pth_files:
            try:
                lines = Path(sd, name).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                path = os.path.realpath(os.path.join(sd, line))
                if os.path.isdir(path) and not (repo == path or repo.startswith(path.rstrip("/") + "/")
                                                or path.startswith(repo + "/")):
                    out.add(path)
    return out


def _bwrap_base_args(ro: list[str], work: str, *, share_work: bool = False) -> list[str]:
    args = ["--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--hostname", "localhost",
            "--proc", "/proc", "--dev", "/dev", "--size", str(512 * 1024**2), "--tmpfs", "/tmp"]
    for top in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"):
        if os.path.exists(etc):
            args += ["--ro-bind", etc, etc]
    for path in ro:
        if path.startswith(("/usr/", "/bin/", "/lib/", "/lib64/")) and not os.path.islink(path.split("/")[1]):
            continue  # already visible
        args += ["--ro-bind", path, path]
    # bwrap always exports PWD (a plain child has none); the runner drops it before any candidate code runs
    args += ["--bind", work, work] if share_work else ["--dir", work]
    return [*args, "--chdir", work]


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def _preexec(limits: Limits, seccomp_prog: bytes | None) -> Callable[[], None]:
    """Runs in the forked child before exec: rlimits, die with the parent, optional seccomp (process-only)."""
    libc = _LIBC
    prog = None
    if seccomp_prog is not None and libc is not None:
        from runtime.sandbox._seccomp import fprog

        prog = fprog(seccomp_prog)

    def setup() -> None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        for res, value in ((resource.RLIMIT_AS, limits.memory_bytes), (resource.RLIMIT_NOFILE, limits.max_open_files),
                           (resource.RLIMIT_FSIZE, limits.max_file_bytes), (resource.RLIMIT_NPROC, limits.max_processes)):
            if value is not None:
                with contextlib.suppress(ValueError, OSError):
                    resource.setrlimit(res, (value, value))
        if limits.cpu_s is not None:
            resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
        if libc is not None:
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if prog is not None:
                from runtime.sandbox._seccomp import load_in_child

                load_in_child(libc, prog)

    return setup


_FORK_LOCK = threading.RLock()
"""held while this process forks a child (`_spawn`) and by `no_fork` blocks (module function `no_fork`)"""


def no_fork() -> threading.RLock:
    """A block during which no thread of this process forks a child through this module: wrap a multi-threaded BLAS
    call made in a process that may start children from another thread at the same time.

    Why: OpenBLAS's own fork handler (``blas_thread_shutdown_``) waits for its thread pool, and while another thread
    is inside a threaded BLAS call that wait never ends - a stress test (two threads in ``a @ a`` on 200 x 200
    arrays, two threads starting children) hung for good in 6 of 15 runs under Python 3.11. The fork then never
    returns, and no timeout can end it. Bisection multiplies golden tensors in its own process
    (``bisect/_online.py``, ``bisect/_repair.py``) while another bisection in the same process may start its sandbox.
    Reentrant: a thread holding it may still start a child."""
    return _FORK_LOCK


_SPAWN_ATTEMPTS = 3
"""how many times `start_process` forks a child whose set-up before ``exec`` failed (`_spawn`)"""


class _Reported:
    """The set-up a forked child runs before ``exec`` (``preexec_fn``), writing what failed into a pipe.

    Why: when ``preexec_fn`` raises, ``subprocess`` reports only "Exception occurred in preexec_fn" (a
    ``SubprocessError``, not an ``OSError``), so the callers' handling of a child that cannot start did not catch it:
    on 5 Dec a verification under Python 3.13 became an internal error and left its pipes open, and what failed
    was lost. The child writes the exception into this pipe before it exits; both ends are close-on-exec, so a
    child that reaches ``exec`` writes nothing."""

    def __init__(self, setup: Callable[[], None]) -> None:
        self.setup = setup
        self.read_fd, self.write_fd = os.pipe()

    def __call__(self) -> None:
        try:
            self.setup()
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.write(self.write_fd, f"{type(exc).__name__}: {exc}".encode(errors="replace")[:400])
            raise

    def detail(self) -> str:
        """What the failed child wrote (call once, after the fork failed); closes the pipe."""
        os.set_blocking(self.read_fd, False)
        try:
            return os.read(self.read_fd, 400).decode(errors="replace") or "no detail"
        except OSError:
            return "no detail"
        finally:
            self.close()

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def _spawn(cmd: list[str], setup: Callable[[], None], **popen: object) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(cmd, preexec_fn=...)``, forked again when the child's set-up before ``exec`` failed.

    Such a child never ran the command, so trying again is safe; a transient failure (seen once in a full test run
    under Python 3.13, not reproduced in 1,200 forks of a stress test) then costs one more fork. After
    `_SPAWN_ATTEMPTS` failures it raises ``OSError`` with what the child reported - the error the callers already
    turn into "cannot start the sandbox process: ..." instead of a crash."""
    last = ""
    for attempt in range(1, _SPAWN_ATTEMPTS + 1):
        reported = _Reported(setup)
        try:
            with _FORK_LOCK:  # see `no_fork`
                proc = subprocess.Popen(cmd, preexec_fn=reported, **popen)  # type: ignore[call-overload]
        except subprocess.SubprocessError as exc:
            last = f"{exc} ({reported.detail()})"
            log.warning("sandbox: a child failed its set-up before exec (attempt %d of %d): %s", attempt,
                        _SPAWN_ATTEMPTS, last)
            continue
        except BaseException:
            reported.close()
            raise
        reported.close()
        return proc
    raise OSError(f"the child's set-up before exec failed {_SPAWN_ATTEMPTS} times: {last}")


# ------------------------------------------------------------------------------------------ readers


class _Reader(threading.Thread):
    """Drains one pipe: keeps the head up to ``cap`` bytes (or the tail, ``keep='tail'``); collects lines that start
    with ``marker`` as they stream by, so that flooding or truncating the stream later cannot erase them."""

    def __init__(self, fd: int, cap: int, keep: Literal["head", "tail"], marker: bytes = b"") -> None:
        super().__init__(daemon=True)
        self.fd, self.cap, self.keep, self.marker = fd, cap, keep, marker
        self.data = bytearray()
        self.overflow = False
        self.marked: list[str] = []
        self.eof = False

    def run(self) -> None:
        pending = b""
        try:
            while True:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    self.eof = True
                    break
                if self.keep == "head":
                    room = self.cap - len(self.data)
                    if room > 0:
                        self.data += chunk[:room]
                    if len(chunk) > room:
                        self.overflow = True
                else:
                    self.data += chunk
                    if len(self.data) > self.cap:
                        del self.data[: len(self.data) - self.cap]
                if self.marker and len(self.marked) < 200:
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    pending = pending[-4096:]
                    for ln in lines:
                        if ln.startswith(self.marker):
                            self.marked.append(ln[len(self.marker):].decode(errors="replace").strip()[:300])
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)


# ------------------------------------------------------------------------------------------ the runner


def run_process(
    argv: Sequence[str],
    *,
    work: Path,
    limits: Limits,
    profile: Literal["trusted", "untrusted", "vendor"],
    isolation: Isolation = "process-only",
    env_extra: Mapping[str, str] | None = None,
    stdin: bytes = b"",
    read_only: Sequence[str] = (),
    channel: bool = False,
    channel_cap: int = 1 << 30,
    output_cap: int = 64 * 1024,
    denial_marker: bytes = b"",
    pass_fds: Sequence[int] = (),
    hash_seed: int = 0,
) -> ProcResult:
    """Run ``argv`` as a confined child in ``work`` and wait until it (and everything it started) is gone.

    Args:
        argv: the command (``argv[0]`` an absolute path, normally ``sys.executable``).
        work: the child's working directory (must exist; inside Bubblewrap a private tmpfs at the same path,
            except for ``vendor``, whose work dir is the parent's, bound read-write).
        limits: resource limits.
        profile: ``trusted`` (golden) never gets Bubblewrap; ``untrusted`` gets ``isolation``; ``vendor`` (the
            real pypto compiler, which spawns its own compiler processes and writes its reports as files) gets
            Bubblewrap when ``isolation`` has it but never seccomp, and shares ``work`` with the parent.
        isolation: the level to use for ``untrusted`` and ``vendor`` (from :func:`isolation_level`).
        env_extra: variables added to the one allow-list (:func:`child_env`); only ``vendor`` may add any.
        stdin: bytes fed to the child's stdin (the request), then closed.
        read_only: extra host paths a Bubblewrap child may read (bound read-only at the same path).
        channel: hand the child a result pipe (its fd number replaces ``{channel_fd}`` in ``argv``); its bytes
            come back in ``ProcResult.channel``.
        channel_cap: bytes of the channel kept.
        output_cap: bytes of stdout (head) and stderr (tail) kept.
        denial_marker: stderr lines starting with it are collected as they stream (``ProcResult.denials``).
        pass_fds: further open fds the child inherits under the same numbers (shared memory, the pipes between
            the candidate and the device); the caller closes its copies when the child has started.
        hash_seed: the child's ``PYTHONHASHSEED`` (:func:`child_env`; a verified candidate's comes from the
            verification's secret seed, :func:`runtime.sandbox.env_policy.candidate_hash_seed`).

    Returns:
        The :class:`ProcResult`; the result channel is complete only when ``channel_eof`` (no writer left).

    Raises:
        OSError: the child could not be started.
    """
    return start_process(argv, work=work, limits=limits, profile=profile, isolation=isolation,
                         env_extra=env_extra, stdin=stdin, read_only=read_only, channel=channel,
                         channel_cap=channel_cap, output_cap=output_cap, denial_marker=denial_marker,
                         pass_fds=pass_fds, hash_seed=hash_seed).wait()


class Running:
    """A child started by :func:`start_process`; :meth:`wait` ends it (wall limit) and collects what it said."""

    def __init__(self, proc: subprocess.Popen, level: Isolation, limits: Limits, started: float,
                 readers: list[_Reader], ch_reader: _Reader | None, feeder: threading.Thread) -> None:
        self.proc, self.level, self.limits, self.started = proc, level, limits, started
        self.readers, self.ch_reader, self.feeder = readers, ch_reader, feeder
        self.result: ProcResult | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        return self.proc.poll()

    def kill(self) -> None:
        """Kill the child's whole process group now (the sandbox with it)."""
        _kill_group(self.proc.pid)

    def wait(self, timeout: float | None = None) -> ProcResult:
        """Wait for the child until its wall limit (or ``timeout`` when given), kill its group, collect.

        Idempotent: a second call returns the first result.
        """
        if self.result is not None:
            return self.result
        proc = self.proc
        remaining = self.limits.wall_s - (time.perf_counter() - self.started) if timeout is None else timeout
        timed_out = False
        try:
            try:
                proc.wait(timeout=max(0.0, remaining))
            except subprocess.TimeoutExpired:
                timed_out = True
        finally:
            _kill_group(proc.pid)  # the child's whole group; Bubblewrap then takes its PID namespace down with it
            proc.wait()
            with _LOCK:
                _LIVE_GROUPS.discard(proc.pid)
        # the sandbox is dead once every writer of the pipes is gone (EOF); a process-only grandchild that escaped
        # the group may still hold them: give it a moment, then stop listening
        ch_reader = self.ch_reader
        for r in [*self.readers, *([ch_reader] if ch_reader else [])]:
            r.join(timeout=5.0)
        self.feeder.join(timeout=1.0)
        self.result = ProcResult(
            returncode=proc.returncode, timed_out=timed_out, duration_s=time.perf_counter() - self.started,
            isolation=self.level, stdout=bytes(self.readers[0].data), stderr=bytes(self.readers[1].data),
            channel=(ch_reader.data if not ch_reader.is_alive() else bytes(ch_reader.data)) if ch_reader else b"",
            channel_overflow=bool(ch_reader and ch_reader.overflow),
            channel_eof=bool(ch_reader.eof) if ch_reader else True, denials=list(self.readers[1].marked),
            pid=proc.pid,
        )
        return self.result


def start_process(
    argv: Sequence[str],
    *,
    work: Path,
    limits: Limits,
    profile: Literal["trusted", "untrusted", "vendor"],
    isolation: Isolation = "process-only",
    env_extra: Mapping[str, str] | None = None,
    stdin: bytes = b"",
    read_only: Sequence[str] = (),
    channel: bool = False,
    channel_cap: int = 1 << 30,
    output_cap: int = 64 * 1024,
    denial_marker: bytes = b"",
    pass_fds: Sequence[int] = (),
    hash_seed: int = 0,
) -> Running:
    """Start ``argv`` like :func:`run_process` (same arguments) and return at once; :meth:`Running.wait` ends it.

    Why: a verification runs two children at the same time (the candidate and the device), each waiting for
    the other.
    """
    _install_handlers()
    level: Isolation = isolation if profile != "trusted" else "process-only"
    if profile == "vendor" and level == "bwrap+seccomp":
        level = "bwrap"
    if env_extra and profile != "vendor":
        raise ValueError("only the vendor profile adds to the environment allow-list")
    env = {**child_env(work, hash_seed=hash_seed), **(env_extra or {})}
    cmd = list(argv)
    inherit: list[int] = list(pass_fds)
    seccomp_prog: bytes | None = None
    close_after: list[int] = []
    if level.startswith("bwrap"):
        exe = bwrap_path()
        if exe is None:
            raise OSError("bwrap disappeared")
        bargs = [exe, *_bwrap_base_args(_ro_roots(read_only), str(work), share_work=profile == "vendor")]
        if level == "bwrap+seccomp":
            from runtime.sandbox._seccomp import seccomp_program

            bpf, _why = seccomp_program()
            if bpf is None:
                raise OSError("seccomp program unavailable")
            srd, swr = os.pipe()
            os.write(swr, bpf)
            os.close(swr)
            inherit.append(srd)
            close_after.append(srd)
            bargs += ["--seccomp", str(srd)]
        cmd = [*bargs, "--", inside_path(cmd[0]), *cmd[1:]]
    elif profile == "untrusted":
        from runtime.sandbox._seccomp import seccomp_program

        seccomp_prog, _why = seccomp_program()  # process-only still refuses fork & co. when libseccomp is here
    ch_rd = ch_wr = -1
    if channel:
        ch_rd, ch_wr = os.pipe()
        inherit.append(ch_wr)
        cmd = [a.replace("{channel_fd}", str(ch_wr)) for a in cmd]
    out_rd, out_wr = os.pipe()
    err_rd, err_wr = os.pipe()
    in_rd, in_wr = os.pipe()
    started = time.perf_counter()
    try:
        proc = _spawn(cmd, _preexec(limits, seccomp_prog), cwd=work, env=env, stdin=in_rd, stdout=out_wr,
                      stderr=err_wr, start_new_session=True, pass_fds=tuple(inherit), close_fds=True)
    except OSError:
        for fd in (out_rd, out_wr, err_rd, err_wr, in_rd, in_wr, ch_rd, ch_wr, *close_after):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        raise
    with _LOCK:
        _LIVE_GROUPS.add(proc.pid)
    for fd in (out_wr, err_wr, in_rd, ch_wr, *close_after):
        if fd >= 0:
            os.close(fd)
    readers = [_Reader(out_rd, output_cap, "head"), _Reader(err_rd, output_cap, "tail", denial_marker)]
    ch_reader = _Reader(ch_rd, channel_cap, "head") if channel else None
    for r in [*readers, *([ch_reader] if ch_reader else [])]:
        r.start()
    feeder = threading.Thread(target=_feed, args=(in_wr, stdin), daemon=True)
    feeder.start()
    return Running(proc, level, limits, started, readers, ch_reader, feeder)


def _feed(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view[: 1 << 16])
            view = view[n:]
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
