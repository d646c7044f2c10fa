"""`python -m orchestrator intake op_dir`: parse and check an operator directory, write nothing."""

from __future__ import annotations

from orchestrator.cli._common import not_built


def register(sub) -> None:
    p = sub.add_parser("intake", help="check an operator directory and print its contract (writes nothing)")
    p.add_argument("op_dir", help="operator directory")
    p.set_defaults(func=not_built("'intake'", "the foundation issue"))
