"""`_trace_cache._code_globals` reads a function's global names from its bytecode, the same names as ``dis``.

Why: the cache key of a kernel that calls helper functions fingerprints the globals each helper loads; with
``dis.get_instructions`` that cost ~0.1-0.5 ms per helper on the kernel's first call (sum_lstm: about a
millisecond of a 20 ms first call). The direct scan must not miss a name - a missed global would let a changed
value hit a stale trace - so it is compared with ``dis`` on every code object of the running process, on
arguments wider than one byte (``EXTENDED_ARG``) and on every kind of global access.
"""

import dis
import gc
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


def test_the_same_names_as_dis_on_every_code_object_of_the_process() -> None:
    import runtime.emulator  # noqa: F401 - its code objects are part of the sample

    codes = {id(o): o for o in gc.get_objects() if isinstance(o, types.CodeType)}
    codes.update({id(f.__code__): f.__code__ for f in gc.get_objects() if isinstance(f, types.FunctionType)})
    assert len(codes) > 1000
    wrong = [c for c in codes.values() if _fresh(c) != _by_dis(c)]
    assert not wrong, wrong[:5]
