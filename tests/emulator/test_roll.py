"""Python ``range`` loops traced once as a device loop (`runtime.emulator._roll`, `_Interp._run_rolled`).

Why: every unrolled iteration of a ``range`` loop is traced, lowered, prepared and run as its own copy of the body
(attn_softmax: ~640 ops for four small calls, 40x its golden). Rolled, the same ops run on the same data in the same
order - so every test here compares the rolled run with the unrolled one (``Options(roll=False)``) bit for bit,
counters and diagnostics included, and checks the loops that must stay unrolled do."""

import ast
import textwrap

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator._errors import EmulatorError
from runtime.emulator._roll import plan_of
from runtime.emulator._session import Options

pypto = emu.install()


# ---------------------------------------------------------------------------------------------------------------
# the static decision


def _plan(src: str):
    tree = ast.parse(textwrap.dedent(src))
    loop = next(n for n in ast.walk(tree) if isinstance(n, ast.For))
    return plan_of(loop, {})


@pytest.mark.parametrize("src", [
    """
    for t in range(n):
        row = pypto.view(x, [1, 64], [m, t * 64], valid_shape=[1, 64])
        r = pypto.mul(pypto.cast(row, pypto.DT_FP32), scale)
        if t == 0:
            acc[:] = pypto.amax(r, dim=-1, keepdim=True)
        else:
            acc[:] = pypto.maximum(acc, pypto.amax(r, dim=-1, keepdim=True))
    """,
    """
    for t in range(1, n, 2):
        off = t * 16 - 16
        v = (n - off).min(16)
        tile = x.view([16, 64], [off, 0], valid_shape=[v, 64])
        pypto.assemble(tile + 1.0, [off, 0], out)
    """,
    """
    for t in range(n):
        pypto.set_vec_tile_shapes(16, 64)
        pypto.assemble(pypto.exp(pypto.view(x, [16, 64], [pypto.ceildiv(t * 32, 2), 0])), [t * 16, 0], out)
    """,
])
def test_loops_whose_iterations_differ_only_by_the_index_roll(src: str) -> None:
    assert _plan(src) is not None


@pytest.mark.parametrize("src,why", [
    ("for t in range(n):\n    acc = t * 2 + acc", "a carried integer"),
    ("for t in range(n):\n    if t > 2:\n        acc = pypto.exp(acc)", "carried, not assigned on every path"),
    ("for t in range(n):\n    acc[:] = pypto.exp(acc)\n    acc = pypto.exp(acc)", "carried and stored into"),
    ("for t in range(n):\n    if t > 0:\n        y = z\n    z = pypto.exp(y)", "read before assigned on a path"),
    ("for t in range(n):\n    v = pypto.view(x, [1, 64], [0, t / 2])", "t / 2 is a float for an int"),
    ("for t in range(n):\n    v = pypto.view(x, [1, 64], [0, offs[t]])", "indexing a list"),
    ("for t in range(n):\n    o = t * 64\n    v = pypto.view(x, [1, 64], [0, o / 2])", "derived from t"),
    ("for t in range(n):\n    v = pypto.view(x, [1, 64], [0, ~t])", "bitwise not"),
    ("for t in range(n):\n    v = helper(x, t)", "a Python function"),
    ("for t in range(n):\n    total += 1", "augmented assignment"),
    ("for t in range(n):\n    for m in pypto.loop(4):\n        pass", "a nested loop"),
    ("for t in range(n):\n    f = pypto.is_loop_begin(t)", "a loop construct"),
    ("for t in range(n):\n    v = pypto.view(x, [1, 64], [0, 64 if t else 0])", "a conditional expression"),
    ("for t in range(n):\n    pypto.set_vec_tile_shapes(1, max(t, 1))", "builtin max of t"),
    ("for t in range(n):\n    t = t + 1", "the body assigns the loop variable"),
    ("for t, u in range(n):\n    pass", "a tuple target"),
    ("for t in range(n):\n    x[t] = y", "a store indexed by t"),
    ("for t in range(n):\n    x[0], y = pypto.topk(z, 2)", "a store inside an unpacking"),
    ("for t in range(n):\n    cfg.last = pypto.exp(z)", "an attribute store"),
    ("for t in range(n):\n    y = (z := pypto.exp(x))", "a named expression"),
    ("for t in range(n):\n    v = pypto.view(x, [1, 64], [0, -t if t < 3 else t])", "a conditional expression"),
])
def test_loops_the_two_forms_could_disagree_on_stay_unrolled(src: str, why: str) -> None:
    assert _plan(src) is None, why


def test_a_tensor_read_before_the_body_assigns_it_is_carried() -> None:
    plan = _plan("""
    for _ in range(n):
        row = h.sum(1, keepdim=True)
        h = h / row + eps
        h = h / (h.sum(0, keepdim=True) + eps)
    """)
    assert plan is not None and plan.carried == {"h"} and plan.assigned == {"row", "h"}


def test_a_call_on_an_outer_name_is_checked_against_its_value_at_each_call() -> None:
    plan = _plan("for t in range(n):\n    tiles.append(pypto.exp(x))\n    acc[:] = pypto.exp(x)")
    assert plan is not None
    from runtime.emulator._tensor import Tensor

    def is_tensor(v: object) -> bool:
        return isinstance(v, Tensor | str)  # a stand-in tensor

    env = {"pypto": pypto, "tiles": "a tensor", "acc": "a tensor"}
    assert plan.callees_ok(env.get, is_tensor)
    assert not plan.callees_ok({**env, "tiles": []}.get, is_tensor)  # list.append: a Python side effect
    assert not plan.callees_ok({**env, "acc": [0.0]}.get, is_tensor)  # a store into a Python list
    assert not plan.callees_ok({**env, "pypto": np}.get, is_tensor)  # not the pypto module


# ---------------------------------------------------------------------------------------------------------------
# end to end: the rolled run against the unrolled one


@pypto.frontend.jit
def three_pass_softmax(scores: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_BF16),
                       out: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_BF16), scale: float, n: int):
    """attn_softmax's shape: a max pass and a sum pass carried in tensors (`if t == 0`), then independent tiles."""
    for m in pypto.loop(scores.shape[0], name="M_LOOP"):
        gmax = pypto.tensor([1], pypto.DT_FP32, "gmax")
        for t in range(n):
            pypto.set_vec_tile_shapes(1, 64)
            row = pypto.view(scores, [1, 64], [m, t * 64], valid_shape=[1, 64])
            tm = pypto.amax(pypto.mul(pypto.cast(row, pypto.DT_FP32), scale), dim=-1, keepdim=True)
            if t == 0:
                gmax[:] = tm
            else:
                gmax[:] = pypto.maximum(gmax, tm)
        tsum = pypto.tensor([1], pypto.DT_FP32, "tsum")
        for t in range(n):
            pypto.set_vec_tile_shapes(1, 64)
            row = pypto.view(scores, [1, 64], [m, t * 64], valid_shape=[1, 64])
            r = pypto.exp(pypto.sub(pypto.mul(pypto.cast(row, pypto.DT_FP32), scale), gmax))
            ts = pypto.sum(r, dim=-1, keepdim=True)
            if t == 0:
                tsum[:] = ts
            else:
                tsum[:] = pypto.add(tsum, ts)
        for t in range(n):
            pypto.set_vec_tile_shapes(1, 64)
            row = pypto.view(scores, [1, 64], [m, t * 64], valid_shape=[1, 64])
            r = pypto.exp(pypto.sub(pypto.mul(pypto.cast(row, pypto.DT_FP32), scale), gmax))
            pypto.assemble(pypto.cast(pypto.div(r, tsum), pypto.DT_BF16), [m, t * 64], out)


@pypto.frontend.jit
def tail_tiles(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64],
               pypto.DT_FP32), n: int):
    """Independent tiles with a tail computed from the index (`.min`): batched, then the tail per iteration."""
    pypto.set_vec_tile_shapes(16, 64)
    rows = x.shape[0]
    for t in range(n):
        v = (rows - t * 16).min(16)
        tile = pypto.view(x, [16, 64], [t * 16, 0], valid_shape=[v, 64])
        pypto.assemble(pypto.exp(tile) * 2.0, [t * 16, 0], out)


@pypto.frontend.jit
def warns_in_the_tail(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64],
                      pypto.DT_FP32), n: int):
    """sigmoid on a partial tile warns (EMU_SIGMOID_VALID): the rolled trace warns too, and is thrown away."""
    pypto.set_vec_tile_shapes(16, 64)
    rows = x.shape[0]
    for t in range(n):
        v = (rows - t * 16).min(16)
        tile = pypto.view(x, [16, 64], [t * 16, 0], valid_shape=[v, 64])
        pypto.assemble(pypto.sigmoid(tile), [t * 16, 0], out)


@pypto.frontend.jit
def reads_after(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    """The last iteration's `last` is read after the loop: only the unrolled form has it."""
    pypto.set_vec_tile_shapes(16, 16)
    for t in range(4):
        last = pypto.exp(pypto.view(x, [16, 16], [0, t * 16]))
        pypto.assemble(last, [0, t * 16], out)
    pypto.assemble(last * 2.0, [0, 48], out)


shadow = 5.0  # a module-level variable named like the loop's local


@pypto.frontend.jit
def reads_after_shadowed(x: pypto.Tensor([16, 64], pypto.DT_FP32), out: pypto.Tensor([16, 64], pypto.DT_FP32)):
    """`reads_after` with a module-level variable of the same name: after the rolled loop the name must not be the
    module's (the rolled trace left it unbound) but, as in Python, the last iteration's tile."""
    pypto.set_vec_tile_shapes(16, 16)
    for t in range(4):
        shadow = pypto.exp(pypto.view(x, [16, 16], [0, t * 16]))
        pypto.assemble(shadow, [0, t * 16], out)
    pypto.assemble(shadow * 2.0, [0, 48], out)


@pypto.frontend.jit
def parity(x: pypto.Tensor([16, 256], pypto.DT_FP32), out: pypto.Tensor([16, 256], pypto.DT_FP32), n: int):
    """A branch that differs between rolled iterations (a runtime guard) and offsets with // and %."""
    pypto.set_vec_tile_shapes(16, 32)
    for t in range(n):
        col = (t // 2) * 64 + (t % 2) * 32
        tile = pypto.view(x, [16, 32], [0, col])
        if t % 2 == 0:
            pypto.assemble(pypto.exp(tile), [0, col], out)
        else:
            pypto.assemble(tile * 3.0, [0, col], out)


@pypto.frontend.jit
def sinkhorn(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 16],
             pypto.DT_FP32), n: int, eps: float):
    """mhc_sinkhorn's shape: a tensor carried in a name through n normalisation steps, with a tail tile."""
    rows = x.shape[0]
    for b in pypto.loop(pypto.ceildiv(rows, 8), name="B"):
        v = (rows - b * 8).min(8)
        pypto.set_vec_tile_shapes(8, 16)
        h = pypto.exp(pypto.view(x, [8, 16], [b * 8, 0], valid_shape=[v, 16]))
        for _ in range(n):
            s = h.sum(1, keepdim=True)
            h = h / s + eps
            c = h.sum(0, keepdim=True)
            h = h / (c + eps)
        pypto.assemble(h, [b * 8, 0], out)


@pypto.frontend.jit
def carried_then_reassigned(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
    """The carried value changes its valid shape between iterations: the two forms would differ - unrolled."""
    pypto.set_vec_tile_shapes(8, 16)
    h = pypto.view(x, [8, 16], [0, 0])
    for t in range(4):
        h = pypto.view(pypto.exp(h), [8, 16], [0, 0], valid_shape=[8 - t, 16])
    pypto.assemble(h, [0, 0], out)


def _bf16(a: np.ndarray) -> np.ndarray:
    import ml_dtypes
    return a.astype(ml_dtypes.bfloat16)


def _run(kernel, args: list[np.ndarray], extra: tuple, roll: bool) -> tuple:
    kernel._cache.clear()
    arrays = [a.copy() for a in args]
    with emu.session(Options(roll=roll)) as s:
        err = None
        try:
            kernel(*arrays, *extra)
        except EmulatorError as e:
            err = (e.code, e.line)
    return arrays, s.counters, [(d.severity, d.code, d.line) for d in s.diagnostics], err, kernel.last_program


def _same(kernel, args: list[np.ndarray], extra: tuple) -> tuple:
    rolled = _run(kernel, args, extra, True)
    unrolled = _run(kernel, args, extra, False)
    for a, b in zip(rolled[0], unrolled[0], strict=True):
        assert a.tobytes() == b.tobytes()
    rc, uc = rolled[1].model_dump(), unrolled[1].model_dump()
    rc.pop("batched_iterations"), uc.pop("batched_iterations")
    assert rc == uc
    assert rolled[2] == unrolled[2]
    assert rolled[3] == unrolled[3]
    return rolled


@pytest.mark.parametrize("m,s", [(1, 1024), (3, 512), (2, 192), (1, 128)])
def test_a_three_pass_softmax_rolled_is_the_unrolled_one_bit_for_bit(m: int, s: int) -> None:
    rng = np.random.default_rng(m * 1000 + s)
    scores = _bf16(rng.standard_normal((m, s)).astype(np.float32))
    out = _bf16(np.zeros((m, s), np.float32))
    program = _same(three_pass_softmax, [scores, out], (0.0625, s // 64))[4]
    loops = [it.name for p in program.body.paths for it in p.items if hasattr(it, "body")]
    assert loops == ["M_LOOP"]
    inner = [it.name for lp in program.body.paths[0].items if hasattr(lp, "body")
             for p in lp.body.paths for it in p.items if hasattr(it, "body")]
    assert inner == ["<range t>"] * 3  # a first trace (`_run` empties the cache) rolls range(n) from one trip on
    rolled = [it for lp in program.body.paths[0].items if hasattr(lp, "body") for p in lp.body.paths
              for it in p.items if hasattr(it, "body")]
    # `if t == 0` is false in every rolled iteration (the first is traced unrolled): one path, no guard
    assert all(len(lp.body.paths) == 1 for lp in rolled)


@pytest.mark.parametrize("n", [3, 8])
def test_a_branch_that_differs_between_iterations_stays_a_runtime_branch(n: int) -> None:
    x = np.random.default_rng(n).standard_normal((16, 256)).astype(np.float32)
    rolled = _same(parity, [x, np.zeros_like(x)], (n,))
    (loop,) = [it for p in rolled[4].body.paths for it in p.items if hasattr(it, "body")]
    assert len(loop.body.paths) == 2
    out = rolled[0][1]
    for t in range(n):
        col = (t // 2) * 64 + (t % 2) * 32
        want = np.exp(x[:, col:col + 32]) if t % 2 == 0 else x[:, col:col + 32] * np.float32(3.0)
        assert np.array_equal(out[:, col:col + 32], want)


@pytest.mark.parametrize("rows", [256, 250, 200])
def test_independent_tiles_with_a_tail_roll_and_batch(rows: int) -> None:
    x = np.random.default_rng(rows).standard_normal((rows, 64)).astype(np.float32)
    rolled = _same(tail_tiles, [x, np.zeros_like(x)], (-(-rows // 16),))
    assert rolled[1].batched_iterations >= 2  # the iterations after the first ran as one batch


def test_a_name_read_after_the_loop_traces_the_kernel_again_unrolled() -> None:
    x = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    rolled = _same(reads_after, [x, np.zeros_like(x)], ())
    out = rolled[0][1]
    assert np.array_equal(out[:, 48:], np.exp(x[:, 48:]) * np.float32(2.0))
    assert reads_after._parsed.no_roll  # remembered: the next call does not try again


def test_a_name_read_after_the_loop_is_not_a_module_variable_of_the_same_name() -> None:
    x = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float32)
    rolled = _same(reads_after_shadowed, [x, np.zeros_like(x)], ())
    assert np.array_equal(rolled[0][1][:, 48:], np.exp(x[:, 48:]) * np.float32(2.0))
    assert reads_after_shadowed._parsed.no_roll


def test_a_rolled_trace_that_warns_is_thrown_away_with_its_warnings() -> None:
    x = np.random.default_rng(4).standard_normal((70, 64)).astype(np.float32)
    kept = []
    for roll in (True, False):
        _run(warns_in_the_tail, [x, np.zeros_like(x)], (5,), roll)
        kept.append(warns_in_the_tail._last_entry.warnings)  # what a cache hit will emit again
    assert warns_in_the_tail._parsed.no_roll
    # one per unrolled tile (the valid extent is symbolic in each), none left by the thrown-away rolled attempt
    assert [w[0] for w in kept[0]] == ["EMU_SIGMOID_VALID"] * 5 and kept[0] == kept[1]
    _same(warns_in_the_tail, [x, np.zeros_like(x)], (5,))


def test_a_session_puts_its_warnings_back_when_an_attempt_is_thrown_away() -> None:
    with emu.session() as s:
        s.warn("EMU_A", "kept", file="k.py", line=1)
        with s.capture_warnings() as got:
            with pytest.raises(KeyError), s.warnings_rewound_on(KeyError):
                s.warn("EMU_B", "thrown away", file="k.py", line=2)
                s.warn("EMU_A", "kept", file="k.py", line=1)
                raise KeyError
            assert got == []
            s.warn("EMU_B", "thrown away", file="k.py", line=2)  # not de-duplicated away: reported now
            with s.warnings_rewound_on(KeyError):
                s.warn("EMU_C", "no exception: stays", file="k.py", line=3)
    assert [d.code for d in s.diagnostics] == ["EMU_A", "EMU_B", "EMU_C"]
    assert [g[0] for g in got] == ["EMU_B", "EMU_C"]


def test_nested_captures_holding_equal_lists_close_in_their_own_order() -> None:
    """Mutation sweep s30: two correct attn_softmax variants failed verification with "list.remove(x): x not in list"
    - the inner capture's exit removed the outer one's list (equal contents, `remove` compares by value)."""
    with emu.session() as s:
        with s.capture_warnings() as outer:
            with s.capture_warnings() as inner:
                s.warn("EMU_A", "both see it", file="k.py", line=1)
                assert inner == outer
            s.warn("EMU_B", "only the outer one", file="k.py", line=2)
        assert [g[0] for g in outer] == ["EMU_A", "EMU_B"] and [g[0] for g in inner] == ["EMU_A"]
        s.warn("EMU_C", "no capture open", file="k.py", line=3)
    assert [g[0] for g in outer] == ["EMU_A", "EMU_B"]


def test_a_runtime_error_in_a_rolled_loop_keeps_its_code_and_line() -> None:
    x = np.random.default_rng(2).standard_normal((77, 64)).astype(np.float32)
    rolled = _run(tail_tiles, [x, np.zeros_like(x)], (6,), True)  # 6 tiles of 16 rows: the sixth starts past 77
    unrolled = _run(tail_tiles, [x, np.zeros_like(x)], (6,), False)
    assert rolled[3] is not None and rolled[3] == unrolled[3]


def test_record_mode_sees_every_iteration_unrolled() -> None:
    x = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    tail_tiles._cache.clear()
    with emu.session(Options(record=True)) as s:
        tail_tiles(x, np.zeros_like(x), 4)
    program = tail_tiles.last_program
    assert program is not None and not any(hasattr(it, "body") for p in program.body.paths for it in p.items)
    assert {r.line for r in s.records}  # one record per op and tile, as before


@pytest.mark.parametrize("rows,n", [(8, 19), (21, 19), (16, 3), (5, 2)])
def test_a_carried_tensor_rolled_is_the_unrolled_one_bit_for_bit(rows: int, n: int) -> None:
    x = np.random.default_rng(rows * n).standard_normal((rows, 16)).astype(np.float32)
    rolled = _same(sinkhorn, [x, np.zeros_like(x)], (n, 1e-6))
    program = rolled[4]
    ops = program.count_ops()
    kinds = [it.kind for p in program.body.paths for lp in p.items if hasattr(lp, "body") for q in lp.body.paths
             for it in q.items if hasattr(it, "kind")]
    assert kinds.count("carry") == 1 and ops < 30  # rolled (a range(n) loop, from one trip on): one copy, not n


def test_a_carried_value_whose_type_changes_is_unrolled() -> None:
    x = np.random.default_rng(5).standard_normal((8, 16)).astype(np.float32)
    _same(carried_then_reassigned, [x, np.zeros_like(x)], ())
    assert carried_then_reassigned._parsed.no_roll
