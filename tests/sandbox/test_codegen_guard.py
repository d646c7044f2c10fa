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


def test_a_library_may_define_dataclasses_with_its_own_metaclass_under_the_guard() -> None:
    """Found by the gym tests (session 20): a torch wrapper imports torch inside the sandbox, after the guard is
    installed, and torch defines dataclasses whose metaclass is its own (``OpaqueBaseMeta``) - every torch wrapper got
    FAIL_CHEAT. The guard applies to what the candidate asks for, not to a library's classes; the candidate's own
    metaclass dataclass is still refused. In a child process: the guard patches ``dataclasses`` for good."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent('''
        import dataclasses, importlib.util, os, sys, tempfile
        from runtime.sandbox._guard import install_codegen_guard
        record = []
        install_codegen_guard(record)
        # a library module (under site-packages) defining a dataclass with a metaclass of its own
        site = next(p for p in sys.path if p.endswith("site-packages"))
        lib = os.path.join(site, "_pto_forge_guard_probe_lib.py")
        with open(lib, "w") as f:
            f.write("import dataclasses\\nclass Meta(type): pass\\n@dataclasses.dataclass\\nclass C(metaclass=Meta):\\n    x: int = 1\\n")
        try:
            import _pto_forge_guard_probe_lib as m
            assert m.C().x == 1 and record == [], record
        finally:
            os.remove(lib)
        class Meta(type): pass
        try:
            @dataclasses.dataclass
            class Mine(metaclass=Meta):
                x: int = 1
        except PermissionError:
            print("refused", record)
        else:
            print("allowed")
    ''')
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("refused") and "metaclass Meta" in r.stdout, r.stdout
