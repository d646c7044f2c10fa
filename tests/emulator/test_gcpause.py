"""The cyclic garbage collector is paused for a kernel call (`runtime/emulator/_gcpause.py`) and restored after it.

Why the pause is safe: a kernel call must not leave arrays in cyclic garbage (they would stay allocated until the
next collection); the last test runs kernels with the collector off and looks at what only it could free."""

import collections
import gc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator import _executor, _gcpause
from runtime.emulator.device import ExecOptions, ExecResult, KernelProgram

pypto = emu.install()


@pypto.frontend.jit
def add_one(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 16)):
        v = (n - i * 16).min(16)
        t = pypto.view(x, [16, 64], [i * 16, 0], valid_shape=[v, 64])
        pypto.assemble(t + 1.0, [i * 16, 0], out)


@pytest.fixture(autouse=True)
def _collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    try:
        yield
    finally:
        (gc.enable if was else gc.disable)()


def _observing(seen: list[bool]) -> Any:
    def ex(program: KernelProgram, args: list[np.ndarray], options: ExecOptions) -> ExecResult:
        seen.append(gc.isenabled())
        return _executor.run_in_process(program, args, options)
    return ex


def test_off_during_the_call_on_after() -> None:
    seen: list[bool] = []
    x = np.arange(77 * 64, dtype=np.float32).reshape(77, 64)
    out = np.zeros_like(x)
    with _executor.use(_observing(seen)), emu.session():
        add_one(x, out)
    assert seen == [False]
    assert gc.isenabled()
    np.testing.assert_array_equal(out, x + 1)


def test_on_again_after_a_kernel_error() -> None:
    x = np.zeros((32, 64), dtype=np.float32)
    with pytest.raises(emu.EmulatorError), emu.session():
        add_one(x, np.zeros((8, 64), dtype=np.float32))  # out too small: the assemble runs out of bounds
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    x = np.zeros((16, 64), dtype=np.float32)
    with emu.session():
        add_one(x, np.zeros_like(x))
    assert not gc.isenabled()


def test_nested_pauses_restore_once() -> None:
    with _gcpause.paused():
        with _gcpause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_kernel_calls_leave_no_arrays_in_cyclic_garbage() -> None:
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for n in (77, 80, 33, 80):
            x = np.ones((n, 64), dtype=np.float32)
            with emu.session():
                add_one(x, np.zeros_like(x))
        with pytest.raises(emu.EmulatorError), emu.session():
            add_one(x, np.zeros((8, 64), dtype=np.float32))
        gc.collect()
        kinds = collections.Counter(type(o).__name__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert "ndarray" not in kinds, kinds


_FREEZE_PROBE = """
import gc, sys
base = gc.get_freeze_count()
import numpy as np
import runtime.emulator as emu
pypto = emu.install()
sys.path.insert(0, {here!r})
from test_gcpause import add_one
before = gc.get_freeze_count()
x = np.ones((40, 64), dtype=np.float32)
out = np.zeros_like(x)
add_one(x, out)
first = gc.get_freeze_count()
junk = [[i] for i in range(1000)]
add_one(x, out)
print(base, before, first > before, gc.get_freeze_count() == first, bool((out == 2).all()))
"""


@pytest.mark.parametrize("launcher", [True, False])
def test_a_process_the_emulator_owns_freezes_once_at_its_first_kernel_call(launcher: bool) -> None:
    """``python -m runtime.emulator`` freezes what its first kernel call finds (the imports: not traversed by the
    collection the call owes), once; a process that only imports the emulator keeps its collector as it was."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).resolve().parent
    root = here.parents[1]
    code = _FREEZE_PROBE.format(here=str(here))
    cmd = [sys.executable, "-m", "runtime.emulator", "-c", code] if launcher else [sys.executable, "-c", code]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False, cwd=root,
                       env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 0, r.stderr
    # what the interpreter itself keeps frozen at start-up: nothing on 3.11, 375 objects on 3.12.1
    plain = subprocess.run([sys.executable, "-c", "import gc; print(gc.get_freeze_count())"], capture_output=True,
                           text=True, timeout=60, check=True)
    base, before, froze, once, right = r.stdout.split()[-5:]
    assert base == before == plain.stdout.strip()  # neither the launcher nor the imports froze anything
    assert froze == ("True" if launcher else "False")
    assert once == "True" and right == "True"
