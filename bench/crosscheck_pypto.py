"""Differential check of the emulator against the real pypto 0.2.0 toolchain (RunMode.SIM), probe by probe.

    python bench/crosscheck_pypto.py --pypto-python /path/to/venv/bin/python [--probes DIR]

The real wheel is never a dependency: point ``--pypto-python`` at the interpreter of a separate virtual
environment with ``pip install pypto==0.2.0 sympy torch`` (spec/pypto-api.md §0.3). Each probe in
``bench/crosscheck_probes/`` is an unmodified PyPTO script that prints one ``RESULT ...`` line; it runs once
under the real toolchain (SIM compiles and runs a cost model, no numbers, so only the outcome is compared)
and once under ``python -m runtime.emulator --compat 0.2.0`` (the wheel's semantics; the default target is
HEAD, whose differences tests/gym/test_fidelity.py lists). The outcome compared is: ``ok``, the toolchain error code
(``F21004``, ``FC0000`` ...) when the real toolchain gives one, else the Python exception type.
The emulator's interpreter needs torch too (the probes pass torch tensors, as real scripts do).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"\b(F[0-9A-F]{5}|FC[0-9A-F]{4}|FFFFFF)\b")
PYERR = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")
WRAPPERS = {"RenderedParserError", "EmulatorError", "ParserError"}


def outcome(text: str) -> tuple[str, str]:
    """(kind, detail) from a RESULT line: ('ok', ''), ('code', 'F21004') or ('type', 'ValueError')."""
    line = next((ln for ln in text.splitlines() if ln.startswith("RESULT")), "")
    if not line:
        return "none", text.strip().splitlines()[-1][:120] if text.strip() else "(no output)"
    if line.strip() == "RESULT ok":
        return "ok", ""
    codes = [c for c in CODE.findall(line) if not c.startswith("F0")]  # F0xxxx: Python-type codes (HEAD)
    if codes:
        return "code", codes[0]
    types = [t for t in PYERR.findall(line) if t not in WRAPPERS]
    # no Python type in the text: the parser's own error (0.2.0 renders it as the bare message)
    return "type", types[0] if types else "ParserError"


def run(cmd: list[str], cwd: Path) -> str:
    env = {"HOME": str(cwd), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    return proc.stdout + proc.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pypto-python", required=True, help="python of a venv with pypto==0.2.0, sympy, torch")
    parser.add_argument("--probes", default=str(ROOT / "bench" / "crosscheck_probes"))
    args = parser.parse_args()
    # the probes run with a temporary cwd: a relative interpreter path would resolve there (or not at all)
    pypto_python = Path(args.pypto_python).expanduser()
    if not pypto_python.is_absolute():
        pypto_python = Path.cwd() / pypto_python
    if not pypto_python.is_file():
        parser.exit(2, f"crosscheck_pypto: --pypto-python {args.pypto_python}: no such interpreter\n")
    args.pypto_python = str(pypto_python)
    probes = sorted(Path(args.probes).resolve().glob("*.py"))  # the probes run in a temporary cwd
    print(f"{'probe':34} {'real pypto 0.2.0 SIM':>22} {'emulator':>22}  match")
    agree = sim_only = 0
    for probe in probes:
        with tempfile.TemporaryDirectory(prefix="xcheck-") as tmp:  # SIM writes output/ and ~/.pypto here
            real_text = run([args.pypto_python, str(probe)], Path(tmp))
            real = outcome(real_text)
            emu = outcome(run([sys.executable, "-m", "runtime.emulator", "--compat", "0.2.0", str(probe)], Path(tmp)))
        same = real == emu
        # `F92001 [SIMULATION] No pipe type corresponding to opcode`: the kernel compiled and SIM's cost model has no
        # pipe for one of its ops (bit ops, remainder, exp2, gcd, lrelu, prod, tril/triu ...) - not a device verdict
        sim = not same and real == ("code", "FFFFFF") and "F92001" in real_text
        agree += same
        sim_only += sim
        show = lambda o: o[0] if o[0] == "ok" else f"{o[0]}:{o[1]}"  # noqa: E731
        print(f"{probe.stem:34} {show(real):>22} {show(emu):>22}  "
              f"{'yes' if same else 'NO (SIM cost model: no pipe for an opcode)' if sim else 'NO'}")
    print(f"{agree}/{len(probes)} probes agree; {sim_only} more differ only where SIM's cost model has no pipe for an "
          "opcode (F92001)")
    return 0 if agree == len(probes) else 1


if __name__ == "__main__":
    sys.exit(main())
