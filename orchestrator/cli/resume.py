"""`python -m orchestrator resume`."""

from __future__ import annotations

from orchestrator.cli._common import not_built


def register(sub) -> None:
    p = sub.add_parser("resume", help="resume (not built yet)")
    p.add_argument("op_dir", nargs="?", help="operator directory")
    p.set_defaults(func=not_built("'resume'", "the orchestrator issue"))
