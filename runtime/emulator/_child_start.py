"""The start of a Python process a script runs under ``python -m runtime.emulator`` starts (its whole life is one
emulator session with the runner's options): loaded by the children's ``sitecustomize`` (:func:`start_child`) and by
the boot of a ``python -I``/``-E`` child (:func:`run_isolated_child`, see ``_device_host.isolated_argv``)."""

from __future__ import annotations

import atexit
import importlib
import json
import os
import sys
from typing import Any

from runtime.emulator import session
from runtime.emulator.__main__ import _run, options_from, setup, summary
from runtime.emulator._device_host import CHILD_ENV, restore_user_path

__all__ = ["run_isolated_child", "start_child"]

_SESSION: list[Any] = []
"""The session of a child process (kept referenced: collecting it would exit the session)."""


def start_child(config: dict[str, Any], *, rebuild_path: bool = True) -> None:
    """Make this Python process, started by a script under the runner, run under the emulator for its whole life
    with the runner's options (``config``): its ``sitecustomize`` calls this, and so does :func:`run_isolated_child`
    (``rebuild_path=False``: a ``python -I``/``-E`` child keeps the ``sys.path`` its flags gave it)."""
    restore_user_path(config, rebuild=rebuild_path)
    setup(config)
    _SESSION.append(session(options=options_from(config)))
    s = _SESSION[-1].__enter__()  # the child's whole life is one session
    if not config.get("quiet"):
        atexit.register(summary, s)  # its warnings and cost line on its stderr, as the runner prints its own
    hook = config.get("child_init")  # a tool observing the run (the gym import) records in the children too
    if hook:
        module, _, func = hook.partition(":")
        getattr(importlib.import_module(module), func)()


def run_isolated_child() -> None:
    """The boot of ``_device_host.isolated_argv``: ``sys.argv`` is ``["-c", <target>, <args>...]``; set the emulator up and run
    the target (a script, ``-m module`` or ``-c command``) with ``sys.argv``/``sys.path[0]`` as ``python`` sets them
    under these switches. Its exceptions reach the interpreter, as a plain ``python`` child's do."""
    rest = sys.argv[1:]
    if not sys.flags.safe_path and sys.path[:1] == [""]:
        sys.path.pop(0)  # the boot's own -c entry; the target's is put back below
    start_child(json.loads(os.environ[CHILD_ENV]), rebuild_path=False)
    if rest[0] in ("-m", "-c"):
        kind, what, args = rest[0], rest[1], rest[2:]
    elif rest[0][:2] in ("-m", "-c"):
        kind, what, args = rest[0][:2], rest[0][2:], rest[1:]
    else:
        kind, what, args = "script", os.path.abspath(rest[0]), rest[1:]
    sys.argv = [rest[0] if kind == "script" else what]
    _run(kind, what, args, path0=not sys.flags.safe_path)
