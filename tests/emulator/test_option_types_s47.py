"""Option values as the pypto 0.2.0 wheel types them (session 47).

The emulator took every option value; the installed 0.2.0 wheel refuses some, so a kernel verified under
``--compat 0.2.0`` could fail on a 0.2.0 device before running: apply_adam_w_v2's bf16 kernel sets
``vec_nbuffer_setting={"DEFAULT": 2}`` (a HEAD form) and quant_batch_matmul's jit passes
``host_options={"compile_monitor_enable": 1}``. Each row below is what the wheel answered (probed on the installed
0.2.0, `runtime/emulator/_options.py` ``_KEY_TYPES_020`` says the rule); HEAD (the default target) takes them all.
"""

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()


def _scope(**kw: Any) -> None:
    with pypto.options("x", **kw):
        pass


# (what the script does, the exception the 0.2.0 wheel raised or None, words of its message)
CASES: list[tuple[str, Callable[[], None], type[BaseException] | None, str]] = [
    ("setter, string-keyed merge setting", lambda: pypto.set_pass_options(vec_nbuffer_setting={"DEFAULT": 2}),
     RuntimeError, "Unable to cast"),
    ("setter, int-keyed merge setting", lambda: pypto.set_pass_options(vec_nbuffer_setting={-1: 2}), None, ""),
    ("setter, float merge factor", lambda: pypto.set_pass_options(cube_nbuffer_setting={-1: 2.5}),
     RuntimeError, "Unable to cast"),
    ("setter, list of pairs", lambda: pypto.set_pass_options(vec_nbuffer_setting=[[-1, 2]]),
     TypeError, "Unsupported list element type for key: pass.vec_nbuffer_setting"),
    ("setter, HEAD scope tuple", lambda: pypto.set_pass_options(sg_set_scope=(1, True, False)), None, ""),
    ("setter, unknown keyword", lambda: pypto.set_pass_options(foo=1),
     TypeError, "set_pass_options() got an unexpected keyword argument 'foo'"),
    ("setter, int for a bool flag", lambda: pypto.set_host_options(compile_monitor_enable=1), IndexError, "map::at"),
    ("setter, bool flag", lambda: pypto.set_host_options(compile_monitor_enable=True), None, ""),
    ("setter, int for an int", lambda: pypto.set_host_options(compile_monitor_print_interval=2), None, ""),
    ("setter, int for codegen's bool", lambda: pypto.set_codegen_options(support_dynamic_aligned=1),
     IndexError, "map::at"),
    ("setter, int for verify's bool", lambda: pypto.set_verify_options(enable_pass_verify=1), IndexError, "map::at"),
    ("setter, bool for debug's int", lambda: pypto.set_debug_options(runtime_debug_mode=True), None, ""),
    ("set_options, string-keyed", lambda: pypto.set_options(pass_options={"vec_nbuffer_setting": {"DEFAULT": 2}}),
     RuntimeError, "Unable to cast"),
    ("set_options, int for a bool flag", lambda: pypto.set_options(host_options={"compile_monitor_enable": 1}),
     IndexError, "map::at"),
    ("scope, string-keyed", lambda: _scope(pass_options={"vec_nbuffer_setting": {"DEFAULT": 2}}),
     RuntimeError, "Unable to cast"),
    ("scope, unknown pass key", lambda: _scope(pass_options={"enable_slice": True}), None, ""),
    ("scope, int for a bool flag", lambda: _scope(host_options={"compile_monitor_enable": 1}), None, ""),
    ("scope, unknown runtime key", lambda: _scope(runtime_options={"max_workspace_kb": 1}), None, ""),
]


@pytest.mark.parametrize(("what", "call", "exc", "words"), CASES, ids=[c[0] for c in CASES])
def test_option_values_under_0_2_0_are_refused_where_the_wheel_refuses_them(
        what: str, call: Callable[[], None], exc: type[BaseException] | None, words: str) -> None:
    """On the host the wheel's own exception types (a script's ``except IndexError`` catches them)."""
    with emu.session(emu.Options(compat="0.2.0")):
        try:
            if exc is None:
                call()
            else:
                with pytest.raises(exc) as info:
                    call()
                assert words in str(info.value), (what, info.value)
        finally:
            pypto.reset_options()


@pytest.mark.parametrize(("what", "call"), [(c[0], c[1]) for c in CASES], ids=[c[0] for c in CASES])
def test_head_takes_every_option_value(what: str, call: Callable[[], None]) -> None:
    """HEAD, the default target, takes string-keyed merge settings; its types were not observed: nothing refused."""
    with emu.session(emu.Options(compat="head")):
        try:
            call()
        finally:
            pypto.reset_options()


def test_a_jit_s_option_kwargs_go_through_the_setters() -> None:
    """0.2.0's jit applies each group with ``set_<group>_options(**d)`` at every call (``_set_config_option``):
    quant_batch_matmul's ``host_options={"compile_monitor_enable": 1}`` and apply_adam's string-keyed merge setting
    are the kernel call's error under 0.2.0 (with the kernel's location), and run under HEAD."""

    def kernel(opts: dict[str, Any]) -> Any:
        @pypto.frontend.jit(**opts)
        def k(x: pypto.Tensor([8, 8], pypto.DT_FP32), out: pypto.Tensor([8, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 8)
            out[:] = pypto.add(x, x)

        return k

    x = np.ones((8, 8), np.float32)
    for opts, words in (({"host_options": {"compile_monitor_enable": 1, "compile_monitor_print_interval": 2}},
                         "map::at"),
                        ({"pass_options": {"vec_nbuffer_setting": {"DEFAULT": 2}}}, "Unable to cast"),
                        ({"pass_options": {"enable_slice": True}}, "unexpected keyword argument 'enable_slice'")):
        k = kernel(opts)
        with pytest.raises(emu.EmulatorError) as info:
            with emu.session(emu.Options(compat="0.2.0")):
                k(x, np.zeros_like(x))
        assert words in info.value.message, (opts, info.value)
        out = np.zeros_like(x)
        with emu.session(emu.Options(compat="head")):
            k(x, out)
        assert np.array_equal(out, 2 * x)
