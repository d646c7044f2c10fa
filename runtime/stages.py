"""Stage-file naming: the one definition of ``modules/<op>_module<sfx>_impl.py``, ``<op>_impl.py`` and wrappers.

Why one definition at the bottom of ``runtime``: the orchestrator names the files it asks for, and lint
(PF05, OL50, the wrapper rule), the verifier (what a target is) and bisection (which outputs a stage must
produce) read the names back; each used to carry its own pattern (bisection read the module count from the
suffix's last digit, so ``12345678910`` meant module 0). Nothing here imports the project.

The suffix of stage ``k`` is ``12...k`` (cumulative: stage 3 holds modules 1, 2 and 3); from module 10 on it is
read greedily (``12345678910`` is stage 10).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = ["MODULES_DIR", "StageName", "final_file", "final_wrapper", "parse_stage_name", "parse_suffix",
           "stage_file", "stage_suffix", "stage_wrapper", "wrapper_for"]

MODULES_DIR = "modules"
"""Folder of the op dir that holds the stage files."""

_STAGE_RE = re.compile(r"^(?P<op>.+?)_module(?P<sfx>\w*?)_impl\.py$")


def stage_suffix(k: int) -> str:
    """Cumulative suffix of stage ``k``: 1 -> "1", 3 -> "123", 10 -> "12345678910"."""
    return "".join(str(i) for i in range(1, k + 1))


def stage_file(op_name: str, k: int) -> str:
    """Relative path of the cumulative stage file of module ``k``."""
    return f"{MODULES_DIR}/{op_name}_module{stage_suffix(k)}_impl.py"


def stage_wrapper(op_name: str, k: int) -> str:
    return f"{op_name}_module{stage_suffix(k)}_wrapper"


def final_file(op_name: str) -> str:
    return f"{op_name}_impl.py"


def final_wrapper(op_name: str) -> str:
    return f"{op_name}_wrapper"


def parse_suffix(sfx: str) -> int | None:
    """Module count k of a stage suffix ``1``, ``12``, ... ``12345678910`` (greedy, like OL50); else None."""
    pos, expected = 0, 1
    while pos < len(sfx):
        two, one = sfx[pos:pos + 2], sfx[pos:pos + 1]
        if expected >= 10 and two == str(expected):
            pos += 2
        elif one == str(expected):
            pos += 1
        else:
            return None
        expected += 1
    return expected - 1 if expected > 1 else None


@dataclass(frozen=True)
class StageName:
    """What a kernel file name says: ``final`` (``<op>_impl.py``) or ``stage`` with the module numbers."""

    kind: Literal["stage", "final", "other"]
    op: str = ""
    suffix: str = ""
    modules: tuple[int, ...] = ()
    error: str = ""

    @property
    def module(self) -> int | None:
        """The stage's module count k (None for a final file or a malformed suffix)."""
        return len(self.modules) or None


def parse_stage_name(filename: str | Path, op_name: str | None = None) -> StageName:
    """Interpret ``modules/<op>_module<sfx>_impl.py`` (sfx = 1, 12, 123 ...) or ``<op>_impl.py``.

    With ``op_name``, a final file of another operator is ``other`` (a stage file names its op itself).
    """
    name = Path(filename).name
    m = _STAGE_RE.match(name)
    if m:
        sfx = m.group("sfx")
        k = parse_suffix(sfx)
        if k is None:
            return StageName("stage", m.group("op"), sfx, (), f"suffix {sfx!r} is not 1, 12, 123, ...")
        return StageName("stage", m.group("op"), sfx, tuple(range(1, k + 1)))
    if name.endswith("_impl.py"):
        op = name[: -len("_impl.py")]
        if op_name is None or op == op_name:
            return StageName("final", op)
    return StageName("other")


def wrapper_for(filename: str | Path) -> str:
    """The wrapper a kernel file must define: ``x_module12_impl.py`` -> ``x_module12_wrapper``, ``x_impl.py`` ->
    ``x_wrapper`` (any other name: its stem + ``_wrapper``)."""
    stem = Path(filename).stem
    return (stem[: -len("_impl")] if stem.endswith("_impl") else stem) + "_wrapper"
