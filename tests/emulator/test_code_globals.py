"""`_trace_cache._code_globals` reads a function's global names from its bytecode, the same names as ``dis``.

Why: the cache key of a kernel that calls helper functions fingerprints the globals each helper loads; with
``dis.get_instructions`` that cost ~0.1-0.5 ms per helper on the kernel's first call (sum_lstm: about a
millisecond of a 20 ms first call). The direct scan must not miss a name - a missed global would let a changed
value hit a stale trace - so it is compared with ``dis`` on the code of the emulator and of a sample of the
standard library, on arguments wider than one byte (``EXTENDED_ARG``) and on every kind of global access.
(Checked once on every code object of a process under CPython 3.11, 3.12 and 3.13: no difference.)
"""

import dis
import sys
import types

from runtime.emulator import _trace_cache


def _by_dis(code: types.CodeType) -> tuple[str, ...]:
    names: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        for ins in dis.get_instructions(c):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"):
                names.add(str(ins.argval))
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return tuple(sorted(names))


def _fresh(code: types.CodeType) -> tuple[str, ...]:
    _trace_cache._CODE_GLOBALS.pop(code, None)
    return _trace_cache._code_globals(code)


def test_every_kind_of_global_access_and_wide_arguments() -> None:
    attrs = "\n".join(f"    x.a{i} = g{i}" for i in range(300))  # > 256 names: EXTENDED_ARG on the later ones
    src = f"""
def f(x):
    global s, d
{attrs}
    s = len(x)
    del d
    def inner():
        return late_global + x
    class C:
        body_name = other_global
    return inner, C
"""
    mod: dict = {}
    exec(compile(src, "<wide>", "exec"), mod)
    code = mod["f"].__code__
    got = _fresh(code)
    assert got == _by_dis(code)
    assert {"g0", "g299", "s", "d", "len", "late_global", "other_global"} <= set(got)
    assert "a0" not in got and "x" not in got  # attributes and locals are not globals


def _module_codes(names: list[str]) -> list[types.CodeType]:
    """The code of every function and method defined in these modules (nested code is walked by both scans)."""
    import importlib

    found: dict[int, types.CodeType] = {}
    for name in names:
        mod = importlib.import_module(name)
        stack = list(vars(mod).values())
        while stack:
            v = stack.pop()
            if isinstance(v, types.FunctionType) and v.__module__ == mod.__name__:
                found[id(v.__code__)] = v.__code__
            elif isinstance(v, type) and v.__module__ == mod.__name__:
                stack.extend(x.__func__ if isinstance(x, staticmethod | classmethod) else x for x in vars(v).values())
    return list(found.values())


def test_the_same_names_as_dis_on_the_emulator_and_a_sample_of_the_standard_library() -> None:
    import runtime.emulator as emu
    import runtime.emulator.device as device

    ours = [m for m in sorted(sys.modules) if m.startswith(("runtime.emulator.", "runtime.verify"))]
    codes = _module_codes([*ours, emu.__name__, device.__name__, "ast", "dis", "inspect", "json.decoder",
                           "argparse", "dataclasses", "typing", "enum", "functools", "collections"])
    assert len(codes) > 1000
    wrong = [c for c in codes if _fresh(c) != _by_dis(c)]
    assert not wrong, wrong[:5]
