"""The project's one YAML reader: PyYAML's safe loader, on libyaml's C parser when PyYAML has it.

SPEC.md front matter, ``module_interfaces.yaml``, agent configs and scripted traces are parsed many times per
run (42 parses in one replay of ``workspace/sdpa``); the pure-Python parser spent 0.85 s of its 5 s there, the C
parser about a tenth of that. Both build the same objects with the same safe constructor; only the text of a
syntax error differs (the C parser gives the line and column without the source excerpt).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["compose_yaml", "load_yaml"]

_C_LOADER: Any = getattr(yaml, "CSafeLoader", None)
_LOADER: Any = _C_LOADER or yaml.SafeLoader


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, faster; raises ``yaml.YAMLError`` on bad input like it."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)


def compose_yaml(text: str) -> Any:
    """``yaml.compose(text, Loader=SafeLoader)`` (the node tree, every key's line), faster: ~6x with libyaml (4.4 ->
    0.7 ms for silu's SPEC.md idle). Its marks are the same; on a syntax error the pure-Python parser runs again,
    so the message a user reads is worded (with its source excerpt) as it always was."""
    if _C_LOADER is not None:
        try:
            return yaml.compose(text, Loader=_C_LOADER)
        except yaml.YAMLError:
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)
