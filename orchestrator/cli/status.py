"""`python -m orchestrator status`."""

from __future__ import annotations

from orchestrator.cli._common import not_built


def register(sub) -> None:
    p = sub.add_parser("status", help="status (not built yet)")
    p.add_argument("op_dir", nargs="?", help="operator directory")
    p.set_defaults(func=not_built("'status'", "the orchestrator issue"))
