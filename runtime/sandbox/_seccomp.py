"""The seccomp filter of the candidate sandbox, built by libseccomp (through ``pyseccomp``) in the trusted parent.

Why a library: a hand-written BPF program is easy to get subtly wrong (architecture checks, x32 aliases, argument
comparisons on 64-bit values). libseccomp is the maintained reference implementation that systemd, Docker and
Bubblewrap's own tooling use; ``pyseccomp`` is a thin ctypes binding to it, API-compatible with libseccomp's own
Python bindings (which are not published on PyPI and whose Debian build targets the system interpreter only).

The parent builds the filter once and exports it as a BPF program (bytes). Bubblewrap loads it with
``--seccomp FD`` right before it executes the runner; in ``process-only`` mode the child loads the same bytes
with ``prctl(PR_SET_SECCOMP)`` before ``exec``. Nothing here runs candidate code.

Policy: default allow, and refuse (``EPERM``) what a numerical kernel never needs and an escape always does:
process creation (``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``; ``clone3`` answers ``ENOSYS`` so the C
library falls back to ``clone``), ``ptrace`` and cross-process memory access, mounts, namespaces, kernel keyrings,
BPF, perf events, ``userfaultfd``, module loading, ``reboot``/``kexec``, and sockets of any family but ``AF_UNIX``.
System calls of a foreign architecture kill the process (libseccomp's default for a bad architecture).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import os
import tempfile
from typing import Any

__all__ = ["fprog", "load_in_child", "seccomp_program"]

log = logging.getLogger(__name__)

_CLONE_THREAD = 0x00010000
_AF_UNIX = 1
_DENIED = ("fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "kexec_file_load",
           "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "keyctl", "add_key", "request_key", "bpf",
           "perf_event_open", "userfaultfd", "init_module", "finit_module", "delete_module", "reboot", "swapon",
           "swapoff", "syslog", "acct", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "fanotify_init",
           "move_mount", "open_tree", "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr")
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.lru_cache(maxsize=1)
def seccomp_program() -> tuple[bytes | None, str]:
    """The BPF program (bytes) of the sandbox filter, or ``(None, reason)`` when libseccomp is not available."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # OSError: the binding loads libseccomp.so at import
        return None, f"seccomp unavailable (pyseccomp/libseccomp: {exc})"
    try:
        filt = sc.SyscallFilter(defaction=sc.ALLOW)
        deny = sc.ERRNO(errno.EPERM)
        for name in _DENIED:
            try:
                filt.add_rule(deny, name)
            except (OSError, ValueError, RuntimeError):  # a call this kernel/architecture does not have
                continue
        filt.add_rule(deny, "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        filt.add_rule(deny, "socket", sc.Arg(0, sc.NE, _AF_UNIX))
        with tempfile.TemporaryFile() as fh:
            filt.export_bpf(fh)
            fh.seek(0)
            data = fh.read()
    except Exception as exc:  # noqa: BLE001 - any failure of the binding means "no seccomp layer", said plainly
        return None, f"seccomp filter could not be built: {type(exc).__name__}: {exc}"
    if not data or len(data) % 8:
        return None, "seccomp filter export gave no program"
    return data, ""


def fprog(bpf: bytes) -> Any:
    """A ``struct sock_fprog`` for ``bpf`` (built in the parent, so the forked child allocates nothing)."""
    buf = ctypes.create_string_buffer(bpf, len(bpf))
    prog = _SockFprog(len(bpf) // 8, ctypes.cast(buf, ctypes.c_void_p))
    prog._keep = buf  # type: ignore[attr-defined] - the buffer must live as long as the struct
    return prog


def load_in_child(libc: Any, prog: Any) -> None:
    """Install ``prog`` in the current (forked, not yet exec'd) process; raises OSError when the kernel refuses."""
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
