"""``python -m runtime.emulator [options] script.py [args]``: run an unmodified PyPTO script on the emulator.

RunMode.SIM and RunMode.NPU both run on the emulator. The script runs as plain ``python script.py`` would
run it (``__file__`` absolute, ``__name__ == "__main__"``, its folder first on ``sys.path``), plus:

* ``import pypto`` is the emulator; ``import torch_npu`` is a stand-in that maps ``npu``/``npu:N`` to the CPU
  (see ``_torch_npu``);
* child Python processes the script starts (``subprocess.run([sys.executable, ...])``, ``python3 ...``) run
  under the emulator too, with the same options (a ``sitecustomize`` on their ``PYTHONPATH``);
* errors are one line at the user's own source line (the kernel line for kernel errors, the innermost frame
  of the script's code for anything else), never a location inside torch, numpy or the emulator.

Exit codes: 0 ok, 1 kernel error, 2 usage error, 3 the script raised another exception (or exited non-zero).
"""

from __future__ import annotations

import argparse
import builtins
import json
import os
import sys
import sysconfig
import traceback
import types
from typing import Any

from runtime.emulator import EmulatorError, Options, install, session
from runtime.emulator._torch_npu import install_finder

_PKG = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_PKG))
_CHILD_DIR = os.path.join(_PKG, "_child")
CHILD_ENV = "PTO_FORGE_EMULATOR_CHILD"
"""Environment variable carrying the options (JSON) to child Python processes of the script."""

_LIBRARY_DIRS = tuple(
    os.path.realpath(p) + os.sep
    for p in {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")} | {_PKG}
    if p
)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m runtime.emulator",
        description="Run an unmodified PyPTO script (and the Python processes it starts) on the CPU emulator. "
                    "The switches below choose how strict the emulator is; the defaults are the strict ones "
                    "(docs/emulator-fidelity.md says what each reproduces of the real toolchain).",
    )
    p.add_argument("--compat", choices=("0.2.0", "head"), default="0.2.0",
                   help="API behaviour to follow: the pypto 0.2.0 wheel (default) or the repository HEAD "
                        "(multi-axis broadcast, builtin min/max on symbols, HEAD-only runtime options)")
    p.add_argument("--out-of-bounds", choices=("raise", "clip"), default="raise",
                   help="a view/assemble window leaving its tensor: raise EMU_VIEW_OOB (default) or clip it "
                        "like the 0.2.0 CPU oracle and warn")
    p.add_argument("--poison-check", choices=("final", "iteration", "off"), default="final",
                   help="NaN-poison check of uninitialized/padding data written to kernel arguments: on the "
                        "final argument contents (default), on every write-back in every loop iteration "
                        "(strictest), or off")
    p.add_argument("--npuarch", default="DAV_2201", help="value of pypto.platform.npuarch (default DAV_2201 = A2/A3)")
    p.add_argument("--record", action="store_true", help="keep every traced op output per iteration (bisection)")
    p.add_argument("--no-torch-npu", action="store_true",
                   help="do not provide the torch_npu stand-in (a real torch_npu, if installed, is used)")
    p.add_argument("--quiet", action="store_true", help="no warning lines and no cost summary on stderr")
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    return p


def options_from(config: dict[str, Any]) -> Options:
    """The emulator Options for a CLI/child configuration (keys as produced by :func:`_config`)."""
    kw: dict[str, Any] = {"compat": config.get("compat", "0.2.0"), "record": bool(config.get("record", False)),
                          "out_of_bounds": config.get("out_of_bounds", "raise"),
                          "npuarch": config.get("npuarch", "DAV_2201")}
    poison = config.get("poison_check", "final")
    kw["check_poison"] = poison != "off"
    if poison != "off":
        kw["poison_check"] = poison
    return Options(**kw)


def _config(ns: argparse.Namespace) -> dict[str, Any]:
    return {"compat": ns.compat, "record": ns.record, "out_of_bounds": ns.out_of_bounds,
            "poison_check": ns.poison_check, "npuarch": ns.npuarch, "torch_npu": not ns.no_torch_npu}


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


def _child_env(config: dict[str, Any]) -> None:
    """Child Python processes inherit this environment: they load the emulator through ``_child/sitecustomize``."""
    os.environ[CHILD_ENV] = json.dumps(config)
    parts = [_CHILD_DIR, _REPO] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))


def setup(config: dict[str, Any]) -> None:
    """Install the emulator as ``pypto`` (and the torch_npu stand-in) in this process."""
    install()
    if config.get("torch_npu", True):
        install_finder()


def _run_main(script: str) -> None:
    """Execute ``script`` as ``__main__`` the way ``python script.py`` does (``runpy.run_path`` would rewrite
    ``sys.argv[0]``; plain python leaves it as typed and makes only ``__file__`` absolute)."""
    with open(script, "rb") as fh:
        code = compile(fh.read(), script, "exec", dont_inherit=True)  # not our __future__ flags
    main_mod = types.ModuleType("__main__")
    main_mod.__dict__.update({"__file__": script, "__builtins__": builtins, "__cached__": None,
                              "__loader__": None, "__spec__": None, "__package__": None})
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main_mod
    try:
        exec(code, main_mod.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def main(argv: list[str] | None = None) -> int:
    ns = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    script = ns.script
    if os.path.isdir(script):
        tests = sorted(n for n in os.listdir(script) if n.startswith("test_") and n.endswith(".py"))
        hint = f" (e.g. {os.path.join(script, tests[0])})" if tests else ""
        print(f"runtime.emulator: {script} is a directory; give the script to run{hint}", file=sys.stderr)
        return 2
    if not os.path.isfile(script):
        print(f"runtime.emulator: no such script: {script}", file=sys.stderr)
        return 2
    script = os.path.abspath(script)
    config = _config(ns)
    setup(config)
    _child_env(config)
    old_argv, old_path0 = sys.argv, list(sys.path)
    sys.argv = [ns.script, *ns.args]
    sys.path.insert(0, os.path.dirname(script))
    rc = 0
    with session(options=options_from(config)) as s:
        try:
            _run_main(script)
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
            for d in s.warnings:
                print(f"WARNING {d.file}:{d.line}: {d.code}: {d.message}", file=sys.stderr)
            c = s.counters
            if c.runs:
                print(f"[emulator] kernel calls {c.runs}, ops {sum(c.ops.values())}, tiles {c.tiles}, "
                      f"bytes in {c.bytes_in}, bytes out {c.bytes_out}, matmul flops {c.matmul_flops}",
                      file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
