"""The executor drops an intermediate after its last reader, so a kernel's peak memory follows its live values.

Why: it used to keep every op result until the call ended - a gym optimizer kernel with 20 ops on whole
56 MB tiles held 1.2 GB beside 392 MB of arguments. numpy reports its allocations to tracemalloc, so the
peak here is the executor's own memory, deterministically.
"""

import tracemalloc
from typing import Any

import numpy as np

import runtime.emulator as emu
from runtime.emulator.device import ExecOptions, execute

pypto = emu.install()
R, C = 512, 1024


@pypto.frontend.jit
def chain(x: pypto.Tensor([R, C], pypto.DT_FP32), y: pypto.Tensor([R, C], pypto.DT_FP32),
          out: pypto.Tensor([R, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, C)
    for i in pypto.loop(1):
        a = pypto.view(x, [R, C], [i * R, 0])
        b = pypto.view(y, [R, C], [i * R, 0])
        t = a * b
        t = t + a
        t = t * 0.5
        t = pypto.exp(t * 0.01)
        t = t - b
        t = t * t
        t = pypto.sqrt(t + 1.0)
        t = t / (a * a + 1.0)
        t = t + b * 0.25
        pypto.assemble(t, [i * R, 0], out)


@pypto.frontend.jit
def reuse_after_loop(x: pypto.Tensor([64, C], pypto.DT_FP32), out: pypto.Tensor([64, C], pypto.DT_FP32),
                     out2: pypto.Tensor([64, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, C)
    for _i in pypto.loop(2):
        t = pypto.view(x, [64, C], [0, 0]) * 2.0
        pypto.assemble(t, [0, 0], out)
    pypto.assemble(t + 1.0, [0, 0], out2)  # the last iteration's t, read after its loop: kept alive


def test_intermediates_are_dropped_and_results_unchanged() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((R, C)).astype(np.float32), rng.standard_normal((R, C)).astype(np.float32)
    program = chain.program(x, y, np.zeros_like(x))
    out = np.zeros_like(x)
    tracemalloc.start()
    try:
        res = execute(program, [x, y, out], ExecOptions())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.error is None
    a, b = x, y
    t = ((a * b + a) * np.float32(0.5))
    t = np.sqrt((np.exp(t * np.float32(0.01)) - b) ** 2 + np.float32(1.0)) / (a * a + np.float32(1.0)) + b * np.float32(0.25)
    np.testing.assert_allclose(out, t, rtol=1e-5, atol=1e-6)
    tile = x.nbytes
    # 11 results of one tile each were all alive before; now at most the operands of one op and its result
    assert peak <= 4 * tile, peak / tile


def test_a_value_read_after_its_loop_is_kept() -> None:
    x = np.random.default_rng(1).standard_normal((64, C)).astype(np.float32)
    out, out2 = np.zeros_like(x), np.zeros_like(x)
    with emu.session():
        reuse_after_loop(x, out, out2)
    assert out2.tobytes() == (x * np.float32(2.0) + np.float32(1.0)).tobytes()


# ---- the interval formulation of `_liveness` against the chain formulation it replaced --------------------

def _op_keys(op: Any) -> tuple[set[int], set[int]]:
    """(keys the op uses in any way, keys it produces as new values), read from its kind's schema: the per-op key
    extraction the first `_liveness` used (`_Live.walk` now does it inline)."""
    from runtime.emulator.device._prepare import _expr_keys, _fields

    used = {*op.ins, *op.outs, *op.writes}
    if op.out_key is not None:
        used.add(op.out_key)
    key_f, keys_f, expr_f, exprs_f, prod_f = _fields(op.kind)
    params = op.params
    for name in key_f:
        if params.get(name) is not None:
            used.add(params[name])
    for name in keys_f:
        if params.get(name) is not None:
            used.update(params[name])
    for name in expr_f:
        if type(params.get(name)) is tuple:
            _expr_keys(params[name], used)
    for name in exprs_f:
        for x in params.get(name) or ():
            if type(x) is tuple:
                _expr_keys(x, used)
    produced = set(op.outs) | {params[name] for name in prod_f if params.get(name) is not None}
    return used, produced


def _reference_free(body: Any, params: set[int]) -> dict[int, tuple[int, ...]]:
    """The drops as the first `_liveness` computed them (each use's chain of enclosing items, compared), by
    id of the item they follow."""
    from runtime.emulator.device._prepare import XGuard, XLoop, XOp, _expr_keys

    uses: dict[int, list[tuple]] = {}
    producers: dict[int, list[tuple]] = {}
    written: set[int] = set()
    regions: dict[int, Any] = {}

    def walk(r: Any, chain: tuple) -> None:
        regions[id(r)] = r
        for p in r.paths:
            for i, it in enumerate(p.items):
                here = chain + ((id(r), i),)
                ks: set[int] = set()
                if type(it) is XOp:
                    used, produced = _op_keys(it.op)
                    written.update(it.op.writes)
                    ks = used
                    for k in produced:
                        producers.setdefault(k, []).append(here)
                elif type(it) is XLoop:
                    for e in (it.lp.start, it.lp.stop, it.lp.step):
                        _expr_keys(e, ks)
                    walk(it.body, here)
                elif type(it) is XGuard:
                    _expr_keys(it.expr, ks)
                for k in ks:
                    uses.setdefault(k, []).append(here)

    walk(body, ())
    drops: dict[tuple[int, int], list[int]] = {}
    for k, prods in producers.items():
        if k in params or k in written or len(prods) != 1:
            continue
        chain = prods[0]
        rid, pos = chain[-1]
        if len(regions[rid].paths) != 1:
            continue
        depth, last, ok = len(chain) - 1, pos, True
        for u in uses.get(k, ()):
            if len(u) <= depth or u[:depth] != chain[:depth] or u[depth][0] != rid or u[depth][1] < pos:
                ok = False
                break
            last = max(last, u[depth][1])
        if ok:
            drops.setdefault((rid, last), []).append(k)
    return {id(regions[rid].paths[0].items[i]): tuple(sorted(ks)) for (rid, i), ks in drops.items()}


def _actual_free(body: Any) -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    stack = [body]
    while stack:
        for p in stack.pop().paths:
            for it in p.items:
                if getattr(it, "free", ()):
                    out[id(it)] = it.free
                if hasattr(it, "lid"):
                    stack.append(it.body)
    return out


def test_liveness_matches_the_chain_formulation_on_every_corpus_kernel(corpus_module: Any) -> None:
    """Every corpus kernel call (loops, nested loops, several control paths, values carried across iterations):
    the drops of `prepare` are exactly those of the formulation it replaced - so memory and results are too."""
    from test_corpus import CASES, _run_case

    from runtime.emulator import _executor
    from runtime.emulator.device._prepare import prepare

    seen = dropped = 0

    def check(program: Any, args: list[np.ndarray], options: ExecOptions, **kw: Any) -> Any:
        nonlocal seen, dropped
        body = prepare(program, options.npuarch)
        got = _actual_free(body)
        assert got == _reference_free(body, {p.key for p in program.params}), program.kernel
        seen += 1
        dropped += len(got)
        return _executor.run_in_process(program, args, options)

    for module, case_name in CASES:
        case = getattr(corpus_module(module), case_name)()
        with _executor.use(check), emu.session() as s:
            _run_case(case, s, emu)
    assert seen >= 40 and dropped >= 40, (seen, dropped)
