"""Session 40's executor trims keep their meaning, counted in Python calls (deterministic, load-independent).

* a per-iteration op is accounted inline in `_exec._run_region`: no executor function runs once per op, so the
  executor's own Python calls do not grow with the number of ops in a body (only with regions and loops);
* the batched and per-iteration accounting ask `Env.count_param_reads` only for an op that reads a kernel argument
  whole (`XOp.param_reads`), never for views;
* preparing a program asks `divergence_warning` only for the kinds it can name (reduce, binary).

And the counters the inline accounting gives are those of a run through the batch executor (same kernel, same
sizes) and of the codec's round trip.
"""

import sys
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

import numpy as np

import runtime.emulator as emu
from runtime.emulator import _executor
from runtime.emulator.device import ExecOptions, execute
from runtime.emulator.device import _exec as exec_mod

pypto = emu.install()


@pypto.frontend.jit
def short(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 16)
    for i in pypto.loop(x.shape[0], name="ROWS"):
        t = pypto.view(x, [1, 16], [i, 0])
        pypto.assemble(t * 2.0 + 1.0, [i, 0], y)


@pypto.frontend.jit
def longer(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 16)
    for i in pypto.loop(x.shape[0], name="ROWS"):
        t = pypto.view(x, [1, 16], [i, 0])
        u = pypto.exp(t * 2.0 + 1.0)
        pypto.assemble(pypto.sub(pypto.mul(u, 0.5), t), [i, 0], y)


@pypto.frontend.jit
def whole(x: pypto.Tensor([4, 16], pypto.DT_FP32), z: pypto.Tensor([4, 16], pypto.DT_FP32),
          y: pypto.Tensor([4, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 16)
    y[:] = pypto.add(x, z)


def _calls(fn: Callable[[], Any]) -> Counter:
    """Python function calls made while ``fn`` runs, by (file name, function name)."""
    seen: Counter = Counter()

    def prof(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            co = frame.f_code
            seen[(co.co_filename.rsplit("/", 1)[-1], co.co_name)] += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return seen


def _run(k: Any, rows: int) -> tuple[Counter, Any, np.ndarray]:
    x = (np.arange(rows * 16, dtype=np.float32).reshape(rows, 16) - 24) / np.float32(64)  # rows agree across sizes
    y = np.zeros_like(x)
    program = k.program(x, y)
    got: list[Any] = []
    calls = _calls(lambda: got.append(execute(program, [x, y], ExecOptions())))
    return calls, got[0], y


def _exec_calls(c: Counter) -> dict[str, int]:
    return {name: n for (f, name), n in c.items() if f == "_exec.py"}


def test_the_executor_makes_no_call_per_op() -> None:
    a, ra, _ = _run(short, 3)  # 3 rows: fewer than a batch, run per iteration
    b, rb, _ = _run(longer, 3)
    assert ra.error is None and rb.error is None
    assert sum(ra.counters["ops"].values()) < sum(rb.counters["ops"].values())  # more ops per iteration ...
    assert _exec_calls(a) == _exec_calls(b)  # ... and the same executor calls: none of them is per op
    assert _exec_calls(a)["_run_region"] == 4  # the kernel body and three iterations


def test_param_reads_are_asked_only_of_ops_that_read_an_argument_whole() -> None:
    for rows in (3, 8):  # per iteration, then batched: views and assembles only touch windows
        c, res, _ = _run(longer, rows)
        assert res.error is None and c[("_env.py", "count_param_reads")] == 0
    x = np.ones((4, 16), dtype=np.float32)
    program = whole.program(x, x, np.zeros_like(x))
    c = _calls(lambda: execute(program, [x, x.copy(), np.zeros_like(x)], ExecOptions()))
    assert c[("_env.py", "count_param_reads")] == 1  # the add reads both arguments whole


def test_divergence_is_asked_only_of_the_kinds_that_can_diverge() -> None:
    x = np.ones((3, 16), dtype=np.float32)
    program = longer.program(x, np.zeros_like(x))
    c = _calls(lambda: _executor.prepared_for(program).paths[0].items[0].body)
    kinds = Counter(op.kind for op in program.ops())
    assert c[("_divergence.py", "divergence_warning")] == kinds["binary"] + kinds["reduce"] > 0
    assert c[("_prepare.py", "_op")] == sum(kinds.values())


def test_inline_accounting_counts_what_the_batch_counts() -> None:
    _, per, y_per = _run(longer, 3)
    _, bat, y_bat = _run(longer, 8)  # 8 rows: batched
    assert bat.counters["batched_iterations"] == 8 and per.counters["batched_iterations"] == 0
    for name, n in per.counters["ops"].items():
        assert bat.counters["ops"][name] * 3 == n * 8, name
    for field in ("tiles", "elements", "bytes_in", "bytes_out"):
        assert bat.counters[field] * 3 == per.counters[field] * 8, field
    assert y_per.tobytes() == y_bat[:3].tobytes()
    x = np.linspace(-1, 1, 3 * 16, dtype=np.float32).reshape(3, 16)
    _executor.run_checked(longer.program(x, np.zeros_like(x)), [x, np.zeros_like(x)], ExecOptions())


def test_the_carry_op_is_not_counted() -> None:
    assert exec_mod.run_region is not None  # the module keeps its public walk
    from runtime.emulator.device._prepare import XOp

    class _Op:
        kind, name, file, line, ins, out_key, tile_elems, cls, gm_write, params = \
            "carry", "carry", None, 0, (1,), None, 0, "x", False, {}

    assert XOp(_Op(), lambda env: None, None).counted is False  # type: ignore[arg-type]
    _Op.kind = _Op.name = "move"
    x = XOp(_Op(), lambda env: None, None)  # type: ignore[arg-type]
    assert x.counted is True and x.sized is False
