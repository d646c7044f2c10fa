"""The project's one YAML reader: PyYAML's safe loader, on libyaml's C parser when PyYAML has it.

SPEC.md front matter, ``module_interfaces.yaml``, agent configs and scripted traces are parsed many times per
run (42 parses in one replay of ``workspace/sdpa``); the pure-Python parser spent 0.85 s of its 5 s there, the C
parser about a tenth of that. Both build the same objects with the same safe constructor; only the text of a
syntax error differs (the C parser gives the line and column without the source excerpt).
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["load_yaml"]

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, faster; raises ``yaml.YAMLError`` on bad input like it."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (CSafeLoader or SafeLoader)
