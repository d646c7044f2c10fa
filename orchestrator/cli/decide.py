"""`python -m orchestrator approve|reject`: record a human decision at a gate."""

from __future__ import annotations

from orchestrator.cli._common import not_built


def register(sub) -> None:
    for name in ("approve", "reject"):
        p = sub.add_parser(name, help=f"{name} the gate a run is waiting at (not built yet)")
        p.add_argument("op_dir", help="operator directory")
        p.add_argument("--gate", help="gate name (design, module, final, blocked)")
        p.add_argument("--note", help="a note for the agents (required for reject)")
        p.set_defaults(func=not_built(f"'{name}'", "the orchestrator issue"))
