"""The orchestrator's view of an operator directory, read through ``runtime.opdir``.

Why a bridge: the graph needs only a few facts (op name, complexity decision, golden inventory, module
markers) as plain checkpoint-safe data, and must give one clear message for a bad directory.
``runtime.opdir`` is the authority for all of them.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from orchestrator.errors import ForgeError, no_op_dir
from runtime.frontmatter import split_front_matter
from runtime.opdir import OpDirError, load_op_dir
from runtime.opdir import complexity as _complexity

log = logging.getLogger(__name__)


class OpInfo(BaseModel):
    """Facts about an op dir that the graph keeps (small, serialisable)."""

    root: str
    op_name: str
    complexity: dict = Field(default_factory=dict)
    inventory: list[dict] = Field(default_factory=list)
    markers: list[dict] = Field(default_factory=list)
    spec_front: dict = Field(default_factory=dict)
    seeds: list[int] = Field(default_factory=list)
    """The seeds every case runs on (SPEC.md's ``seeds``, or runtime.opdir's default)."""


def _problems_text(exc: OpDirError) -> str:
    """Every problem once, in one format (``SPEC.md:16: seed: unknown key ...``), at most 8."""
    if not exc.problems:
        return str(exc) or "invalid op dir"
    lines = [f"  {p}" for p in exc.problems[:8]]
    more = [f"  ... {len(exc.problems) - 8} more"] if len(exc.problems) > 8 else []
    return f"{len(exc.problems)} problem(s):\n" + "\n".join(lines + more)


_MEMO: dict[tuple[str, str], OpInfo] = {}
"""(op dir, hash of SPEC.md + golden.py bytes) -> the facts :func:`load` found for those bytes."""
_MEMO_MAX = 64


def _content_key(op_dir: Path) -> tuple[str, str] | None:
    """What :func:`load`'s answer depends on: ``runtime.opdir.load_op_dir`` reads SPEC.md and golden.py and
    nothing else (it never runs golden.py), so the same path with the same bytes gives the same facts.
    None when either file cannot be read (no memo: ``load`` reports the problem)."""
    h = hashlib.sha256()
    for name in ("SPEC.md", "golden.py"):
        try:
            data = (op_dir / name).read_bytes()
        except OSError:
            return None
        h.update(len(data).to_bytes(8, "little") + data)
    return str(op_dir), h.hexdigest()


def load(op_dir: Path) -> OpInfo:
    """Validate an op dir and collect the facts the graph needs.

    A run asks several times (``run``, intake's check, the intake node) for the same files; parsing SPEC.md
    costs ~10 ms, so the answer is kept per content (:func:`_content_key`): an edited SPEC.md or golden.py
    is parsed again.

    Raises:
        ForgeError: the directory is missing or its SPEC.md / golden.py are invalid (one clear message).
    """
    op_dir = Path(op_dir)
    if not op_dir.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    key = _content_key(op_dir)
    if key is not None and key in _MEMO:
        return _MEMO[key].model_copy(deep=True)
    info = _load(op_dir)
    if key is not None:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = info.model_copy(deep=True)
    return info


def _load(op_dir: Path) -> OpInfo:
    try:
        op = load_op_dir(op_dir)
    except OpDirError as exc:  # GoldenError is one too; both carry .problems
        raise ForgeError(f"invalid operator directory {op_dir}: {_problems_text(exc)}") from exc
    cx = _complexity(op)
    cx_dict = cx.model_dump(mode="json")
    inventory = [r.model_dump(mode="json") for r in op.inventory()]
    markers = [m.model_dump(mode="json") for m in op.module_markers()]
    spec_text = (op_dir / "SPEC.md").read_text(encoding="utf-8")
    return OpInfo(root=str(op_dir), op_name=op.spec.op_name, complexity=_plain(cx_dict),
                  inventory=_plain(inventory), markers=_plain(markers), spec_front=split_front_matter(spec_text).data or {},
                  seeds=list(op.spec.seeds))


def _plain(obj: Any) -> Any:
    """Reduce to JSON-like plain data (checkpoint-safe)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, str | int | float | bool) or obj is None:
        return obj
    return str(obj)
