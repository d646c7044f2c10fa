"""Run the gym-style corpus operators' host entries under the REAL pypto 0.2.0 wheel (RunMode.SIM).

    cd "$(mktemp -d)" && HOME=$PWD /path/to/pypto-venv/bin/python /path/to/bench/crosscheck_gym_corpus.py

SIM compiles every kernel and runs its cost model but writes no numbers (spec/pypto-api.md §0.3), so this
checks that the real frontend and compiler accept each corpus kernel on each of its golden's cases; the values
are checked on the emulator by tests/gym. Run it with the interpreter of a separate venv holding pypto==0.2.0
and torch (the real wheel is never a dependency). Prints one RESULT line per operator; exit 1 if any fails.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "gym" / "corpus_data"


def main() -> int:
    if importlib.util.find_spec("pypto") is None:  # `make bench` runs every bench script in the project venv
        print("crosscheck_gym_corpus: needs the real pypto 0.2.0 wheel in this interpreter (see its docstring); "
              "nothing run")
        return 0
    ops = sys.argv[1:] or sorted(p.name for p in CORPUS.iterdir() if (p / "SPEC.md").is_file())
    failed = 0
    for op in ops:
        sys.path.insert(0, str(CORPUS / op))
        try:
            golden = importlib.import_module(f"{op}_golden")
            entry = getattr(importlib.import_module(f"{op}_impl"), op)
            cases = golden._make_inputs("cpu")
            for _name, inputs, kwargs in cases:
                entry(*inputs, **kwargs)
            print(f"RESULT {op} ok ({len(cases)} case(s))")
        except Exception as exc:  # report every operator, then fail
            failed += 1
            print(f"RESULT {op} {type(exc).__name__}: {str(exc)[:300]}".replace("\n", " | "))
        finally:
            sys.path.pop(0)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
