"""`python -m orchestrator audit`."""

from __future__ import annotations

from orchestrator.cli._common import not_built


def register(sub) -> None:
    p = sub.add_parser("audit", help="audit (not built yet)")
    p.add_argument("op_dir", nargs="?", help="operator directory")
    p.set_defaults(func=not_built("'audit'", "the orchestrator issue"))
