"""The sandbox's codegen guard (red team s20): ``dataclasses`` must not paste a field "name" that is code into the
source it exec()s. ``_dataclass_problem`` is what the guard asks; honest dataclasses (the gym's) have none."""

from __future__ import annotations

import dataclasses

from runtime.sandbox._guard import _dataclass_problem


def test_honest_dataclasses_have_no_problem() -> None:
    @dataclasses.dataclass(frozen=True)
    class Base:
        rows: int = 16

    @dataclasses.dataclass(frozen=True)
    class Child(Base):
        cols: int = 64

    class Plain:
        a: int = 0

    assert _dataclass_problem(Plain) is None
    assert _dataclass_problem(Child) is None


def test_a_field_name_that_is_code_is_refused() -> None:
    class Injected:
        a: int = 0
        __annotations__["__class__,)!=()and(1)#"] = int

    made = type("Made", (), {"__annotations__": {"a=print(1)": int}})
    assert "field named" in str(_dataclass_problem(Injected))
    assert "field named" in str(_dataclass_problem(made))


def test_metaclasses_dict_subclasses_and_forged_base_fields_are_refused() -> None:
    class Meta(type):
        pass

    class WithMeta(metaclass=Meta):
        a: int = 0

    class Sneaky(dict):
        pass

    odd = type("Odd", (), {"__annotations__": Sneaky(a=int)})
    forged = dataclasses.field()
    forged.name = "x=1"  # type: ignore[attr-defined]
    base = type("Base", (), {"__dataclass_fields__": {"x": forged}})
    child = type("Child", (base,), {"__annotations__": {"b": int}})
    assert "metaclass" in str(_dataclass_problem(WithMeta))
    assert "plain dict" in str(_dataclass_problem(odd))
    assert "hand-made" in str(_dataclass_problem(child))
