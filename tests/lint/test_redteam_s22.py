"""Red team s22: PF11 took every frozen dataclass (or NamedTuple) instance for a constant. A frozen dataclass with
``seen: list = field(default_factory=list)``, an instance of it as the wrapper's default argument, and
``stats.seen.append(...)`` counted the calls: wrong from the 41st, more calls than a verification makes. A frozen
class counts as constant only when its field defaults are constants (``default_factory`` only of an immutable
builtin); each refused construct has an honest counterpart that must keep passing."""

from __future__ import annotations

import pytest
from test_redteam_s20 import blocking, src

COUNTER = "stats.seen.append(1)\n    assert len(stats.seen) < 41"

BAD = {
    "default_factory=list, instance as a default argument": (
        "\n\n@dataclasses.dataclass(frozen=True)\nclass _Stats:\n    seen: list = dataclasses.field(default_factory=list)"
        "\n\n\nSTATS = _Stats()\n", "stats=STATS"),
    "default_factory=dict, module-level instance": (
        "\n\n@dataclasses.dataclass(frozen=True)\nclass _Stats:\n    seen: dict = dataclasses.field(default_factory=dict)"
        "\n\n\nSTATS = _Stats()\n", None),
    "a mutable field default": (
        "\n\n@dataclasses.dataclass(frozen=True)\nclass _Stats:\n    seen: object = dataclasses.field("
        "default=np.zeros(4))\n\n\nSTATS = _Stats()\n", None),
}


def _wrapper(extra: str, default: str | None, body: str) -> str:
    source = src(body, extra)
    if default:
        source = source.replace("def k_wrapper(x):", f"def k_wrapper(x, {default}):")
    else:
        source = source.replace("def k_wrapper(x):", "def k_wrapper(x):\n    stats = STATS")
    return source


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_frozen_class_with_mutable_fields_is_state(name: str) -> None:
    extra, default = BAD[name]
    found = blocking(_wrapper(extra, default, COUNTER))
    assert "PF11" in found, (name, found)


def test_frozen_classes_with_constant_fields_stay_constants() -> None:
    honest = {
        "default_factory=tuple": "seen: tuple = dataclasses.field(default_factory=tuple)",
        "a constant default through field()": "rows: int = dataclasses.field(default=16)",
        "a dtype default": "dtype: object = pypto.DT_FP32",
        "no defaults": "rows: int",
    }
    for name, line in honest.items():
        args = "16" if name == "no defaults" else ""
        extra = (f"\n\n@dataclasses.dataclass(frozen=True)\nclass _Cfg:\n    {line}\n\n\n_CFG = _Cfg({args})\n")
        assert blocking(_wrapper(extra, "cfg=_CFG", "assert cfg is not None")) == {}, name
