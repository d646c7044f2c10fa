"""`python -m runtime.emulator script.py [args]`: run an unmodified PyPTO script on the emulator.

RunMode.SIM and RunMode.NPU both run on the emulator. Exit codes: 0 ok, 1 kernel error (one message with
the kernel file:line), 2 usage error, 3 the script raised another exception.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback

from runtime.emulator import EmulatorError, Options, install, session

_PKG = os.path.dirname(os.path.abspath(__file__))
USAGE = "usage: python -m runtime.emulator [--record] [--compat 0.2.0|head] script.py [args ...]"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    compat = "0.2.0"
    record = False
    while args and args[0].startswith("--"):
        flag = args.pop(0)
        if flag == "--record":
            record = True
        elif flag == "--compat" and args:
            compat = args.pop(0)
            if compat not in ("0.2.0", "head"):
                print(f"runtime.emulator: --compat must be 0.2.0 or head, got {compat}", file=sys.stderr)
                return 2
        elif flag in ("-h", "--help"):
            print(USAGE)
            return 0
        else:
            print(USAGE, file=sys.stderr)
            return 2
    if not args:
        print(USAGE, file=sys.stderr)
        return 2
    script = args[0]
    if not os.path.isfile(script):
        print(f"runtime.emulator: no such script: {script}", file=sys.stderr)
        return 2
    install()
    old_argv = sys.argv
    sys.argv = [script, *args[1:]]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    rc = 0
    with session(options=Options(compat=compat, record=record)) as s:  # type: ignore[arg-type]
        try:
            runpy.run_path(script, run_name="__main__")
        except EmulatorError as e:
            where = f"{e.file}:{e.line}: " if e.file else ""
            print(f"ERROR {where}{e.kind}: Errcode: {e.code}! {e.message}", file=sys.stderr)
            rc = 1
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception as e:  # the script's own error: one line with its innermost script location
            frames = [f for f in traceback.extract_tb(e.__traceback__) if not f.filename.startswith(_PKG)]
            where = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
            print(f"ERROR {where}{type(e).__name__}: {e}", file=sys.stderr)
            rc = 3
        finally:
            sys.argv = old_argv
        for d in s.warnings:
            print(f"WARNING {d.file}:{d.line}: {d.code}: {d.message}", file=sys.stderr)
        c = s.counters
        if c.runs:
            print(f"[emulator] kernel calls {c.runs}, ops {sum(c.ops.values())}, tiles {c.tiles}, "
                  f"bytes in {c.bytes_in}, bytes out {c.bytes_out}, matmul flops {c.matmul_flops}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
