"""F21007: a kernel argument read through a view and assembled back into in one group (session 49).

Found by the s49 operators (a greedy argmax keeping its running best in its output): the real pypto 0.2.0 wheel
refuses the graph at compile time with ``Errcode: F21007! Operation already in a group``, the emulator ran it.
Eleven probes on the wheel (SIM, one process each; runtime/emulator/_group_cycle.py lists them) give the rule
these kernels pin: refused - in place on a slice, per row in a loop, another region of the same argument, the
previous row of a running scan, a cycle through a second argument, the argmax pattern; compiled - one argument read
and another written, the whole ``y[:] = y * 2``, and a cycle split by a loop boundary. ``--compat 0.2.0`` refuses
as the wheel does; ``head`` runs them as before (not observed; the corpus holds such forms as clean HEAD kernels).
"""

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32
A = [32, 64]


@pypto.frontend.jit
def in_place_slice(x: pypto.Tensor(A, pypto.DT_FP32), y: pypto.Tensor(A, pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[0:16, :] = pypto.mul(y[0:16, :], 2.0)


@pypto.frontend.jit
def scan_previous_row(x: pypto.Tensor(A, pypto.DT_FP32), y: pypto.Tensor(A, pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(1, 32, 1, name="L", idx_name="i"):
        prev = pypto.view(y, [1, 64], [i - 1, 0])
        y[i:i + 1, :] = prev + pypto.view(x, [1, 64], [i, 0])


@pypto.frontend.jit
def cycle_through_second_argument(x: pypto.Tensor(A, pypto.DT_FP32), y: pypto.Tensor(A, pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[0:16, :] = pypto.view(x, [16, 64], [0, 0]) + 1.0
    x[16:32, :] = pypto.view(y, [16, 64], [0, 0]) * 2.0


@pypto.frontend.jit
def running_best(x: pypto.Tensor(A, pypto.DT_FP32), y: pypto.Tensor(A, pypto.DT_FP32)):
    for b in pypto.loop(32, name="L", idx_name="b"):
        pypto.set_vec_tile_shapes(1, 64)
        y[b:b + 1, :] = pypto.view(x, [1, 64], [b, 0])
        prev = pypto.view(y, [1, 64], [b, 0])
        y[b:b + 1, :] = pypto.maximum(prev, pypto.view(x, [1, 64], [b, 0]) * 2.0)


@pypto.frontend.jit
def read_one_write_other(x: pypto.Tensor(A, pypto.DT_FP32), y: pypto.Tensor(A, pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    x[0:16, :] = pypto.view(y, [16, 64], [0, 0]) + 1.0


@pypto.frontend.jit
def whole_move(x: pypto.Tensor(A, pypto.DT_FP32), y: pypto.Tensor(A, pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    y[:] = y * 2.0


@pypto.frontend.jit
def cycle_split_by_loops(x: pypto.Tensor(A, pypto.DT_FP32), y: pypto.Tensor(A, pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(1, 64)
    for i in pypto.loop(32, name="L1", idx_name="i"):
        y[i:i + 1, :] = pypto.view(x, [1, 64], [i, 0]) + 1.0
    for j in pypto.loop(32, name="L2", idx_name="j"):
        x[j:j + 1, :] = pypto.view(y, [1, 64], [j, 0]) * 2.0


REFUSED = [in_place_slice, scan_previous_row, cycle_through_second_argument, running_best]
COMPILED = [read_one_write_other, whole_move, cycle_split_by_loops]


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    g = np.random.default_rng(49)
    return g.standard_normal(A).astype(F32), g.standard_normal(A).astype(F32)


@pytest.mark.parametrize("kernel", REFUSED, ids=lambda k: k.__name__)
def test_refused_as_the_wheel_refuses_under_020(kernel) -> None:  # noqa: ANN001 - a jit kernel
    """Each ran before s49; the wheel: F21007 at compile time."""
    x, y = _inputs()
    with pytest.raises(emu.EmulatorError) as info, emu.session(emu.Options(compat="0.2.0")):
        kernel(x, y)
    assert info.value.code == "F21007" and "Operation already in a group" in str(info.value)


@pytest.mark.parametrize("kernel", COMPILED, ids=lambda k: k.__name__)
def test_compiled_forms_still_run_without_a_warning(kernel) -> None:  # noqa: ANN001 - a jit kernel
    x, y = _inputs()
    with emu.session(emu.Options(compat="0.2.0")) as s:
        kernel(x, y)
    assert not [d for d in s.diagnostics if d.code == "F21007"]


def test_head_runs_them_as_before() -> None:
    """Under HEAD (not observed) the refused forms run without a diagnostic; their numbers are the sequential ones."""
    x, y = _inputs()
    y0 = y.copy()
    with emu.session() as s:
        running_best(x, y)
    assert not s.diagnostics
    np.testing.assert_array_equal(y, np.maximum(x, x * 2.0))
    x2, y2 = _inputs()
    with emu.session() as s:
        scan_previous_row(x2, y2)
    expect = y0.copy()
    for i in range(1, 32):
        expect[i] = expect[i - 1] + x2[i]
    np.testing.assert_allclose(y2, expect, rtol=1e-6, atol=1e-5)
