"""The sandbox that runs candidate (model-written) kernels, and the one subprocess runner of the project.

``run_candidate`` starts ``_runner.py`` confined by the operating system (Bubblewrap namespaces + seccomp where
available, see ``_proc``), sends it the request over stdin and reads back only framed arrays and per-call records
from a pipe, after the whole sandbox is dead. Nothing the child reports can change a verdict on its own: the parent
compares against golden tensors the child never saw. ``run_process`` is the same runner for trusted children
(the golden) and for the vendor compiler (``runtime.toolchain``), with the same environment allow-list
(``env_policy``).

The names are loaded lazily: the sandboxed runner imports ``runtime.sandbox._guard`` and must not drag
``subprocess`` (and with it ``_posixsubprocess``) into the candidate's process.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ISOLATION_LEVELS", "LAYERS", "CandidateRun", "Isolation", "Limits", "ProcResult", "RunOutput",
           "SandboxError", "SandboxPolicy", "emulator_files", "isolation_level", "no_fork", "private_dir",
           "run_candidate", "run_process"]

_WHERE = {"LAYERS": "_exec", "CandidateRun": "_exec", "RunOutput": "_exec", "SandboxError": "_exec",
          "SandboxPolicy": "_exec", "run_candidate": "_exec", "emulator_files": "_exec", "ISOLATION_LEVELS": "_proc", "Isolation": "_proc",
          "Limits": "_proc", "ProcResult": "_proc", "isolation_level": "_proc", "no_fork": "_proc",
          "private_dir": "_proc", "run_process": "_proc"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"runtime.sandbox.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'runtime.sandbox' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
