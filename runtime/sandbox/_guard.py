"""In-process guards installed in the sandbox child before any candidate code is imported.

Two layers, both reported in the verify report:

* ``socket_guard``: ``socket.socket``/``create_connection``/``getaddrinfo`` raise, so a candidate cannot open
  a connection even where no network namespace is available;
* ``audit_hook``: a ``sys.addaudithook`` policy (hooks cannot be removed once added) that denies sockets,
  process creation, signals, ctypes, writes outside the work directory, and reads or directory listings
  outside an allow-list (the Python installation, the emulator, the work directory). This is what keeps
  golden.py, SPEC.md and the verifier's code out of the candidate's reach.

A third guard, ``codegen_guard``, closes a way to run text lint never read: ``dataclasses`` builds its methods as
source text from the field names and ``exec()``s it, so a field "name" that is code (an ``__annotations__`` key
set by hand) ran in the candidate's process (red team s20). It refuses such classes.

Every denial is written immediately to stderr as one ``SANDBOX-DENIED <event> <detail>`` line (the parent
collects them) and raised as ``PermissionError`` in the candidate.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterable

__all__ = ["DENIED_MARKER", "install_audit_hook", "install_codegen_audit", "install_codegen_guard",
           "install_socket_guard", "install_unraisable_guard"]

DENIED_MARKER = "SANDBOX-DENIED"

_ALWAYS_DENIED = frozenset({
    "socket.__new__", "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.gethostbyname",
    "socket.gethostbyaddr", "socket.sendto", "socket.sendmsg",
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.startfile", "pty.spawn", "os.kill", "os.killpg", "signal.pthread_kill",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function", "ctypes.cdata", "ctypes.string_at",
    "ctypes.wstring_at", "ctypes.addressof", "sys.addaudithook", "sys.setprofile", "sys.settrace",
    "webbrowser.open", "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect",
    "os.chdir", "os.setxattr", "os.removexattr", "resource.setrlimit", "resource.prlimit",
    # the hook's own state must stay out of reach (class 3 of the red-team corpus: find it with gc, switch it off)
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
})
_DENIED_IMPORTS = frozenset({"_posixsubprocess", "subprocess", "multiprocessing", "gc", "pty", "_socket", "socket",
                             "ctypes", "_ctypes", "mmap", "resource", "signal", "_signal"})
"""Modules whose first import is refused (only the first import of a module raises an audit event; those the
runner or numpy already loaded are covered by the OS layer instead): ``_posixsubprocess.fork_exec`` starts
processes without an audit event."""
_PATH_WRITE_EVENTS = frozenset({
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.link", "os.symlink",
    "os.truncate", "os.utime", "shutil.rmtree", "shutil.move", "shutil.copyfile", "shutil.copytree",
})
_PATH_READ_EVENTS = frozenset({"os.listdir", "os.scandir", "glob.glob", "os.walk", "os.fwalk"})
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


class _NoNetwork(OSError):
    pass


def install_socket_guard() -> None:
    """Make every way of opening a network connection raise (the ``socket_guard`` layer)."""

    def _refuse(*_a: object, **_k: object) -> None:
        try:
            os.write(2, f"{DENIED_MARKER} socket {_a[:1]!r}\n".encode(errors="replace"))
        except OSError:
            pass
        raise _NoNetwork("network access is disabled in the verification sandbox")

    class _GuardedSocket(socket.socket):
        def __init__(self, *a: object, **k: object) -> None:
            _refuse()

    socket.socket = _GuardedSocket  # type: ignore[misc]
    for name in ("create_connection", "create_server", "getaddrinfo", "gethostbyname", "gethostbyaddr",
                 "socketpair", "fromfd"):
        if hasattr(socket, name):
            setattr(socket, name, _refuse)


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def install_audit_hook(read_roots: list[str], write_root: str, record: list[str] | None = None) -> None:
    """Install the deny-by-default file/process/network policy (the ``audit_hook`` layer).

    Args:
        read_roots: directories and files the candidate may read (realpaths).
        write_root: the only directory it may create, write or delete files in.
        record: denials are also appended here (the runner sends them with each case record), so closing or
            truncating stderr does not erase them.
    """
    read = tuple(sorted({os.path.realpath(r) for r in read_roots} | {os.path.realpath(write_root)}))
    write = (os.path.realpath(write_root),)
    busy: dict[int, bool] = {}  # re-entrancy guard per thread; a closure cell, not a discoverable object
    try:  # a private copy of stderr: closing fd 2 does not silence the log
        import fcntl

        err_fd = fcntl.fcntl(2, fcntl.F_DUPFD_CLOEXEC, 512)
    except (ImportError, OSError):
        err_fd = 2

    def deny(event: str, detail: str) -> None:
        line = f"{event} {detail}"
        if record is not None and len(record) < 200:
            record.append(line[:300])
        for fd in {err_fd, 2}:
            try:
                os.write(fd, f"{DENIED_MARKER} {line}\n".encode(errors="replace"))
                break
            except OSError:
                continue
        raise PermissionError(f"sandbox: {event} {detail} is not allowed during verification")

    def real(p: object) -> str | None:
        if p is None or isinstance(p, int):
            return None
        try:
            return os.path.realpath(os.fsdecode(p))  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - a candidate's __fspath__ may raise anything: still a denial, recorded
            return "<unresolvable>"

    def shown(args: tuple) -> str:
        try:
            return repr(args[:1])[:120]
        except Exception:  # noqa: BLE001 - a candidate's __repr__ must not turn a denial into its own exception
            return "(<unprintable>)"

    def hook(event: str, args: tuple) -> None:
        me = threading.get_ident()
        if busy.get(me):
            return
        busy[me] = True
        try:
            if event in _ALWAYS_DENIED or event.startswith(("socket.", "subprocess.")):
                deny(event, shown(args))
            elif event == "import" and args and args[0] in _DENIED_IMPORTS:
                deny("import", str(args[0]))
            elif event == "os.truncate" and args and isinstance(args[0], int) and args[0] <= 2:
                deny(event, f"fd {args[0]}")
            elif event == "open":
                path, mode, flags = (tuple(args) + (None, None, None))[:3]
                p = real(path)
                if p is None or p in ("/dev/null", "/dev/urandom", "/dev/random"):
                    return
                writing = bool(mode and any(c in str(mode) for c in "wax+")) or bool(
                    isinstance(flags, int) and flags & _WRITE_FLAGS
                )
                if writing and not _under(p, write):
                    deny("open-write", p)
                if not writing and not _under(p, read):
                    deny("open-read", p)
            elif event in _PATH_WRITE_EVENTS:
                for a in args[:2]:
                    p = real(a) if isinstance(a, str | bytes | os.PathLike) else None
                    if p is not None and not _under(p, write):
                        deny(event, p)
            elif event in _PATH_READ_EVENTS:
                p = real(args[0]) if args and isinstance(args[0], str | bytes | os.PathLike) else None
                if p is not None and not _under(p, read):
                    deny(event, p)
        finally:
            busy[me] = False

    sys.addaudithook(hook)


def _dataclass_problem(cls: object) -> str | None:
    """Why ``dataclasses`` must not generate code for ``cls`` (None: every name it would paste is an identifier).

    Read the way ``dataclasses._process_class`` reads it (the class's own ``__annotations__``, the
    ``__dataclass_fields__`` of its bases), and only through exact builtin types: a metaclass, a dict subclass or a
    str subclass could show this check other names than the code generator sees."""
    import abc
    import dataclasses
    import keyword

    def ident(name: object) -> bool:
        return type(name) is str and name.isidentifier() and not keyword.iskeyword(name)

    if type(cls) not in (type, abc.ABCMeta):
        return f"a class with metaclass {type.__dict__['__name__'].__get__(type(cls), type)[:60]}"
    mro = type.__dict__["__mro__"].__get__(cls, type)
    for klass in mro:
        own = type.__dict__["__dict__"].__get__(klass, type)
        if klass is cls:
            ann = own.get("__annotations__", {})
            if type(ann) is not dict:
                return "annotations that are not a plain dict"
            bad = next((k for k in ann if not ident(k)), None)
            if bad is not None:
                return f"a field named {str.__repr__(bad)[:80] if type(bad) is str else '<not a str>'}"
            continue
        fields = own.get("__dataclass_fields__")
        if fields is None:
            continue
        if type(klass) not in (type, abc.ABCMeta) or type(fields) is not dict:
            return "a base class with hand-made dataclass fields"
        for f in fields.values():
            if type(f) is not dataclasses.Field or not ident(f.name):
                return "a base class with hand-made dataclass fields"
    return None


def install_codegen_guard(record: list[str] | None = None) -> None:
    """Refuse ``dataclasses.dataclass`` on a class whose field names are not identifiers (the ``codegen_guard``).

    Why (red team s20, ``tests/redteam/attacks/dataclass_field_exec.py``): ``dataclasses`` pastes field names into
    the source of ``__init__``/``__eq__``/``__repr__`` and ``exec()``s it. A class body that writes
    ``__annotations__["__class__,)!=()and(__import__('os').getpid()<64)#"] = int`` made ``__eq__`` run that
    expression: code lint never saw, which told the sandbox's PID namespace from a user's process. The refusal is a
    denial like the audit hook's (recorded, ``FAIL_CHEAT``)."""
    import dataclasses

    original = dataclasses._process_class  # type: ignore[attr-defined]
    here = os.path.realpath(dataclasses.__file__)
    libraries = tuple(sorted({os.path.join(os.path.realpath(p), "") for p in (
        sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *sys.path) if p and (
        "site-packages" in p or "dist-packages" in p or os.path.realpath(p).startswith(
            os.path.realpath(sys.base_prefix)))}))

    def from_a_library() -> bool:
        """Whether the code that asked for the dataclass is a library's (torch defines dataclasses with its own
        metaclass when the candidate imports it): the first frame outside ``dataclasses`` lives in the Python
        installation or site-packages. The candidate's file and the work directory never do."""
        f = sys._getframe(2)
        while f is not None and os.path.realpath(f.f_code.co_filename) == here:
            f = f.f_back
        if f is None:
            return False
        return os.path.realpath(f.f_code.co_filename).startswith(libraries)

    def checked(cls: object, *args: object, **kwargs: object) -> object:
        problem = None if from_a_library() else _dataclass_problem(cls)
        if problem is not None:
            _denial(record, f"dataclass-codegen {problem}")
            raise PermissionError(f"sandbox: dataclass code generation for {problem} is not allowed")
        return original(cls, *args, **kwargs)

    dataclasses._process_class = checked  # type: ignore[attr-defined]


def _denial(record: list[str] | None, entry: str) -> None:
    """A denial: into the record the runner sends with each case (at most 200) and onto stderr with the marker."""
    if record is not None and len(record) < 200:
        record.append(entry[:300])
    try:
        os.write(2, f"{DENIED_MARKER} {entry}\n".encode(errors="replace"))
    except OSError:
        pass


def install_unraisable_guard(candidate: str, record: list[str] | None = None) -> None:
    """Record as a denial every exception Python drops at collection time in the candidate's own code.

    Why (red team s30): a generator's ``finally`` (and a coroutine's) runs when the object is collected, and what it
    raises is printed and dropped (``sys.unraisablehook``), as in ``__del__``. A 4.5 GiB ``np.empty`` there failed
    only under the sandbox's address-space limit, so setting a flag before it told the sandbox from a user's host.
    Lint refuses generators, coroutines and ``__del__`` in kernel files; this is the second line, for any other form
    that reaches the hook. Only frames of the candidate's file count: a library's own dropped exception is not the
    candidate's probe. The record names the exception type and line, never a path (it reaches the reports)."""
    here = os.path.realpath(candidate)
    previous = sys.unraisablehook

    def hook(unraisable: object) -> None:
        tb = getattr(unraisable, "exc_traceback", None)
        line = None
        while tb is not None:
            if os.path.realpath(tb.tb_frame.f_code.co_filename) == here:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is not None:
            kind = getattr(getattr(unraisable, "exc_type", None), "__name__", "an exception")
            entry = (f"swallowed-exception {kind} raised at line {line} of the candidate was dropped at collection "
                     "time (a finalizer's exception tells whether code raises here)")
            _denial(record, entry)
        previous(unraisable)  # type: ignore[arg-type]

    sys.unraisablehook = hook


def install_codegen_audit(candidate: str, record: list[str] | None = None) -> None:
    """Record as a denial every ``eval``/``exec``/``compile`` called directly from the candidate's own code.

    Why (red teams s30, four rounds): lint refuses those builtins by name, yet each round found another way to reach
    them through an allowed module (a ``match`` pattern on ``__globals__``, ``functools.update_wrapper`` copying the
    builtins' namespace, numpy's and torch's re-exports of ``operator.attrgetter`` and ``re.enum.bltns``), and the
    code so run told the sandbox from a user's process. No kernel calls them: libraries do (``dataclasses``,
    ``collections.namedtuple``, the emulator's tracer), from their own frames, so only a call whose caller is a frame
    of the candidate's file counts - the frame right above the hook's, since the builtins have none. The record says
    the event and line, never a path."""
    here = os.path.realpath(candidate)
    seen: dict[str, bool] = {}

    def is_candidate(filename: str) -> bool:
        hit = seen.get(filename)
        if hit is None:
            hit = seen[filename] = os.path.realpath(filename) == here
        return hit

    def hook(event: str, args: tuple) -> None:
        if event not in ("exec", "compile"):
            return
        frame = sys._getframe(1)
        if frame is None or not is_candidate(frame.f_code.co_filename):
            return
        entry = f"code-generation `{event}` called from line {frame.f_lineno} of the candidate (code no rule read)"
        _denial(record, entry)
        raise PermissionError("sandbox: eval/exec/compile from the kernel file is not allowed")

    sys.addaudithook(hook)
