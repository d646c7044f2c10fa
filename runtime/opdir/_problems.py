"""Problems found in an operator directory, and the one exception that carries them.

Every user mistake in SPEC.md or golden.py becomes a :class:`Problem` naming the file, the line and the
field in plain words, so the CLI can print a list instead of a traceback and agents can read it as data.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

__all__ = ["GoldenError", "OpDirError", "Problem", "closest_dir_hint", "enclosing_op_dir_hint"]


def closest_dir_hint(path: Path, *, dirs_only: bool = True) -> str:
    """``; did you mean 'workspace/silu'?`` for a mistyped last component whose parent exists, else "" (``dirs_only``
    False: files next to it are candidates too - ``import``'s source is a folder or a file).

    Why: ``run workspace/slu`` and ``intake workspace/slu`` said only "not found" / "is not a directory" (UX audit
    s44); both messages end with this."""
    import difflib

    parent = path.parent
    try:
        names = [p.name for p in parent.iterdir() if (p.is_dir() or not dirs_only) and not p.name.startswith(".")]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    return f"; did you mean '{parent / close[0] if str(parent) != '.' else close[0]}'?" if close else ""


def enclosing_op_dir_hint(path: Path) -> str:
    """``; did you mean 'silu'?`` for a file given where its operator directory was meant (``intake silu/SPEC.md``,
    ``run silu/golden.py``: tab completion stops at a file), else "".

    Why: the message said only that the path is a file (UX audit s48)."""
    parent = path.parent
    if not path.is_file() or not any((parent / name).is_file() for name in ("SPEC.md", "golden.py")):
        return ""
    return f"; did you mean '{parent}'?"


class Problem(BaseModel):
    """One thing wrong with an operator directory.

    Example:
        ``Problem(file="SPEC.md", line=7, field="inputs[0].dtype", message="unknown dtype 'fp33' ...")``
    """

    model_config = ConfigDict(frozen=True)

    file: str
    """File name relative to the op directory (``SPEC.md``, ``golden.py``) or the directory itself."""
    line: int | None = None
    """1-based line in ``file`` when known."""
    field: str = ""
    """Dotted path of the offending field (``inputs[0].shape``) or a short topic (``golden``)."""
    message: str
    """Plain-words explanation, with what was expected."""

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"


class OpDirError(Exception):
    """An operator directory violates the contract; ``problems`` lists every issue found."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems) or "invalid operator directory")


class GoldenError(OpDirError):
    """golden.py could not be loaded or run on a case.

    ``kind`` is one of ``inputs`` (SPEC range impossible for a dtype), ``syntax``, ``import``, ``missing_function``, ``make_inputs``, ``exception``,
    ``bad_output``, ``timeout``, ``crash``.
    """

    def __init__(self, kind: str, problems: list[Problem], *, traceback: str = "") -> None:
        super().__init__(problems)
        self.kind = kind
        self.traceback = traceback
