"""Design point 2: frontend rules of the real parser, with its messages, codes and the kernel line."""

import inspect
import sys

import numpy as np
import pytest

import runtime.emulator as emu

pypto = emu.install()
F32 = np.float32
HERE = __file__


def _line(fn, marker: str) -> int:
    src, start = inspect.getsourcelines(fn)
    for i, text in enumerate(src):
        if marker in text:
            return start + i
    raise LookupError(marker)


def _call(k, *shapes):
    return k(*[np.zeros(s, F32) for s in shapes])


def _err(k, *shapes) -> emu.EmulatorError:
    with pytest.raises(emu.EmulatorError) as info:
        _call(k, *shapes)
    return info.value


def test_bare_and_called_jit_both_work():
    @pypto.frontend.jit
    def a(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pass

    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM}, pass_options={"vec_nbuffer_setting": {-1: 4}})
    def b(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pass

    assert a(np.zeros((4, 8), F32)) is None and b(np.zeros((4, 8), F32)) is None


def test_jit_on_non_function_is_a_type_error():
    with pytest.raises(emu.EmulatorError, match="jit decorator can only be used on functions") as info:
        pypto.frontend.jit(42)
    assert info.value.kind == "TypeError" and info.value.code == "F00001"


@pytest.mark.parametrize("stmt", ["while", "break", "continue", "try", "with"])
def test_unsupported_statements_are_rejected_with_line(stmt):
    def k1(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        while True:  # mark
            pass

    def k2(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        for _i in range(3):
            break  # mark

    def k3(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        for _i in range(3):
            continue  # mark

    def k4(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        try:  # mark
            pass
        finally:
            pass

    def k5(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        with open("f"):  # mark
            pass

    fn = {"while": k1, "break": k2, "continue": k3, "try": k4, "with": k5}[stmt]
    err = _err(pypto.frontend.jit(fn), (4, 8))
    assert "is not supported by the PTO parser yet" in err.message
    assert err.line == _line(fn, "# mark") and err.file == HERE


def test_return_and_return_annotation():
    def r(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        return x

    def ra(x: pypto.Tensor([4, 8], pypto.DT_FP32)) -> None:
        pass

    e1 = _err(pypto.frontend.jit(r), (4, 8))
    assert e1.kind == "ValueError" and e1.message.startswith("Return statements are not allowed")
    e2 = _err(pypto.frontend.jit(ra), (4, 8))
    assert e2.message.startswith("Return annotation is not allowed")


def test_tensor_params_must_come_first_and_have_no_default():
    def bad_order(n: int, x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pass

    with pytest.raises(emu.EmulatorError, match="Non-tensor parameters must come after all tensor parameters"):
        pypto.frontend.jit(bad_order)(3, np.zeros((4, 8), F32))


@pytest.mark.parametrize("expr, kind, text", [
    ("int(i)", "ValueError", "Not concrete value"),
    ("bool(i)", "ValueError", "Not concrete value"),
    ("list(range(i))", "TypeError", "cannot be interpreted as an integer"),
    ("[1, 2, 3][i]", "TypeError", "list indices must be integers"),
    ("float(i)", "TypeError", "float"),
    ("i + 0.5", "AttributeError", "_base"),
    ("{i: 1}", "TypeError", "unhashable"),
])
def test_symbolic_values_refuse_python_conversions(expr, kind, text, tmp_path):
    ns: dict = {"pypto": pypto}
    src = f"""
def k(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
    for i in pypto.loop(4):
        y = {expr}
"""
    path = str(tmp_path / "_emu_frontend.py")  # a real file: the tracer reads the kernel's source lines
    with open(path, "w") as f:
        f.write(src)
    exec(compile(src, path, "exec"), ns)
    import linecache

    linecache.checkcache(path)
    err = _err(pypto.frontend.jit(ns["k"]), (4, 8))
    assert err.kind == kind and text in err.message
    assert err.line == 4


def test_if_on_tensor_and_on_cond_object_are_rejected():
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        if x:  # mark
            pass

    def k2(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        for i in pypto.loop(4):
            if pypto.cond(i == 0):  # mark
                pass

    e = _err(pypto.frontend.jit(k), (4, 8))
    assert e.message == "Test condition must be a symbolic scalar or boolean, but got Tensor."
    e2 = _err(pypto.frontend.jit(k2), (4, 8))
    assert "got RecordIfBranch" in e2.message and e2.line == _line(k2, "# mark")


def test_view_shape_must_be_python_ints():
    def k(x: pypto.Tensor([16, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        for i in pypto.loop(4):
            v = pypto.view(x, [i + 1, 8], [0, 0])  # mark

    e = _err(pypto.frontend.jit(k), (16, 8))
    assert e.kind == "TypeError" and "incompatible function arguments" in e.message
    assert e.line == _line(k, "# mark")


def test_tile_shapes_must_be_compile_time_ints():
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(x.shape[0], 8)  # mark

    e = _err(pypto.frontend.jit(k), (16, 8))
    assert e.message == "Not concrete value" and e.line == _line(k, "# mark")


def test_is_loop_begin_needs_the_loop_index_itself():
    def k(x: pypto.Tensor([16, 8], pypto.DT_FP32)):
        for i in pypto.loop(4):
            if pypto.is_loop_begin(i + 0):  # mark
                pass

    e = _err(pypto.frontend.jit(k), (16, 8))
    assert e.message == "not loop index" and e.kind == "ValueError"


def test_call_site_argument_errors():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), n: int, scale: float = 1.0):
        pass

    x = np.zeros((4, 8), F32)
    with pytest.raises(emu.EmulatorError, match="Expected at least 1 tensor argument"):
        k()
    with pytest.raises(emu.EmulatorError, match="Missing required non-tensor argument 'n'"):
        k(x)
    with pytest.raises(emu.EmulatorError, match="Unknown keyword argument"):
        k(x, 2, bogus=1)
    with pytest.raises(emu.EmulatorError, match="must not be a torch.Tensor"):
        k(x, x)
    k(x, 2, scale=3.0)


def test_frontend_function_signature_rules():
    @pypto.frontend.function
    def h(a: pypto.Tensor([4, 8], pypto.DT_FP32), b: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pass

    @pypto.frontend.jit
    def kw(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        h(x, b=x)

    @pypto.frontend.jit
    def count(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        h(x)

    @pypto.frontend.jit
    def shape(x: pypto.Tensor([2, 8], pypto.DT_FP32)):
        h(x, x)

    with pytest.raises(emu.EmulatorError, match="Keyword arguments in nested function calls"):
        kw(np.zeros((4, 8), F32))
    with pytest.raises(emu.EmulatorError, match="Function h expects 2 arguments, but got 1"):
        count(np.zeros((4, 8), F32))
    with pytest.raises(emu.EmulatorError, match="In nested function 'h'"):
        shape(np.zeros((2, 8), F32))


def test_a_list_comprehension_sees_kernel_locals_as_the_interpreter_does():
    # the real parser evaluates expressions with eval over a dict of the kernel's names: on 3.11 a comprehension
    # is its own function and cannot see them (NameError); 3.12 inlines comprehensions (PEP 709) and it can. The
    # pypto 0.2.0 wheel did exactly this on 3.11.7 and 3.12.1 (5 Dec), and so does the emulator
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = 3
        y = [n * j for j in range(2)]  # mark
        out[:] = x + float(y[1])

    if sys.version_info < (3, 12):
        e = _err(pypto.frontend.jit(k), (4, 8), (4, 8))
        assert e.kind == "NameError" and "'n' is not defined" in e.message
        assert e.line == _line(k, "# mark")
    else:
        x, out = np.ones((4, 8), F32), np.zeros((4, 8), F32)
        pypto.frontend.jit(k)(x, out)
        assert (out == 4.0).all()


def test_trace_time_python_values_and_plain_helpers_run_natively():
    def native(t, flag):
        return t * 2.0 if flag else t

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32), out: pypto.Tensor([4, 8], pypto.DT_FP32), flag: bool = True):
        pypto.set_vec_tile_shapes(4, 8)
        cfg = {"bias": 1.0}
        out[:] = native(x, flag) + cfg["bias"]

    x = np.arange(32, dtype=F32).reshape(4, 8)
    out = np.zeros_like(x)
    k(x, out)
    np.testing.assert_array_equal(out, x * 2 + 1)
    k(x, out, False)
    np.testing.assert_array_equal(out, x + 1)


def test_head_compat_maps_builtin_min_to_symbolic_min():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 8], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(4, 8)
        for i in pypto.loop((n + 3) // 4):
            v = min(n - i * 4, 4)
            pypto.assemble(pypto.view(x, [4, 8], [i * 4, 0], valid_shape=[v, 8]) + 1.0, [i * 4, 0], out)

    x = np.ones((6, 8), F32)
    out = np.zeros_like(x)
    with emu.session(emu.Options(compat="0.2.0")), pytest.raises(emu.EmulatorError, match="Not concrete value"):
        k(x, out)
    k(x, out)  # the default target is HEAD
    np.testing.assert_array_equal(out, x + 1)


def test_calling_a_jit_kernel_from_a_kernel_is_rejected():
    @pypto.frontend.jit
    def inner(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        pass

    @pypto.frontend.jit
    def outer(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        inner(x)  # mark

    e = _err(outer, (4, 8))
    assert "function nested is not allowed" in e.message and e.line == _line(outer.__wrapped__, "# mark")


def test_body_checks_find_the_shallowest_statement_first_and_skip_expressions() -> None:
    """`_Parsed.check_body` walks statements only (no statement lies inside an expression): the first error is still
    that of the breadth-first walk of each top-level statement - the shallower statement, though it comes later -
    and lambdas / comprehensions in expressions are no statements."""

    def k(x: pypto.Tensor([4, 8], pypto.DT_FP32)):
        f = [lambda v, i=i: v + i for i in range(2)]  # noqa: F841
        if x.shape[0] == 4:
            for _i in range(3):
                while False:  # deeper, earlier
                    pass
            with open("f"):  # mark
                pass

    err = _err(pypto.frontend.jit(k), (4, 8))
    assert "With is not supported" in err.message and err.line == _line(k, "# mark")
