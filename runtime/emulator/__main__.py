"""``python -m runtime.emulator [options] script.py | -m module | -c command [args]``: ``python`` on a device host.

RunMode.SIM and RunMode.NPU both run on the emulator. What follows the options runs as plain ``python`` would
run it: a script (``__file__`` absolute, ``__name__ == "__main__"``, its folder first on ``sys.path``, argv as
typed), ``-m module`` (pytest included: argv[0] is the module's file, the working directory first on
``sys.path``) or ``-c command`` (argv[0] ``-c``). On top of that, as on a machine with the real toolchain
(``_device_host``):

* ``import pypto`` is the emulator, following ``--compat`` (default ``head``, what gym code is written for),
  with the real module's import side effects (torch loaded first, logging configured at DEBUG);
* ``import torch`` loads a ``torch_npu`` stand-in that maps ``npu``/``npu:N``/device ``N`` to the CPU
  (see ``_torch_npu``);
* child Python processes the script starts (``subprocess.run([sys.executable, ...])``, ``python3 ...``) run
  under the emulator too, with the same options (a ``sitecustomize`` on their ``PYTHONPATH``) and the
  ``PYTHONPATH`` the script gave them (an empty entry still means the working directory) - also when the script
  gives them an environment of its own; ``python``/``python3`` on the ``PATH`` is this interpreter (as in the
  environment a device-host user runs ``python test.py`` from);
* errors are one line at the user's own source line (the kernel line for kernel errors, the innermost frame
  of the script's code for anything else), never a location inside torch, numpy or the emulator.

Exit codes: 0 ok, 1 kernel error, 2 usage error, 3 the script raised another exception (or exited non-zero:
then its own status).
"""

from __future__ import annotations

import argparse
import builtins
import logging
import os
import runpy
import sys
import sysconfig
import traceback
import types
import zipfile
from collections.abc import Callable
from typing import Any

from runtime.emulator import _gcpause
from runtime.emulator._device_host import (
    _PY_FLAGS,
    CHILD_ENV,
    export_child_env,
    install_device_host,
    interpreter_on_path,
    python_flag,
)
from runtime.emulator._errors import EmulatorError, raise_as_python_kinds
from runtime.emulator._session import Options, session
from runtime.emulator.device._pages import no_hugepage_advice
from runtime.targets import DEFAULT_TARGET, NPUARCHS, TARGETS

__all__ = ["CHILD_ENV", "main", "options_from", "setup", "summary"]

_PKG = os.path.dirname(os.path.abspath(__file__))
_LIBRARY_DIRS = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")} | {_PKG}
    if p
)
SOURCE_HOOK: Callable[[str, bytes], Any] | None = None
"""Tools that observe a run (the gym import) compile the script with this instead of ``compile`` (path, source ->
code object); None: plain ``compile``."""
CHILD_INIT: str | None = None
"""``"module:function"`` the Python processes the script starts call after their set-up (the same tools)."""
_VALUED = {"--compat", "--out-of-bounds", "--poison-check", "--npuarch", "--site-path"}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m runtime.emulator",
        usage="python -m runtime.emulator [options] (script.py | -m module | -c command) [args ...]",
        epilog="The interpreter's own switches (-u, -B, -O, -W arg, -X opt ...) may come before the script too: "
               "the emulator then runs under `python <switches>`.",
        description="Run an unmodified PyPTO script, module (e.g. -m pytest) or command, and the Python processes "
                    "it starts, on the CPU emulator, as `python` runs it on a device host. The switches below "
                    "choose the toolchain version and how strict the emulator is (docs/emulator-fidelity.md).",
    )
    p.add_argument("--compat", choices=TARGETS, default=DEFAULT_TARGET,
                   help=f"PyPTO version whose semantics to follow (default {DEFAULT_TARGET}, what gym code is "
                        "written for): head = symbolic reshape dims, multi-axis broadcast, builtin min/max on "
                        "symbols, HEAD-only runtime options; 0.2.0 = the runnable wheel, which rejects them")
    p.add_argument("--out-of-bounds", choices=("raise", "clip"), default="raise",
                   help="a view/assemble window leaving its tensor: raise EMU_VIEW_OOB (default) or clip it "
                        "like the 0.2.0 CPU oracle and warn")
    p.add_argument("--poison-check", choices=("final", "iteration", "off"), default="final",
                   help="NaN-poison check of uninitialized/padding data written to kernel arguments: on the "
                        "final argument contents (default), on every write-back in every loop iteration "
                        "(strictest), or off")
    p.add_argument("--npuarch", default="DAV_2201", choices=NPUARCHS, help="value of pypto.platform.npuarch (default DAV_2201 = A2/A3; "
                   "torch.npu.get_soc_version() follows it)")
    p.add_argument("--record", action="store_true", help="keep every traced op output per iteration (bisection)")
    p.add_argument("--no-torch-npu", action="store_true",
                   help="do not provide the torch_npu stand-in (a real torch_npu, if installed, is used)")
    p.add_argument("--quiet", action="store_true", help="no warning lines and no cost summary on stderr")
    p.add_argument("--site-path", action="append", default=[], metavar="DIR",
                   help="a directory importable as if installed (`pip install -e .` of a gym checkout: its src/), "
                        "in this process and the ones it starts, without touching PYTHONPATH (repeatable)")
    p.add_argument("-m", dest="module", metavar="module", help="run a library module as a script (python -m)")
    p.add_argument("-c", dest="command", metavar="command", help="run a program passed as a string (python -c)")
    p.add_argument("script", nargs="?", help="the Python script to run, then its arguments")
    return p


def _unbundle(argv: list[str]) -> list[str]:
    """The arguments with a bundle of the interpreter's one-letter switches that ends in one taking a value split
    in two, as python's own option parser reads it: ``-um pytest`` is ``-u -m pytest``, ``-Bc "..."`` is ``-B -c
    "..."``, ``-uWerror`` is ``-u -Werror`` (s46: ``-um pytest`` was taken as an unknown switch of the runner's)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--" or not a.startswith("-") or a == "-" or a in ("-m", "-c"):
            return out + argv[i:]  # the target and what follows it are not the interpreter's
        if a.startswith("--"):
            out.append(a)
            if a in _VALUED and i + 1 < len(argv):
                out.append(argv[i + 1])
                i += 1
        elif a in ("-W", "-X"):
            out.extend(argv[i:i + 2])
            i += 1
        else:
            k = 1
            while k < len(a) and a[k] in _PY_FLAGS:
                k += 1
            if 1 < k < len(a) and a[k] in "mcWX":
                out += ["-" + a[1:k], "-" + a[k:]]
                if a[k] in "mc":
                    return out + argv[i + 1:]
            else:
                out.append(a)
        i += 1
    return out


def split_python_flags(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the interpreter's switches, the rest) of the arguments before the script / ``-m`` / ``-c``."""
    argv = _unbundle(argv)
    taken: list[int] = []
    _split(argv, taken)
    at = set(taken)
    return [argv[j] for j in taken], [a for j, a in enumerate(argv) if j not in at]


def _split(argv: list[str], python_flags: list[int] | None = None) -> tuple[list[str], tuple[str, str] | None,
                                                                           list[str]]:
    """(emulator options, ("script"|"-m"|"-c", what) or None, the target's arguments): what follows the first
    script / ``-m module`` / ``-c command`` belongs to it, as with ``python``. With ``python_flags``, the positions of
    the interpreter's own switches (`python_flag`) are appended to it instead of being taken as options."""
    opts: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-m", "-c"):
            if i + 1 >= len(argv):
                return opts + [a], None, []
            return opts, (a, argv[i + 1]), argv[i + 2:]
        if a.startswith(("-m", "-c")) and not a.startswith("--"):  # -mpytest, -cprint(1)
            return opts, (a[:2], a[2:]), argv[i + 1:]
        if a == "--":
            return (opts, ("script", argv[i + 1]), argv[i + 2:]) if i + 1 < len(argv) else (opts, None, [])
        if not a.startswith("-") or a == "-":
            return opts, ("script", a), argv[i + 1:]
        if python_flags is not None and (n := python_flag(argv, i)):
            python_flags.extend(range(i, i + n))
            i += n
            continue
        opts.append(a)
        if a in _VALUED and i + 1 < len(argv):
            opts.append(argv[i + 1])
            i += 1
        i += 1
    return opts, None, []


def options_from(config: dict[str, Any]) -> Options:
    """The emulator Options for a CLI/child configuration (keys as produced by :func:`_config`)."""
    kw: dict[str, Any] = {"compat": config.get("compat", DEFAULT_TARGET), "record": bool(config.get("record", False)),
                          "out_of_bounds": config.get("out_of_bounds", "raise"),
                          "npuarch": config.get("npuarch", "DAV_2201")}
    poison = config.get("poison_check", "final")
    kw["check_poison"] = poison != "off"
    if poison != "off":
        kw["poison_check"] = poison
    return Options(**kw)


def _config(ns: argparse.Namespace) -> dict[str, Any]:
    return {"compat": ns.compat, "record": ns.record, "out_of_bounds": ns.out_of_bounds,
            "poison_check": ns.poison_check, "npuarch": ns.npuarch, "torch_npu": not ns.no_torch_npu,
            "quiet": ns.quiet, "site_path": [os.path.abspath(d) for d in ns.site_path], "child_init": CHILD_INIT}


def _is_library(filename: str) -> bool:
    if filename.startswith("<"):
        return True
    real = os.path.realpath(filename)
    return real.startswith(_LIBRARY_DIRS)


def user_frame(tb: Any) -> tuple[str, int] | None:
    """The innermost traceback frame in the user's own code (not stdlib, site-packages or the emulator)."""
    frames = [f for f in traceback.extract_tb(tb) if not _is_library(f.filename)]
    if not frames:
        return None
    return frames[-1].filename, frames[-1].lineno or 0


def setup(config: dict[str, Any]) -> None:
    """Make this process a device host: ``pypto`` is the emulator (with the real module's import side effects),
    and unless disabled, ``torch`` loads the torch_npu stand-in."""
    logging.getLogger("runtime").setLevel(logging.INFO)  # `import pypto` sets DEBUG on the root logger
    no_hugepage_advice()  # a process the emulator owns: no THP compaction stalls on fresh tiles (`device._pages`)
    _gcpause.freeze_at_first_call()  # ... and no collection of its imports' objects in the first kernel call
    install_device_host(torch_npu=config.get("torch_npu", True))
    raise_as_python_kinds()  # a kernel error is the RuntimeError / ValueError ... the real pypto raises (s39)
    for d in config.get("site_path") or []:  # where site-packages' editable-install entries go: after the rest
        if d not in sys.path:
            sys.path.append(d)


def _fresh_main(filename: str) -> types.ModuleType:
    main_mod = types.ModuleType("__main__")
    main_mod.__dict__.update({"__file__": filename, "__builtins__": builtins, "__cached__": None,
                              "__loader__": None, "__spec__": None, "__package__": None})
    if filename == "<string>":
        del main_mod.__dict__["__file__"]
    return main_mod


def _exec_main(code: Any, filename: str) -> None:
    """Execute ``code`` as ``__main__`` the way ``python script.py`` / ``python -c`` do (``runpy.run_path`` would
    rewrite ``sys.argv[0]``; plain python leaves it as typed and makes only ``__file__`` absolute)."""
    main_mod = _fresh_main(filename)
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main_mod
    try:
        exec(code, main_mod.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _run(kind: str, what: str, args: list[str], path0: bool = True) -> None:
    """Run the target with ``sys.argv``/``sys.path[0]`` as python sets them (``what``: an absolute script path;
    ``path0=False``: no first entry, as under ``python -P``/``-I``)."""
    if kind == "script" and what == "-":  # `python - < test.py`: the program on stdin, argv[0] "-", path0 ""
        sys.argv = ["-", *args]
        if path0:
            sys.path.insert(0, "")
        _exec_main(compile(sys.stdin.read(), "<stdin>", "exec", dont_inherit=True), "<stdin>")
    elif kind == "script" and _has_main(what):  # `python pkgdir` / `python app.zip`: its __main__.py, as python
        sys.argv = [sys.argv[0], *args]  # runs it (argv[0] as typed, the folder or archive first on sys.path)
        if path0:
            sys.path.insert(0, what)
        runpy._run_module_as_main("__main__", alter_argv=False)  # type: ignore[attr-defined]  # python's own path
    elif kind == "script":
        with open(what, "rb") as fh:
            source = fh.read()
        if SOURCE_HOOK is not None:
            code = SOURCE_HOOK(what, source)
        else:
            code = compile(source, what, "exec", dont_inherit=True)  # not our __future__ flags
        sys.argv = [sys.argv[0], *args]  # argv[0] as typed (set by main)
        if path0:
            sys.path.insert(0, os.path.dirname(what))
        _exec_main(code, what)
    elif kind == "-c":
        sys.argv = ["-c", *args]
        if path0:
            sys.path.insert(0, "")
        _exec_main(compile(what, "<string>", "exec", dont_inherit=True), "<string>")
    else:
        sys.argv = [what, *args]  # runpy sets argv[0] to the module's file, as python -m does
        if path0:
            sys.path.insert(0, os.getcwd())
        runpy.run_module(what, run_name="__main__", alter_sys=True)


def _has_main(path: str) -> bool:
    """A folder or zip archive holding ``__main__.py``: what ``python <path>`` runs (s46: a folder was refused)."""
    if os.path.isdir(path):
        return os.path.isfile(os.path.join(path, "__main__.py"))
    if os.path.isfile(path) and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            return "__main__.py" in zf.namelist()
    return False


def _usage_error(message: str) -> int:
    print(f"runtime.emulator: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    raw = sys.argv[1:] if argv is None else argv
    flags, raw = split_python_flags(raw)
    if flags:  # `python -m runtime.emulator -u test.py`: the interpreter itself takes them, as `python -u test.py`
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable, *flags, "-m", "runtime.emulator", *raw])
    opts, target, args = _split(raw)
    parser = _parser()
    ns = parser.parse_args(opts)  # a trailing -m/-c without its value stays in opts: argparse reports it
    if target is None:
        return _usage_error("give the script to run, -m module or -c command (see --help)")
    kind, what = target
    if kind == "script" and what != "-" and not _has_main(what):
        if os.path.isdir(what):
            tests = sorted(n for n in os.listdir(what) if n.startswith("test_") and n.endswith(".py"))
            hint = f" (e.g. {os.path.join(what, tests[0])})" if tests else ""
            return _usage_error(f"{what} is a directory; give the script to run{hint}")
        if not os.path.isfile(what):
            return _usage_error(f"no such script: {what}")
    elif not what:
        return _usage_error(f"{kind} needs a value")
    config = _config(ns)
    setup(config)
    export_child_env(config, os.environ.get("PYTHONPATH") or None)
    interpreter_on_path()
    old_argv, old_path0 = sys.argv, list(sys.path)
    sys.argv = [what]
    rc = 0
    with session(options=options_from(config)) as s:
        try:
            _run(kind, os.path.abspath(what) if kind == "script" and what != "-" else what, args)
        except EmulatorError as e:
            if e.file is None:
                loc = user_frame(e.__traceback__)
                if loc is not None:
                    e.locate(*loc)
            where = f"{e.file}:{e.line}: " if e.file else ""
            print(f"ERROR {where}{e.kind}: Errcode: {e.code}! {e.message}", file=sys.stderr)
            rc = 1
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int | None):
                print(e.code, file=sys.stderr)
        except KeyboardInterrupt:
            print("runtime.emulator: interrupted", file=sys.stderr)
            rc = 130
        except Exception as e:  # the script's own error: one line at its innermost user location
            loc = user_frame(e.__traceback__)
            where = f"{loc[0]}:{loc[1]}: " if loc else ""
            print(f"ERROR {where}{type(e).__name__}: {e}", file=sys.stderr)
            rc = 3
        finally:
            sys.argv = old_argv
            sys.path[:] = old_path0
        if not ns.quiet:
            summary(s)
    return rc


def summary(s: Any) -> None:
    """The warnings and the cost line of a session on stderr (the runner's, and each child process's at exit)."""
    for d in s.warnings:
        print(f"WARNING {d.file}:{d.line}: {d.code}: {d.message}", file=sys.stderr)
    c = s.counters
    if c.runs:
        print(f"[emulator] kernel calls {c.runs}, ops {sum(c.ops.values())}, tiles {c.tiles}, "
              f"bytes in {c.bytes_in}, bytes out {c.bytes_out}, matmul flops {c.matmul_flops}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
