"""Where the parts of a real pypto-gym operator are, and how its user runs its test.

The gym's layout (``hicann/pypto-gym``): the kernel under ``src/pypto_gym/ops/...``, the golden and the test
under ``tests/ops/...`` (golden as ``<op>_golden.py``, or functions of the test itself), per-case settings in
``test_cases.json`` next to the test, the gym installed with ``pip install -e .``. An operator folder is any
folder with a ``src/`` child (``shared/gym/ops/<name>`` is one). Its test is what a gym user runs: a
``test_*.py`` script (run by path, with the case ids the user gives), a pytest-only test (no ``__main__``: run
with ``-m pytest``), or, where the gym has no test file, the impl file's own ``__main__`` block.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from runtime import pyast

__all__ = ["GymLayoutError", "GymOp", "find_root", "locate"]


class GymLayoutError(ValueError):
    """The folder is a gym operator but the test to run cannot be told (one line)."""


@dataclass(frozen=True)
class GymOp:
    """A gym operator folder and the command its user runs (what follows ``python``) from ``cwd``."""

    root: Path
    name: str
    command: tuple[str, ...]
    cwd: Path

    def describe(self) -> str:
        return f"cd {self.cwd.relative_to(self.root) if self.cwd != self.root else '.'} && python " + shlex.join(
            self.command)


def find_root(source: Path) -> Path | None:
    """The gym operator folder holding ``source``: the nearest folder with a ``src/`` child."""
    here = source if source.is_dir() else source.parent
    for folder in (here, *here.parents):
        if (folder / "src").is_dir():
            return folder
    return None


def _op_name(text: str) -> str:
    name = re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower() or "op"
    return name if not name[0].isdigit() else f"op_{name}"


def _has_main(path: Path) -> bool:
    try:
        tree = pyast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return True
    return False


def _script(root: Path, name: str) -> Path:
    tests = sorted(p for p in (root / "tests").rglob("test_*.py")) if (root / "tests").is_dir() else []
    exact = [p for p in tests if p.stem == f"test_{name}"]
    if exact:
        return exact[0]
    if len(tests) == 1:
        return tests[0]
    close = [p for p in tests if name in p.stem.lower()]
    if len(close) == 1:
        return close[0]
    if tests:
        raise GymLayoutError(f"{root}: {len(tests)} test scripts ({', '.join(p.name for p in tests[:4])}); give the "
                             "one to run (the test file, or --run)")
    mains = [p for p in sorted((root / "src").rglob("*.py")) if _has_main(p)]
    if len(mains) == 1:
        return mains[0]
    raise GymLayoutError(f"{root}: no test_*.py under tests/ and {len(mains)} src files with a __main__ block; give "
                         "the script to run")


def locate(source: Path, command: str | None = None, cwd: str | None = None) -> GymOp | None:
    """The gym operator of ``source`` (its folder, or its test script) and its run; None when not a gym layout.

    ``command`` (what follows ``python``, e.g. ``test_rms_norm.py case_002`` or ``-m pytest tests/...``) and ``cwd``
    (relative to the operator folder) override what a plain run of the operator's test would be.
    """
    root = find_root(source)
    if root is None:
        return None
    name = _op_name(root.name)
    if cwd and command is None:
        raise GymLayoutError(f"the folder to run from ({cwd}) needs the command to run there (--run)")
    if command is not None:
        run_dir = (root / cwd).resolve() if cwd else root
        if not run_dir.is_dir() or not (run_dir == root.resolve() or root.resolve() in run_dir.parents):
            raise GymLayoutError(f"{cwd} is not a folder of the gym operator {root}")
        if not shlex.split(command):
            raise GymLayoutError("the command to run (--run) is empty")
        return GymOp(root, name, tuple(shlex.split(command)), run_dir)
    script = source if source.is_file() and source.suffix == ".py" else _script(root, name)
    if not _has_main(script):  # pytest-only: run as its user does, from the operator folder
        return GymOp(root, name, ("-m", "pytest", "-q", "-p", "no:cacheprovider", str(script.relative_to(root))),
                     root)
    return GymOp(root, name, (script.name,), script.parent)
