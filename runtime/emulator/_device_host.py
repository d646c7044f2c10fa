"""What a Python process on a device host has besides the PyPTO API, reproduced for ``python -m runtime.emulator``.

A gym script is written for a machine where the real ``pypto`` and ``torch_npu`` are installed. Three habits
of such a machine matter to unmodified scripts, so the script runner (and every Python process it starts)
reproduces them:

* ``import pypto`` has side effects: the real module imports torch first and configures logging
  (``logging.basicConfig(level=logging.DEBUG)`` in pypto 0.2.0's ``_controller``), so a test that reports
  ``[PRECISION_PASS]`` through ``logging.info`` prints it. :class:`PyptoFinder` serves the emulator's modules
  through the import system so that the first ``import pypto`` runs the same side effects.
* ``import torch`` loads ``torch_npu`` by itself (torch's device-backend autoload); see ``_torch_npu``.
* child processes inherit the user's ``PYTHONPATH`` semantics, and a Python child the script starts with an
  environment of its own (``env["PYTHONPATH"] = src``, or one built from scratch) still runs under the emulator
  (:func:`install_child_env_guard`). The runner must put its own folders on the
  children's ``PYTHONPATH`` (that is how they load the emulator), yet a script that builds a child's path as
  ``test_dir + ":" + os.environ.get("PYTHONPATH", "")`` relies on the empty entry (= the working directory)
  it gets when the variable was unset. :func:`export_child_env` records what the user had and what the
  runner added; :func:`restore_user_path`, run first in each child, rebuilds ``sys.path`` as plain Python
  would have built it from the user's value, then puts the runner's folders after everything else.

``runtime.emulator.install()`` (what the verifier's sandbox uses) does none of this: it only makes
``import pypto`` resolve to the emulator.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import importlib.metadata
import json
import logging
import os
import subprocess
import sys
import types
from collections.abc import Iterator, Mapping
from typing import Any

from runtime.emulator._module import MODULES, WHEEL_ALIASES
from runtime.emulator._module_specs import distributions_for, give_specs, spec_for
from runtime.emulator._torch_npu import install_autoload, install_finder

__all__ = ["CHILD_ENV", "PyptoFinder", "child_env", "export_child_env", "install_child_env_guard", "install_device_host",
           "interpreter_on_path", "isolated_argv", "python_flag", "restore_user_path"]

CHILD_ENV = "PTO_FORGE_EMULATOR_CHILD"
"""Environment variable carrying the runner's configuration (JSON) to the Python processes a script starts."""

_PKG = os.path.dirname(os.path.abspath(__file__))
CHILD_DIR = os.path.join(_PKG, "_child")
REPO = os.path.dirname(os.path.dirname(_PKG))


def _import_side_effects() -> None:
    """What the real ``import pypto`` does besides defining the API (pypto 0.2.0 ``__init__`` and ``_controller``)."""
    try:
        import torch  # noqa: F401 - the real module loads torch first (and with it torch_npu on a device host)
    except ImportError:
        pass
    logging.basicConfig(level=logging.DEBUG)


class PyptoFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``import pypto`` (and its submodules) -> the emulator's modules, with the real module's import side effects."""

    def __init__(self) -> None:
        self._imported = False

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname in MODULES or isinstance(WHEEL_ALIASES.get(fullname), types.ModuleType):
            # the wheel's module names too, so `importlib.reload(pypto.enum)` finds its module again (s49); located
            # at the module's wheel path, so its repr is the wheel's
            mod = MODULES[fullname] if fullname in MODULES else WHEEL_ALIASES[fullname]
            return spec_for(fullname, mod, self, fullname == "pypto")
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return MODULES[spec.name] if spec.name in MODULES else WHEEL_ALIASES[spec.name]

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == "pypto" and not self._imported:
            self._imported = True
            for name, mod in WHEEL_ALIASES.items():  # the wheel's submodules, loaded by its __init__
                sys.modules.setdefault(name, mod)
            # `find_spec("pypto.enum")` raised "pypto.enum.__spec__ is None" (s49)
            give_specs({name: sys.modules[name] for name in WHEEL_ALIASES})  # no loader: repr names none
            _import_side_effects()

    def find_distributions(self, context: Any = None) -> Iterator[importlib.metadata.Distribution]:
        """``importlib.metadata.version("pypto")`` is the emulated version, as the installed wheel answers on a
        device host (s49: ``PackageNotFoundError`` unless the real wheel was installed beside the emulator)."""
        return distributions_for(context, {"pypto": ("pypto", lambda: MODULES["pypto"].__dict__["__version__"])})


def install_device_host(*, torch_npu: bool = True) -> None:
    """Serve ``pypto`` through :class:`PyptoFinder` and, unless ``torch_npu`` is False, provide the torch_npu
    stand-in and its autoload (idempotent)."""
    for name in MODULES:  # a plain install() may have put them there: the import must go through the finder
        if sys.modules.get(name) is MODULES[name]:
            del sys.modules[name]
    if not any(isinstance(f, PyptoFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, PyptoFinder())
    if torch_npu:
        install_finder()
        install_autoload()
    install_child_env_guard()


# ------------------------------------------------------------------------------------------ child processes


def _entries(value: str, cwd: str) -> list[str]:
    """The ``sys.path`` entries Python makes of a ``PYTHONPATH`` value (an empty entry is the working directory)."""
    return [os.path.abspath(e) if e else cwd for e in value.split(os.pathsep)] if value else []


def interpreter_on_path() -> None:
    """Put this interpreter's folder first on ``PATH`` when ``python``/``python3`` there is another interpreter: a
    script that starts ``python3 child.py`` (``shell=True``, ``os.system``) on a device host gets the environment it
    was run with - there ``python test.py`` was typed with that environment active. Run as
    ``.venv/bin/python -m runtime.emulator`` without activating it, the child was the system's Python, without torch
    (s36 harness audit)."""
    import shutil

    bindir = os.path.dirname(sys.executable)
    if not bindir or not any(os.path.isfile(os.path.join(bindir, n)) for n in ("python", "python3")):
        return
    found = [shutil.which(n) for n in ("python", "python3")]
    if all(f is not None and os.path.dirname(os.path.abspath(f)) == bindir for f in found):
        return
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


def export_child_env(config: dict[str, Any], user: str | None) -> None:
    """Put the runner's folders and ``config`` in this process's environment for the Python processes it starts.

    ``user`` is the ``PYTHONPATH`` the user gave (None: unset); the children get it back through
    :func:`restore_user_path`.
    """
    os.environ.update(_child_vars(config, user))


def _child_vars(config: dict[str, Any], user: str | None) -> dict[str, str]:
    """``PYTHONPATH`` (the runner's folders, then ``user``) and the configuration a child reads (`CHILD_ENV`)."""
    inject = [CHILD_DIR, REPO]
    value = os.pathsep.join(inject) + (os.pathsep + user if user else "")
    return {"PYTHONPATH": value,
            CHILD_ENV: json.dumps({**config, "pythonpath": {"user": user, "env": value, "inject": inject}})}


def restore_user_path(config: dict[str, Any], *, rebuild: bool = True) -> None:
    """In a child: rebuild ``sys.path`` from the ``PYTHONPATH`` the script meant to give it, then re-export.

    The script composed the child's variable from what it saw (the runner's folders + the user's value); the
    runner's part is replaced by the user's value (``"t:" + runner`` with the user's unset becomes ``"t:"``,
    whose empty entry is the working directory, as it would have been without the runner). ``rebuild=False`` (a
    ``python -I``/``-E`` child, which ignored ``PYTHONPATH``): only the re-export.
    """
    pp = config.get("pythonpath") or {}
    inject = [str(p) for p in pp.get("inject") or []]
    actual = os.environ.get("PYTHONPATH", "")
    ours, user = str(pp.get("env") or ""), pp.get("user") or ""
    if ours and ours in actual:
        meant = actual.replace(ours, user, 1)
    else:  # the script rebuilt the variable itself: drop the runner's folders, keep the rest
        meant = os.pathsep.join(e for e in actual.split(os.pathsep) if e not in inject)
    if rebuild:
        _rebuild_path(actual, meant, inject)
    if inject and inject[-1] not in sys.path:
        sys.path.append(inject[-1])  # the repository (runtime.*) stays importable, after everything else
    export_child_env({k: v for k, v in config.items() if k != "pythonpath"}, meant or None)


def _rebuild_path(actual: str, meant: str, inject: list[str]) -> None:
    """Replace the ``sys.path`` entries Python made of ``actual`` by those it would have made of ``meant``."""
    cwd = os.getcwd()
    have, want = _entries(actual, cwd), _entries(meant, cwd)
    for i in range(len(sys.path)):
        if have and sys.path[i:i + len(have)] == have:
            sys.path[i:i + len(have)] = want
            return
    sys.path[:] = [p for p in sys.path if p not in inject]
    sys.path[1:1] = [w for w in want if w not in sys.path]


def child_env(env: Mapping[str, str]) -> dict[str, str] | None:
    """The environment a script gave a child, with the emulator put back when the script dropped it, else None (a
    Python child, or a grandchild, finds the emulator as it is).

    Gym tests re-run themselves per case with ``subprocess.run([sys.executable, __file__, case], env=env)``; an
    ``env`` built as ``env["PYTHONPATH"] = src`` or from scratch (``{"PATH": ..., "TILE_FWK_DEVICE_ID": "0"}``)
    loses the runner's folders and configuration, and the child ran as plain Python - no ``pypto``, no ``torch_npu``
    (s36 harness audit). The script's own ``PYTHONPATH`` stays the user's value (:func:`restore_user_path`)."""
    raw = os.environ.get(CHILD_ENV)
    if not raw:
        return None
    given = env.get("PYTHONPATH", "")
    entries = given.split(os.pathsep) if given else []
    if CHILD_ENV in env and CHILD_DIR in entries:
        return None
    config = {k: v for k, v in json.loads(raw).items() if k != "pythonpath"}
    user = os.pathsep.join(e for e in entries if e not in (CHILD_DIR, REPO)) if entries else None
    return {**env, **_child_vars(config, user)}


_PY_FLAGS = frozenset("bBdEIOqsSuvRP")
"""The interpreter's own one-letter switches (``python -u script.py``), besides ``-W arg`` and ``-X opt``."""


def python_flag(argv: list[str], i: int) -> int:
    """How many arguments from ``argv[i]`` are one of the interpreter's own switches (``-u``, ``-OO``, ``-uB``,
    ``-W ignore``, ``-Wignore``, ``-X faulthandler``), 0 when it is none. Why: a device host's habit is ``python -u
    test.py | tee log``; the runner refused ``-u`` as an unknown switch of its own (s25 gym sweep)."""
    a = argv[i]
    if a in ("-W", "-X"):
        return 2 if i + 1 < len(argv) else 0
    if a.startswith(("-W", "-X")) and not a.startswith("--"):
        return 1
    return 1 if len(a) > 1 and a[0] == "-" and a[1] != "-" and set(a[1:]) <= _PY_FLAGS else 0


_ISOLATING = frozenset("IE")
"""The interpreter switches that make it ignore ``PYTHONPATH`` (``-I`` isolated mode, ``-E``)."""


def _is_python(exe: Any) -> bool:
    if not isinstance(exe, str | bytes | os.PathLike):
        return False
    name = os.path.basename(os.fsdecode(exe))
    if name.startswith("python") and all(c.isdigit() or c == "." for c in name[len("python"):]):
        return True
    return os.path.realpath(os.fsdecode(exe)) == os.path.realpath(sys.executable)


def isolated_argv(argv: Any) -> list[str] | None:
    """The command line that runs a ``python -I``/``-E`` child under the emulator, else None (not such a child, or
    not started from the runner).

    Such a child ignores ``PYTHONPATH``, so it never loads the runner's ``sitecustomize``: on a device host it still
    imports the installed ``pypto``/``torch_npu``; under the runner it ran as plain Python (s37). It is started as
    ``python <its switches> -c <boot> <its target and arguments>``: the switches keep their meaning (``PYTHON*``
    variables ignored, no user site, no script folder on the path with ``-I``), and the boot
    (``_child_start.run_isolated_child``) sets the emulator up and runs the target as ``python`` would have."""
    if CHILD_ENV not in os.environ or not isinstance(argv, list | tuple) or not argv or not _is_python(argv[0]):
        return None
    args = [os.fsdecode(a) if isinstance(a, bytes | os.PathLike) else a for a in argv]
    if not all(isinstance(a, str) for a in args):
        return None
    i, isolating = 1, False
    while i < len(args) and (n := python_flag(args, i)):
        a = args[i]
        isolating |= a[:2] not in ("-W", "-X") and bool(_ISOLATING & set(a[1:]))
        i += n
    if not isolating or i >= len(args) or args[i] == "-" or args[i].startswith("--"):
        return None
    boot = (f"import sys; sys.path.insert(0, {REPO!r}); import runtime.emulator._child_start as c; "
            f"sys.path.remove({REPO!r}); c.run_isolated_child()")
    return [*args[:i], "-c", boot, *args[i:]]


_ENV_AT = 9
"""``env``'s position among ``subprocess.Popen``'s arguments after ``args``."""


def install_child_env_guard() -> None:
    """Give the children a script starts the emulator back where the script's own environment dropped it
    (:func:`child_env`): every ``subprocess.Popen`` (``run``, ``call``, ``check_output``, asyncio ...) given an
    ``env`` - also a shell, ``/usr/bin/env python3`` or a ``pytest`` launcher, whose Python grandchild inherits it
    (the variables are inert for anything else) - and ``os.environ["PYTHONPATH"] = ...`` in the script itself, which
    every later child (``os.system``, ``multiprocessing``) inherits: a spawned Pool whose workers lost the emulator
    restarted them forever (s36 harness audit, second round). Idempotent."""
    init = subprocess.Popen.__init__
    if getattr(init, "_pto_forge_guard", False):
        return

    @functools.wraps(init)
    def guarded(self: Any, args: Any, *a: Any, **kw: Any) -> None:
        if kw.get("env") is not None and (fixed := child_env(kw["env"])) is not None:
            kw["env"] = fixed
        elif len(a) > _ENV_AT and a[_ENV_AT] is not None and (fixed := child_env(a[_ENV_AT])) is not None:
            a = (*a[:_ENV_AT], fixed, *a[_ENV_AT + 1:])
        init(self, isolated_argv(args) or args, *a, **kw)

    guarded._pto_forge_guard = True  # type: ignore[attr-defined]
    subprocess.Popen.__init__ = guarded  # type: ignore[method-assign]
    environ = type(os.environ)
    setitem = environ.__setitem__

    def guarded_set(self: Any, key: str, value: str) -> None:
        # the script's PYTHONPATH becomes the user's value behind the runner's folders (as the runner exported it at
        # start), so that children started later still load the emulator
        if self is os.environ and key == "PYTHONPATH" and isinstance(value, str) \
                and (fixed := child_env({**os.environ, "PYTHONPATH": value})) is not None:
            setitem(self, CHILD_ENV, fixed[CHILD_ENV])
            value = fixed["PYTHONPATH"]
        setitem(self, key, value)

    environ.__setitem__ = guarded_set  # type: ignore[method-assign]
    _guard_exec()


def _guard_exec() -> None:
    """``os.execv``/``os.execve``/``os.posix_spawn[p]`` - and with them ``os.execl*``/``execvp*`` and ``os.spawn*``,
    which call them - get the same repairs as ``subprocess.Popen``: the emulator put back in an environment of the
    script's own (:func:`child_env`) and a ``python -I``/``-E`` command line (:func:`isolated_argv`). Before (s37)
    such a child ran as plain Python."""
    execv, execve = os.execv, os.execve

    def guarded_execv(path: Any, argv: Any) -> None:
        execv(path, isolated_argv(argv) or argv)

    def guarded_execve(path: Any, argv: Any, env: Any) -> None:
        execve(path, isolated_argv(argv) or argv, child_env(env) or env)

    os.execv, os.execve = guarded_execv, guarded_execve  # type: ignore[assignment]
    for name in ("posix_spawn", "posix_spawnp"):
        spawn = getattr(os, name, None)
        if spawn is not None:
            def guarded_spawn(path: Any, argv: Any, env: Any, *a: Any, _spawn: Any = spawn, **kw: Any) -> int:
                return _spawn(path, isolated_argv(argv) or argv, child_env(env) or env, *a, **kw)

            setattr(os, name, guarded_spawn)
