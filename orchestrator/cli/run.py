"""`python -m orchestrator run`."""

from __future__ import annotations

from orchestrator.cli._common import not_built


def register(sub) -> None:
    p = sub.add_parser("run", help="run (not built yet)")
    p.add_argument("op_dir", nargs="?", help="operator directory")
    p.set_defaults(func=not_built("'run'", "the orchestrator issue"))
