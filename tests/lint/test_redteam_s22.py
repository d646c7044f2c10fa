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


ALLOCATION_TELLS = {
    "read-only numpy input": "assert x.flags.writeable",
    "read-only numpy input by key": "assert x.flags['WRITEABLE']",
    "pinned tensor": "assert not x.is_pinned()",
    "shared-memory tensor": "assert not x.is_shared()",
}
"""Red team s22b: how the caller allocated an input, which verification never varies - a wrapper choosing its kernel
by ``x.flags.writeable`` was wrong for every ``np.frombuffer`` input, one choosing by ``x.is_pinned() or
x.is_shared()`` for a DataLoader's tensors; both passed every verification."""


@pytest.mark.parametrize("name", sorted(ALLOCATION_TELLS))
def test_reading_how_an_input_was_allocated_is_refused(name: str) -> None:
    found = blocking(src(ALLOCATION_TELLS[name]))
    assert "PF04" in found and any("allocated" in m for m in found["PF04"]), (name, found)


def test_contiguity_checks_stay_allowed() -> None:
    for body in ("assert x.flags['C_CONTIGUOUS']", "assert x.flags.c_contiguous"):
        assert blocking(src(body)) == {}, body
