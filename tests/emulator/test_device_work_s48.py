"""Session 48 (issue #31): lowering, preparation and the executor do less Python per op - and the same thing.

Each shortcut is checked against the formulation it replaced: lowering's parameter conversion decided per kind and
tuple of value types (`_lower._KPlan`) against the per-parameter test on every corpus kernel; preparation's single
walk (`_prepare._Live`: declared dtypes, meta ops, matmul) against `_promote.declared_dtypes`, the meta-op fixed point
over `KernelProgram.ops` and ``any(matmul)``; the view's in-bounds fast path against its per-axis checks on a grid of
windows (in bounds, leaving the source, past the valid extent, negative, clipped)."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator import _executor, _lower
from runtime.emulator._errors import EmulatorError
from runtime.emulator._ir import OpNode
from runtime.emulator.device._env import Env
from runtime.emulator.device._kreg import KINDS
from runtime.emulator.device._prepare import _Ctx, _Live, _param_aliases
from runtime.emulator.device._promote import bf16_promoted, declared_dtypes
from runtime.emulator.device._types import ExecOptions

emu.install()


# ---- lowering -------------------------------------------------------------------------------------------------

def _reference_params(lw: Any, n: OpNode) -> dict[str, Any]:
    """The parameters as `_Lowering.op` converted them before session 48: every schema parameter tested in turn."""
    out = {}
    for name, t in KINDS[n.impl].schema.items():
        v = n.params.get(name)
        plain = _lower._PLAIN.get(t) or (str if t.startswith("enum:") and not t.endswith("?") else None)
        nullable = t.endswith("?")
        out[name] = v if type(v) is plain or (v is None and nullable) else _lower._converter(t)(lw, v, name)
    return out


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray | np.generic):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def test_lowering_converts_what_the_per_parameter_test_converted_on_every_corpus_kernel(
        corpus_module: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Same parameter names in the same order, same values of the same types, same key tuples, same output types."""
    from test_corpus import CASES, _run_case

    seen = converted = 0
    orig = _lower._Lowering.op

    def checked(self: Any, n: OpNode) -> Any:
        nonlocal seen, converted
        got = orig(self, n)
        ref = _reference_params(self, n)
        assert list(got.params) == list(ref), n.impl
        for name in ref:
            assert _same(got.params[name], ref[name]), (n.impl, name, got.params[name], ref[name])
            converted += got.params[name] is not n.params.get(name)
        assert got.ins == _lower._keys(n.ins) and got.outs == _lower._keys(n.outs)
        assert got.writes == _lower._keys(n.writes)
        assert got.types == tuple((_lower._dtype_name(d), int(r)) for d, r in n.types)
        seen += 1
        return got

    monkeypatch.setattr(_lower._Lowering, "op", checked)
    for module, case_name in CASES:
        case = getattr(corpus_module(module), case_name)()
        with emu.session() as s:
            _run_case(case, s, emu)
    assert seen >= 200 and converted >= 50, (seen, converted)


class _Liar(type):
    """A metaclass whose classes claim to be ``int`` to ``==`` and ``hash`` (a candidate can write one)."""

    def __eq__(cls, other: object) -> bool:
        return True

    def __hash__(cls) -> int:
        return hash(int)


class _FakeInt(metaclass=_Liar):
    def __int__(self) -> int:
        return 7

    def __index__(self) -> int:
        return 7


def _view_node(src: Any, ins: tuple) -> OpNode:
    params = {"src": src, "out": 3, "offs": [0, 0], "shape": [1, 4], "vs": None, "name": "x", "param": True,
              "copy": False}
    return OpNode(name="view", impl="view", params=params, out_key=3, file="k.py", line=1, ins=ins, outs=(3,))


def test_a_type_that_claims_to_be_int_is_converted_not_taken_as_is() -> None:
    """The parameters to convert are chosen by the identity of the values' types, never by their ``==``: a value of
    a class equal (and hash-equal) to ``int`` goes through the converter (`int()`), and its signature is not kept."""
    lw = _lower._Lowering()
    plain = lw.op(_view_node(2, (2,)))
    assert plain.params["src"] == 2 and plain.ins == (2,)
    kp = _lower._KPLANS["view"]
    before = dict(kp.todos)
    fake = lw.op(_view_node(_FakeInt(), (_FakeInt(),)))
    assert type(fake.params["src"]) is int and fake.params["src"] == 7
    assert fake.ins == (7,) and type(fake.ins[0]) is int
    assert kp.todos == before  # nothing remembered for a signature holding a class of the candidate's


# ---- preparation: one walk for four facts -------------------------------------------------------------------

def _reference_aliases(program: Any, keys: frozenset[int]) -> frozenset[int]:
    out = set(keys)
    metas = [(op.ins[0], op.out_key) for op in program.ops() if op.cls == "meta" and op.ins and op.out_key is not None]
    grew = True
    while grew:
        grew = False
        for src, key in metas:
            if src in out and key not in out:
                out.add(key)
                grew = True
    return frozenset(out)


def test_the_single_walk_finds_what_the_four_walks_found_on_every_corpus_kernel(corpus_module: Any) -> None:
    from test_corpus import CASES, _run_case

    seen = promoted = metas = 0

    def check(program: Any, args: list[np.ndarray], options: ExecOptions, **kw: Any) -> Any:
        nonlocal seen, promoted, metas
        keys = frozenset(p.key for p in program.params)
        for arch in ("DAV_2201", "DAV_3510"):
            lv = _Live({p.key: p.dtype for p in program.params} if bf16_promoted(arch) else None)
            lv.walk(program.body)
            if bf16_promoted(arch):
                assert lv.declared == declared_dtypes(program)
                promoted += 1
            else:
                assert lv.declared is None
            assert _param_aliases(lv.metas, keys) == _reference_aliases(program, keys)
            assert lv.matmul == any(op.kind == "matmul" for op in program.ops())
        metas += bool(lv.metas)
        seen += 1
        return _executor.run_in_process(program, args, options, **kw)

    for module, case_name in CASES:
        case = getattr(corpus_module(module), case_name)()
        with _executor.use(check), emu.session() as s:
            _run_case(case, s, emu)
    assert seen >= 40 and promoted >= 40, (seen, promoted)


# ---- the view's fast path -------------------------------------------------------------------------------------

def _run_view(arr: np.ndarray, valid: Any, offs: list[int], shape: list[int], vs: list[int] | None,
              oob: str) -> tuple:
    p = {"src": 0, "out": 1, "offs": offs, "shape": shape, "vs": vs, "name": "x", "param": True, "copy": False}
    run, _ = KINDS["view"].build(p, None, _Ctx())
    env = Env(ExecOptions(out_of_bounds=oob))  # type: ignore[arg-type]
    env.buf[0] = (arr, valid)
    env.node = SimpleNamespace(file="k.py", line=3, name="view")
    try:
        run(env)
    except EmulatorError as exc:
        return ("error", exc.code, str(exc))
    res, vout = env.buf[1]
    return ("ok", res.shape, res.dtype, res.tobytes(), tuple(vout), env.bytes_in, [w.message for w in env.warnings])


def test_the_view_fast_path_gives_the_per_axis_result_on_every_window() -> None:
    """A source whose valid shape is a list takes the per-axis path (the fast path wants a tuple): both must agree
    on every window of a grid - results, valid extents, bytes, errors and warnings."""
    arr = np.arange(6 * 8, dtype=np.float32).reshape(6, 8)
    fast = 0
    for valid, (o0, o1), (s0, s1), vs, oob in itertools.product(
            [(6, 8), (4, 5)], itertools.product([-1, 0, 2, 5, 6], [0, 3, 7, 8]), [(1, 4), (2, 8), (0, 2)],
            [None, "same", "small", "big"], ["raise", "clip"]):
        want = None if vs is None else {"same": [s0, s1], "small": [max(0, s0 - 1), 1], "big": [s0 + 1, s1]}[vs]
        a = _run_view(arr, tuple(valid), [o0, o1], [s0, s1], want, oob)
        b = _run_view(arr, list(valid), [o0, o1], [s0, s1], want, oob)
        assert a == b, (valid, (o0, o1), (s0, s1), want, oob)
        fast += a[0] == "ok" and not a[-1]
    assert fast >= 40
