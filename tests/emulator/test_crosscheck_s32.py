"""A view of a kernel argument recorded with no vec tile set, then a ``pypto.loop`` entered with no vec tile set, then
the view read: the real pypto 0.2.0 wheel refuses it (``INTERNAL BUG <file>:1:0: Errcode: F21004!``, ``op
[REGISTER_COPY]tile shape not set``), the emulator ran it (s31 fidelity audit: a SwiGLU MLP that views its input
before its first ``set_vec_tile_shapes``). Every variant below was run under the wheel in RunMode.SIM on 5 Dec 2026;
its outcome is the ``refused`` column, and the emulator must give the same under both targets."""

import numpy as np
import pytest
from test_crosscheck_s19 import _err, _run  # one session per kernel, under a compat target (this directory)

import runtime.emulator as emu

pypto = emu.install()
F32 = pypto.DT_FP32
TM, TI, HID = 16, 32, 64


def _kernel(v: str):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([TM, HID], F32), out: pypto.Tensor([TM, 64], F32)):
        if v == "tile_before_view":
            pypto.set_vec_tile_shapes(TM, TI)
        if v in ("read_in_loop", "tile_before_view", "tile_before_loop", "slice_read_in_loop"):
            xt = x[0:TM, 0:TI] if v == "slice_read_in_loop" else pypto.view(x, [TM, TI], [0, 0])
            if v == "tile_before_loop":
                pypto.set_vec_tile_shapes(TM, TI)
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v == "no_loop":
            xt = pypto.view(x, [TM, TI], [0, 0])
            pypto.set_vec_tile_shapes(TM, TI)
            pypto.assemble(xt * 2.0, [0, 0], out)
            pypto.assemble(xt * 2.0, [0, TI], out)
        elif v == "python_loop":
            xt = pypto.view(x, [TM, TI], [0, 0])
            for ii in range(2):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v == "reshape_of_argument":
            xr = pypto.reshape(x, [TM, HID])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(xr, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)
        elif v in ("nested_tile_in_outer", "nested_tile_in_inner"):
            xt = pypto.view(x, [TM, TI], [0, 0])
            for _jj in pypto.loop(1, name="o_loop", idx_name="jj"):
                if v == "nested_tile_in_outer":
                    pypto.set_vec_tile_shapes(TM, TI)
                for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                    pypto.set_vec_tile_shapes(TM, TI)
                    pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v in ("read_after_loop", "read_after_loop_tile_before_loop"):
            xt = pypto.view(x, [TM, TI], [0, 0])
            if v == "read_after_loop_tile_before_loop":
                pypto.set_vec_tile_shapes(TM, TI)
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(x, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)
            pypto.set_vec_tile_shapes(TM, TI)
            pypto.assemble(xt * 2.0, [0, 0], out)
        elif v == "read_before_loop_only":
            xt = pypto.view(x, [TM, TI], [0, 0])
            pypto.set_vec_tile_shapes(TM, TI)
            pypto.assemble(xt * 2.0, [0, 0], out)
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.assemble(pypto.view(x, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)
        elif v == "view_of_the_view_in_loop":
            xt = pypto.view(x, [TM, HID], [0, 0])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(xt, [TM, TI], [0, ii * TI]) * 2.0, [0, ii * TI], out)
        elif v == "view_recorded_inside_the_bare_loop":
            for _jj in pypto.loop(1, name="o_loop", idx_name="jj"):
                xt = pypto.view(x, [TM, TI], [0, 0])
                pypto.set_vec_tile_shapes(TM, TI)
                for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                    pypto.assemble(xt * 2.0, [0, ii * TI], out)
        elif v == "copied_in_loop":
            xt = pypto.view(x, [TM, TI], [0, 0])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(xt, [0, ii * TI], out)
        elif v == "unread_view":
            _ot = pypto.view(out, [TM, TI], [0, 0])
            for ii in pypto.loop(2, name="i_loop", idx_name="ii"):
                pypto.set_vec_tile_shapes(TM, TI)
                pypto.assemble(pypto.view(x, [TM, TI], [0, 0]) * 2.0, [0, ii * TI], out)

    return k


REFUSED = ["read_in_loop", "slice_read_in_loop", "nested_tile_in_outer", "nested_tile_in_inner", "read_after_loop",
           "view_of_the_view_in_loop", "copied_in_loop"]
ACCEPTED = ["tile_before_view", "tile_before_loop", "no_loop", "python_loop", "reshape_of_argument",
            "read_after_loop_tile_before_loop", "read_before_loop_only", "view_recorded_inside_the_bare_loop",
            "unread_view"]
X = np.random.default_rng(32).standard_normal((TM, HID)).astype(np.float32)


@pytest.mark.parametrize("v", REFUSED)
def test_a_bare_view_read_after_a_bare_loop_entry_is_the_wheels_f21004(v: str) -> None:
    for compat in ("0.2.0", "head"):
        e = _err(_kernel(v), X, np.zeros((TM, 64), np.float32), compat=compat)
        assert e.code == "F21004" and "REGISTER_COPY" in str(e) and "before the loop" in str(e), (compat, str(e))
        assert e.line is not None and e.line > 1  # at the reading statement (the wheel says line 1)


@pytest.mark.parametrize("v", ACCEPTED)
def test_what_the_wheel_accepts_still_runs(v: str) -> None:
    out = np.zeros((TM, 64), np.float32)
    _run(_kernel(v), X, out)
    np.testing.assert_array_equal(out[:, :TI], 2 * X[:, :TI])
