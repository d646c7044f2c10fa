"""Loop bodies are prepared when their loop first runs (`device._prepare.XLoop.body`), not before the call.

Why: ``pypto.loop_unroll`` traces one loop per unroll factor and at a given size only one or two of them run
(``llada2_gate_select``: 8 variants, the largest ~150 ops); preparing the others was most of its preparation.
The lazy form must run exactly like the eager one it replaced: same bytes, counters, warnings and errors on
every corpus kernel, and a loop that never runs is never prepared.
"""

from typing import Any

import numpy as np

import runtime.emulator as emu
from runtime.emulator.device import ExecOptions, execute
from runtime.emulator.device._prepare import XLoop, XRegion, prepare

pypto = emu.install()


@pypto.frontend.jit
def unrolled(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    n = x.shape[0]
    for i, k in pypto.loop_unroll(0, n, 1, name="U", idx_name="i", unroll_list=[8, 4, 1]):
        t = pypto.view(x, [k, 16], [i, 0])
        pypto.assemble(t * (k * 1.0) + 1.0, [i, 0], y)


def _loops(body: XRegion, *, force: bool) -> list[XLoop]:
    """Every loop of a prepared body; with ``force``, preparing each loop body (the eager form)."""
    out: list[XLoop] = []
    stack = [body]
    while stack:
        for p in stack.pop().paths:
            for it in p.items:
                if type(it) is XLoop:
                    out.append(it)
                    if force or it._body is not None:
                        stack.append(it.body)
    return out


def test_a_loop_that_never_runs_is_not_prepared() -> None:
    x = np.arange(5 * 16, dtype=np.float32).reshape(5, 16)
    program = unrolled.program(x, np.zeros_like(x))
    body = prepare(program)
    loops = _loops(body, force=False)
    assert [lp._body is None for lp in loops] == [True, True, True]
    y = np.zeros_like(x)
    res = execute(program, [x, y], prepared=body)
    assert res.error is None
    ran = {lp.name: lp._body is not None for lp in _loops(body, force=False)}
    assert ran == {"U_LoopUnroll8": False, "U_LoopUnroll4": True, "U_LoopUnroll1": True}  # 5 = 4 + 1
    want = np.concatenate([x[:4] * np.float32(4.0), x[4:] * np.float32(1.0)]) + np.float32(1.0)
    assert y.tobytes() == want.tobytes()
    z = np.zeros_like(x)  # a second call on the same prepared body (as the trace cache does) reuses it
    assert execute(program, [x, z], prepared=body).counters == res.counters and z.tobytes() == y.tobytes()


def test_lazy_and_eager_preparation_run_every_corpus_kernel_alike(corpus_module: Any) -> None:
    """Every corpus kernel call (loops, nested loops, runtime ifs, tails, bf16/fp16, errors): run on a body whose
    loops are all prepared first (the eager form) and on a lazy one - same bytes, error, warnings, counters."""
    from test_corpus import CASES, _run_case

    from runtime.emulator import _executor

    seen = 0

    def both(program: Any, args: list[np.ndarray], options: ExecOptions, **kw: Any) -> Any:
        nonlocal seen
        eager = prepare(program, options.npuarch)
        _loops(eager, force=True)
        copies = [a.copy() for a in args]
        want = execute(program, copies, options, prepared=eager)
        got = execute(program, args, options)
        assert [a.tobytes() for a in args] == [c.tobytes() for c in copies], program.kernel
        for f in ("error", "warnings", "counters", "written"):
            assert getattr(got, f) == getattr(want, f), (program.kernel, f)
        seen += 1
        return got

    for module, case_name in CASES:
        case = getattr(corpus_module(module), case_name)()
        with _executor.use(both), emu.session() as s:
            _run_case(case, s, emu)
    assert seen >= 40, seen
