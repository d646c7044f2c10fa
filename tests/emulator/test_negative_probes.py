"""Negative probes of spec/pypto-api.md §0.5 (c01 … c33), §0.6 and §7.2, reproduced on the emulator.

Where the real 0.2.0 toolchain raises, the emulator must raise `EmulatorError` with the same code (native
``Errcode: F.....``) or the same Python kind (HEAD ``F0000x`` code or ``.kind``), the message fragment the
spec quotes, and the kernel line of the offending statement. Where the real SIM silently accepts something
wrong, the emulator must raise (out-of-bounds view/assemble, src larger than dst, ``out[:]`` shape
mismatch, argument shape/dtype different from the annotation) or warn (unaligned elementwise tile,
multi-value ``unroll_list``, ``loop_unroll`` overlap) as §10 and issue 3 item 4 say.

Kernels are defined inside the tests (the real frontend parses nested kernels too) so that errors raised
while *defining* a kernel (annotations) are caught by the test. Offending lines carry a ``# <<tag``
comment; the expected line number is looked up from that comment.
"""

import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

THIS = Path(__file__)
_SOURCE_LINES = THIS.read_text(encoding="utf-8").splitlines()

F32 = np.float32
BF16 = ml_dtypes.bfloat16
PY_KIND_CODES = {
    "TypeError": "F00001",
    "ValueError": "F00002",
    "RuntimeError": "F00003",
    "NameError": "F00004",
    "NotImplementedError": "F00005",
    "KeyError": "F00006",
    "IndexError": "F00008",
}


@pytest.fixture
def emu_session(emu: Any) -> Any:
    """These probes reproduce what the real pypto 0.2.0 wheel did: run them with its semantics (the default
    target is HEAD, which accepts some of them; tests/gym/test_targets.py covers both targets)."""
    with emu.session(emu.Options(compat="0.2.0")) as s:
        yield s


def line_of(tag: str) -> int:
    """Line number of the kernel line marked ``# <<tag``."""
    needle = "# <<" + tag
    for n, text in enumerate(_SOURCE_LINES, start=1):
        if text.rstrip().endswith(needle):
            return n
    raise LookupError(f"no line marked {needle!r} in {THIS.name}")


def _norm_code(code: Any) -> str:
    m = re.search(r"F[0-9A-F]{5}", str(code).upper())
    return m.group(0) if m else str(code)


def _kind_ok(err: Any, kind: str) -> bool:
    if getattr(err, "kind", None) == kind:
        return True
    return kind in PY_KIND_CODES and _norm_code(err.code) == PY_KIND_CODES[kind]


def _describe(err: Any) -> str:
    return (f"code={err.code!r} kind={getattr(err, 'kind', None)!r} file={err.file!r} line={err.line!r} "
            f"message={err.message!r}")


def expect_error(emu: Any, fn: Callable[[], Any], *, code: str | None = None, kind: str | None = None,
                 fragments: Iterable[str] = (), tags: Iterable[str] = (), any_fragment: Iterable[str] = ()) -> Any:
    """Run ``fn``; require an EmulatorError with the given code/kind/fragments at one of the tagged lines."""
    with pytest.raises(emu.EmulatorError) as info:
        fn()
    err = info.value
    problems: list[str] = []
    if code is not None and _norm_code(err.code) != code:
        problems.append(f"code {err.code!r} != {code}")
    if kind is not None and not _kind_ok(err, kind):
        problems.append(f"kind is not {kind}")
    text = f"{err.message}\n{err}"
    for frag in fragments:
        if frag.lower() not in text.lower():
            problems.append(f"message lacks {frag!r}")
    alternatives = list(any_fragment)
    if alternatives and not any(a.lower() in text.lower() for a in alternatives):
        problems.append(f"message has none of {alternatives!r}")
    lines = {line_of(t) for t in tags}
    if lines:
        if err.line not in lines:
            problems.append(f"line {err.line} not in {sorted(lines)}")
        if not err.file or Path(err.file).name != THIS.name:
            problems.append(f"file {err.file!r} is not {THIS.name}")
    assert not problems, "; ".join(problems) + " -- " + _describe(err)
    return err


def warnings_at(session: Any, tags: Iterable[str]) -> list[Any]:
    lines = {line_of(t) for t in tags}
    return [d for d in session.diagnostics
            if d.severity == "warning" and d.line in lines and d.file and Path(d.file).name == THIS.name]


def expect_error_or_warning(emu: Any, session: Any, fn: Callable[[], Any], tags: Iterable[str]) -> None:
    """For what §10 says to *report* without fixing the severity: an error or a warning at the line."""
    tags = list(tags)
    lines = {line_of(t) for t in tags}
    try:
        fn()
    except emu.EmulatorError as err:
        assert err.line in lines and err.file and Path(err.file).name == THIS.name, _describe(err)
        return
    assert warnings_at(session, tags), f"no error and no warning at lines {sorted(lines)}: {session.diagnostics}"


def no_errors(session: Any) -> None:
    errors = [d for d in session.diagnostics if d.severity == "error"]
    assert not errors, errors


@pytest.fixture
def pypto(emu: Any) -> Any:
    import pypto as module  # resolves to the emulator after install()

    return module


def arr(shape: tuple[int, ...], seed: int = 0, dtype: Any = F32) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, size=shape).astype(np.float32).astype(dtype)


# --------------------------------------------------------------------------------------------------------
# §0.5 table: the real toolchain raises


def test_c01_loop_index_in_view_shape(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4, 8, 16], pypto.DT_FP32), out: pypto.Tensor([4, 8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 8, 16)
            for idx in pypto.loop(4):
                v = pypto.view(x, [1, idx + 1, 16], [idx, 0, 0])  # <<c01
                pypto.assemble(v + 1.0, [idx, 0, 0], out)
        return k

    expect_error(emu, lambda: build()(arr((4, 8, 16)), arr((4, 8, 16))), kind="TypeError",
                 fragments=["incompatible function arguments"], tags=["c01"])


def test_c27d_dynamic_dim_as_view_shape(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32),
              out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            v = pypto.view(x, [x.shape[0], 16], [0, 0])  # <<c27d
            out[:] = v + 1.0
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), kind="TypeError",
                 fragments=["incompatible function arguments"], tags=["c27d"])


def test_c27_tuple_annotation_with_status_type(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit  # <<c27-deco
        def k(x: pypto.Tensor((pypto.DYNAMIC, 16), pypto.DT_FP32),  # <<c27
              out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = x + 1.0
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["Invalid value type"], tags=["c27", "c27-deco"])


def test_c02_no_vec_tile_before_add(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32),
              out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            out[:] = x + y  # <<c02
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16), 1), arr((8, 16))), code="F21004",
                 fragments=["tile shape not set"], tags=["c02"])


def test_c03b_reduce_tile_last_axis_not_32_byte_aligned(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(a: pypto.Tensor([2, 8, 12], pypto.DT_FP32), out: pypto.Tensor([2, 8, 1], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 8, 3)
            out[:] = pypto.sum(a, -1, keepdim=True)  # <<c03b
        return k

    expect_error(emu, lambda: build()(arr((2, 8, 12)), arr((2, 8, 1))), code="FC1001",
                 fragments=["32Byte align"], tags=["c03b"])


def test_c04b_function_non_tensor_param_first(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.function  # <<c04b-deco
        def helper(idx, a: pypto.Tensor([8, 16], pypto.DT_FP32)):  # <<c04b
            a[:] = a + 1.0

        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            for i in pypto.loop(2):
                helper(i, x)  # <<c04b-call
        return k

    expect_error(emu, lambda: build()(arr((8, 16))), kind="ValueError",
                 fragments=["Non-tensor parameters must come after all tensor parameters"],
                 tags=["c04b", "c04b-deco", "c04b-call"])


def test_c04e_is_loop_begin_on_derived_value(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            for idx in pypto.loop(4):
                if pypto.is_loop_begin(idx + 0):  # <<c04e
                    out[:] = pypto.view(x, [8, 16], [idx * 8, 0]) * 1.0
        return k

    expect_error(emu, lambda: build()(arr((32, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["not loop index"], tags=["c04e"])


def test_c20_cond_object_in_jit_body(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            for i in pypto.loop(4):
                if pypto.cond(i == 0):  # <<c20
                    pypto.assemble(pypto.view(x, [8, 16], [i * 8, 0]) * 1.0, [i * 8, 0], out)
        return k

    expect_error(emu, lambda: build()(arr((32, 16)), arr((32, 16))), kind="TypeError",
                 fragments=["Test condition must be a symbolic scalar or boolean", "RecordIfBranch"], tags=["c20"])


def test_c05_return_statement(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = x + 1.0
            return out  # <<c05
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["Return statements are not allowed"], tags=["c05"])


def test_c23_return_annotation(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit  # <<c23-deco
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32),  # <<c23-def
              out: pypto.Tensor([8, 16], pypto.DT_FP32)) -> None:  # <<c23
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = x + 1.0
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["Return annotation is not allowed"], tags=["c23", "c23-deco", "c23-def"])


def test_c06_while_loop(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            n = 0
            while n < 2:  # <<c06
                n = n + 1
            out[:] = x + 1.0
        return k

    # 0.2.0 raises the parser's own error here (str = the message, no Python type; checked against the real
    # wheel by bench/crosscheck_pypto.py), not a NotImplementedError
    err = expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))),
                       fragments=["While is not supported by the PTO parser yet"], tags=["c06"])
    assert err.kind == "ParserError" and err.code == "F0FFFF"


def test_c07_range_of_loop_index(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            for idx in pypto.loop(4):
                for j in range(idx):  # <<c07
                    pypto.assemble(pypto.view(x, [8, 16], [j * 8, 0]) * 1.0, [j * 8, 0], out)
        return k

    expect_error(emu, lambda: build()(arr((32, 16)), arr((32, 16))), kind="TypeError",
                 fragments=["cannot be interpreted as an integer"], tags=["c07"])


def test_c14_if_on_tensor(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            if x:  # <<c14
                out[:] = x + 1.0
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), kind="TypeError",
                 fragments=["Test condition must be a symbolic scalar or boolean", "Tensor"], tags=["c14"])


def test_c15_int_of_loop_index(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            for idx in pypto.loop(4):
                row = int(idx) * 8  # <<c15
                pypto.assemble(pypto.view(x, [8, 16], [row, 0]) * 1.0, [row, 0], out)
        return k

    expect_error(emu, lambda: build()(arr((32, 16)), arr((32, 16))), kind="ValueError",
                 fragments=["Not concrete value"], tags=["c15"])


def test_c12_incompatible_broadcast(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([4, 8, 16], pypto.DT_FP32), y: pypto.Tensor([4, 8, 8], pypto.DT_FP32),
              out: pypto.Tensor([4, 8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 8, 16)
            out[:] = x + y  # <<c12
        return k

    expect_error(emu, lambda: build()(arr((4, 8, 16)), arr((4, 8, 8)), arr((4, 8, 16))), code="FC0000",
                 fragments=["shape not support binary operation"], tags=["c12"])


def test_G_two_broadcast_axes(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([2, 4, 8], pypto.DT_FP32), y: pypto.Tensor([1, 1, 8], pypto.DT_FP32),
              out: pypto.Tensor([2, 4, 8], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(1, 4, 8)
            out[:] = x + y  # <<G
        return k

    expect_error(emu, lambda: build()(arr((2, 4, 8)), arr((1, 1, 8)), arr((2, 4, 8))), code="FC0000",
                 fragments=["Only allow to expand one axis"], tags=["G"])


def test_c16_matmul_without_cube_tiles(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
              c: pypto.Tensor([32, 32], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(32, 32)
            c[:] = pypto.matmul(a, b, pypto.DT_FP32)  # <<c16
        return k

    expect_error(emu, lambda: build()(arr((32, 64)), arr((64, 32)), arr((32, 32))), code="FC4000",
                 fragments=["Invalid tile values"], tags=["c16"])


def test_c16c_cube_kl1_not_multiple_of_kl0(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
              c: pypto.Tensor([32, 32], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(32, 32)
            pypto.set_cube_tile_shapes([32, 32], [64, 48], [32, 32])
            c[:] = pypto.matmul(a, b, pypto.DT_FP32)  # <<c16c
        return k

    expect_error(emu, lambda: build()(arr((32, 64)), arr((64, 32)), arr((32, 32))), code="FC4000",
                 fragments=["Invalid L1/L0 relation"], tags=["c16c"])


def test_c17_vec_tile_rank_below_op_rank(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([2, 8, 16], pypto.DT_FP32), out: pypto.Tensor([2, 8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16)
            out[:] = x + 1.0  # <<c17
        return k

    expect_error(emu, lambda: build()(arr((2, 8, 16)), arr((2, 8, 16))), code="FFFFFF", tags=["c17"])


def test_c18_read_local_tensor_before_write(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            t = pypto.tensor([8, 16], pypto.DT_FP32, "t")
            out[:] = t + x  # <<c18
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), code="FFFFFF", tags=["c18"])


def test_c19_mix_assemble_and_compute_on_local(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit
        def k(out: pypto.Tensor([32, 32], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(16, 16)
            a = pypto.zeros([32, 32], dtype=pypto.DT_FP32)
            b = a[:16, :16]
            a[16:, 16:] = pypto.exp(b)  # <<c19
            out[:] = a  # <<c19-move
        return k

    expect_error(emu, lambda: build()(arr((32, 32))), code="F21005",
                 fragments=["mix assemble and common operation"], tags=["c19", "c19-move"])


# --------------------------------------------------------------------------------------------------------
# §0.5 table: the real SIM silently accepts; the emulator must report (issue 3 item 4, §10)


def test_c03_unaligned_elementwise_tile_warns_and_computes(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([2, 8, 12], pypto.DT_FP32), b: pypto.Tensor([2, 8, 12], pypto.DT_FP32),
          out: pypto.Tensor([2, 8, 12], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 3)  # <<c03-tile
        out[:] = a + b  # <<c03

    a, b, out = arr((2, 8, 12)), arr((2, 8, 12), 1), np.zeros((2, 8, 12), F32)
    k(a, b, out)
    no_errors(emu_session)
    assert warnings_at(emu_session, ["c03", "c03-tile"]), emu_session.diagnostics
    np.testing.assert_array_equal(out, a + b)


def test_c08_argument_shape_differs_from_annotation(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit  # <<c08-deco
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32),  # <<c08
          out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((4, 32)), arr((4, 16))), fragments=["does not match"], tags=["c08", "c08-deco"])


def test_c09_argument_dtype_differs_from_annotation(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit  # <<c09-deco
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32),  # <<c09
          out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((4, 16), dtype=np.float16), arr((4, 16))), fragments=["does not match"],
                 any_fragment=["dtype"], tags=["c09", "c09-deco"])


def test_c10_assemble_partly_out_of_bounds(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 16)
        pypto.assemble(x + 1.0, [3, 0], out)  # <<c10

    expect_error(emu, lambda: k(arr((2, 16)), arr((4, 16))), tags=["c10"])


def test_c10b_assemble_symbolic_offset_out_of_bounds_in_last_iteration(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 16)
        for i in pypto.loop(4):
            pypto.assemble(pypto.view(x, [2, 16], [i * 2, 0]) * 1.0, [i * 2 + 1, 0], out)  # <<c10b

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), tags=["c10b"])


def test_c11_view_offset_at_extent(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), out: pypto.Tensor([2, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 16)
        out[:] = pypto.view(x, [2, 16], [4, 0]) + 1.0  # <<c11

    expect_error(emu, lambda: k(arr((4, 16)), arr((2, 16))), tags=["c11"])


def test_c11b_view_window_partly_past_the_end(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), out: pypto.Tensor([2, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 16)
        out[:] = pypto.view(x, [2, 16], [3, 0]) + 1.0  # <<c11b

    # §4.1 allows clip + warn for a window running past the end; §10 lists it as a violation to report
    expect_error_or_warning(emu, emu_session, lambda: k(arr((4, 16)), arr((2, 16))), ["c11b"])


def test_c32_assemble_source_larger_than_destination(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        pypto.assemble(x * 2.0, [0, 0], out)  # <<c32

    expect_error(emu, lambda: k(arr((8, 16)), arr((4, 16))), tags=["c32"])


def test_c33_move_smaller_tensor_into_output(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x * 2.0  # <<c33

    expect_error(emu, lambda: k(arr((2, 16)), arr((4, 16))), tags=["c33"])


def test_c33b_move_larger_tensor_into_output(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out.move(x * 2.0)  # <<c33b

    expect_error(emu, lambda: k(arr((8, 16)), arr((4, 16))), tags=["c33b"])


def test_c13_sum_on_fp16_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP16), out: pypto.Tensor([8, 1], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.sum(x, -1, keepdim=True)  # <<c13

    expect_error_or_warning(emu, emu_session, lambda: k(arr((8, 32), dtype=np.float16), arr((8, 1), dtype=np.float16)),
                            ["c13"])


def test_c31_exp_on_int32_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], pypto.DT_INT32), out: pypto.Tensor([8, 32], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.exp(x)  # <<c31

    x = np.arange(256, dtype=np.int32).reshape(8, 32) % 5
    expect_error_or_warning(emu, emu_session, lambda: k(x, np.zeros((8, 32), np.int32)), ["c31"])


def test_c25_prefix_slice_assign_is_offset_zero_and_flagged(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(2, 16)
        out[:2] = x * 1.0  # <<c25

    x, out = arr((2, 16)), np.full((4, 16), -5.0, F32)
    k(x, out)
    no_errors(emu_session)
    np.testing.assert_array_equal(out[:2], x)
    np.testing.assert_array_equal(out[2:], np.full((2, 16), -5.0, F32))
    assert warnings_at(emu_session, ["c25"]), emu_session.diagnostics


def test_multi_value_unroll_list_on_loop_warns(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([16, 16], pypto.DT_FP32), out: pypto.Tensor([16, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        for i in pypto.loop(4, unroll_list=[4, 2, 1]):  # <<unroll-list
            pypto.assemble(pypto.view(x, [4, 16], [i * 4, 0]) + 1.0, [i * 4, 0], out)

    x, out = arr((16, 16)), np.zeros((16, 16), F32)
    k(x, out)
    no_errors(emu_session)
    np.testing.assert_array_equal(out, x + F32(1.0))
    assert warnings_at(emu_session, ["unroll-list"]), emu_session.diagnostics


def test_loop_unroll_overlapping_factors_warn(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([11, 16], pypto.DT_FP32), out: pypto.Tensor([11, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        for idx, u in pypto.loop_unroll(0, 11, 1, unroll_list=[3, 2]):  # <<unroll-overlap
            pypto.assemble(pypto.view(x, [u, 16], [idx, 0]) * 2.0, [idx, 0], out)

    x, out = arr((11, 16)), np.zeros((11, 16), F32)
    k(x, out)  # item 10 is processed twice ([3, 2] on 11 items, §3.2); idempotent here
    no_errors(emu_session)
    np.testing.assert_array_equal(out, x * F32(2.0))
    assert warnings_at(emu_session, ["unroll-overlap"]), emu_session.diagnostics


def test_loop_unroll_overrun_is_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([10, 16], pypto.DT_FP32), out: pypto.Tensor([10, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        for idx, u in pypto.loop_unroll(0, 10, 1, unroll_list=[4, 3]):  # <<unroll-overrun
            pypto.assemble(pypto.view(x, [u, 16], [idx, 0]) * 2.0, [idx, 0], out)  # <<unroll-overrun-view

    # [4, 3] on 10 items starts the 3-block at 8 and touches item 10 (§3.2): warn at the loop, or raise
    # the out-of-bounds view
    expect_error_or_warning(emu, emu_session, lambda: k(arr((10, 16)), np.zeros((10, 16), F32)),
                            ["unroll-overrun", "unroll-overrun-view"])


# --------------------------------------------------------------------------------------------------------
# other observed behaviour of §0.3, §0.5, §0.6, §6.3 and §2.3


def test_t5_tile_set_only_inside_loop_does_not_leak(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32),
          total: pypto.Tensor([32, 16], pypto.DT_FP32)):
        for i in pypto.loop(4):
            pypto.set_vec_tile_shapes(8, 16)
            pypto.assemble(pypto.view(x, [8, 16], [i * 8, 0]) * 1.0, [i * 8, 0], out)
        total[:] = x + 1.0  # <<t5

    expect_error(emu, lambda: k(arr((32, 16)), arr((32, 16)), arr((32, 16))), code="F21004",
                 fragments=["tile shape not set"], tags=["t5"])


def test_t7_slice_with_dynamic_length(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x[0:n] + 1.0  # <<t7

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="TypeError",
                 fragments=["Cannot convert symbols to int"], tags=["t7"])


def test_t6_failed_call_leaves_no_state_behind(pypto, emu) -> None:
    @pypto.frontend.jit
    def bad(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        out[:] = x + 1.0  # no tile: F21004

    @pypto.frontend.jit
    def good(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + 1.0

    x, out = arr((8, 16)), np.zeros((8, 16), F32)
    with emu.session():
        with pytest.raises(emu.EmulatorError):
            bad(x, out)
        good(x, out)  # same session: the real toolchain would say "function nested is not allowed"
    np.testing.assert_array_equal(out, x + F32(1.0))
    with emu.session() as s2:
        out2 = np.zeros((8, 16), F32)
        good(x, out2)
        assert not s2.diagnostics, s2.diagnostics
    np.testing.assert_array_equal(out2, x + F32(1.0))


def test_0_6_1_whole_move_consumes_its_source(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), a: pypto.Tensor([8, 16], pypto.DT_FP32),
          b: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        t = x * 2.0
        a[:] = t
        b[:] = t + 1.0  # <<move-consumed

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16)), arr((8, 16))), code="F21004",
                 tags=["move-consumed"])


def test_0_6_2_bare_move_after_loop_never_writes_silently(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), o: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(4):
            t = pypto.view(x, [8, 16], [i * 8, 0]) * 3.0
        o[:] = t  # <<move-after-loop

    x, o = arr((32, 16)), np.full((8, 16), -9.0, F32)
    try:
        k(x, o)
    except emu.EmulatorError as err:  # raising is allowed ("reproduce this (or raise)")
        assert err.line == line_of("move-after-loop"), _describe(err)
        return
    np.testing.assert_array_equal(o, np.full((8, 16), -9.0, F32))  # the oracle wrote nothing


def test_0_6_5_sigmoid_on_partial_valid_tile_warns(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop((n + 7) // 8):
            valid = (n - i * 8).min(8)
            xt = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[valid, 16])
            pypto.assemble(pypto.sigmoid(xt), [i * 8, 0], out)  # <<sigmoid-valid

    expect_error_or_warning(emu, emu_session, lambda: k(arr((13, 16)), np.zeros((13, 16), F32)), ["sigmoid-valid"])


def test_0_6_6_scatter_update_tile_rows_exceed_source_rows(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(cache: pypto.Tensor([16, 32], pypto.DT_FP32), index: pypto.Tensor([2, 3], pypto.DT_INT32),
          src: pypto.Tensor([6, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 32)
        pypto.scatter_update(cache, -2, index, src)  # <<scatter-tile

    index = np.array([[0, 2, 4], [6, 8, 10]], np.int32)
    try:
        k(arr((16, 32)), index, arr((6, 32), 1))
    except emu.EmulatorError as err:
        assert _norm_code(err.code) == "FC1000" and err.line == line_of("scatter-tile"), _describe(err)
        return
    assert warnings_at(emu_session, ["scatter-tile"]), emu_session.diagnostics


def test_builtin_min_on_symbols_fails_in_0_2_0_compat(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop((n + 7) // 8):
            valid = min(n - i * 8, 8)  # <<builtin-min
            xt = pypto.view(x, [8, 16], [i * 8, 0], valid_shape=[valid, 16])
            pypto.assemble(xt + 1.0, [i * 8, 0], out)

    expect_error(emu, lambda: k(arr((13, 16)), arr((13, 16))), kind="ValueError",
                 fragments=["Not concrete value"], tags=["builtin-min"])


# --------------------------------------------------------------------------------------------------------
# §7.2 frontend messages (parser and call-site checks)


@pytest.mark.parametrize("stmt", ["break", "continue"])
def test_break_continue_not_supported(pypto, emu, emu_session, stmt: str) -> None:
    def build_break():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            for _i in range(2):
                break  # <<break
            out[:] = x + 1.0
        return k

    def build_continue():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            for _i in range(2):
                continue  # <<continue
            out[:] = x + 1.0
        return k

    build = build_break if stmt == "break" else build_continue
    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), fragments=["is not supported by the PTO parser yet"],
                 tags=[stmt])


def test_default_value_on_tensor_param(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit  # <<tensor-default-deco
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32),  # <<tensor-default-def
              out: pypto.Tensor([8, 16], pypto.DT_FP32) = None):  # <<tensor-default
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = x + 1.0
        return k

    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["Default values are only allowed for non-tensor parameters"],
                 tags=["tensor-default", "tensor-default-deco", "tensor-default-def"])


def test_empty_list_loop(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for s in []:  # <<empty-list
            out[:] = x * s

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["Empty list/tuple cannot be used as loop iterator"], tags=["empty-list"])


def test_slice_step_not_one(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([4, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 16)
        out[:] = x[0:8:2, :] + 1.0  # <<slice-step

    expect_error(emu, lambda: k(arr((8, 16)), arr((4, 16))), kind="ValueError",
                 fragments=["step must be 1 or None"], tags=["slice-step"])


def test_int_index_read_requires_int32(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), sel: pypto.Tensor([4], pypto.DT_FP32),
          out: pypto.Tensor([1, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 16)
        row = sel[0]  # <<int-read
        out[:] = pypto.view(x, [1, 16], [row, 0]) * 1.0

    expect_error(emu, lambda: k(arr((8, 16)), np.zeros(4, F32), arr((1, 16))),
                 fragments=["tensor dtype must be DT_INT32"], tags=["int-read"])


def test_move_of_non_tensor(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out.move(1.5)  # <<move-float

    expect_error(emu, lambda: k(arr((8, 16))), kind="TypeError", fragments=["cannot be moved to Tensor"],
                 tags=["move-float"])


def test_loop_with_four_positionals(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for _i in pypto.loop(0, 1, 1, 1):  # <<loop-4
            out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="TypeError",
                 fragments=["loop() takes 1 to 3 positional arguments"], tags=["loop-4"])


def test_cube_tile_list_lengths(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
          c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32, 32], [64, 64], [32, 32])  # <<cube-m-len
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    expect_error(emu, lambda: k(arr((32, 64)), arr((64, 32)), arr((32, 32))), kind="ValueError",
                 fragments=["m must have exactly 2 elements"], tags=["cube-m-len"])


def test_matmul_rank_mismatch(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([2, 32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
          c: pypto.Tensor([2, 32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 32, 32)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)  # <<mm-rank

    expect_error(emu, lambda: k(arr((2, 32, 64)), arr((64, 32)), arr((2, 32, 32))), kind="RuntimeError",
                 fragments=["Tensor dimension mismatch"], tags=["mm-rank"])


def test_matmul_mixed_input_dtypes(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP16), b: pypto.Tensor([64, 32], pypto.DT_BF16),
          c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)  # <<mm-dtypes

    expect_error(emu, lambda: k(arr((32, 64), dtype=np.float16), arr((64, 32), dtype=BF16), arr((32, 32))),
                 kind="ValueError", fragments=["Non-FP8 inputs require identical dtypes"], tags=["mm-dtypes"])


def test_call_with_too_few_tensor_arguments(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((8, 16))), kind="RuntimeError", fragments=["Expected at least 2 tensor argument"])


def test_call_with_unknown_and_missing_keywords(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32), scale: float):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x * scale

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16)), scale=2.0, bias=1.0), kind="RuntimeError",
                 fragments=["Unknown keyword argument"])
    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="RuntimeError",
                 fragments=["Missing required non-tensor argument 'scale'"])


def test_array_passed_for_non_tensor_param(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32), scale):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x * scale

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16)), arr((8, 16))), kind="RuntimeError",
                 fragments=["must not be a"])


@pytest.mark.parametrize("stmt", ["with", "try"])
def test_with_try_not_supported(pypto, emu, emu_session, stmt: str) -> None:
    def build_with():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            with pypto.options(name="inner"):  # <<with
                out[:] = x + 1.0
        return k

    def build_try():
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
            pypto.set_vec_tile_shapes(8, 16)
            try:  # <<try
                out[:] = x + 1.0
            except ValueError:
                pass
        return k

    build = build_with if stmt == "with" else build_try
    expect_error(emu, lambda: build()(arr((8, 16)), arr((8, 16))), fragments=["is not supported by the PTO parser yet"],
                 tags=[stmt])


def test_for_else_not_supported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for s in [1.0, 2.0]:  # <<for-else
            out[:] = x * s
        else:
            pass

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="NotImplementedError",
                 fragments=["For-else clauses are not supported"], tags=["for-else"])


def test_varargs_not_supported(pypto, emu, emu_session) -> None:
    def build():
        @pypto.frontend.jit  # <<varargs-deco
        def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), *rest):  # <<varargs
            pypto.set_vec_tile_shapes(8, 16)
            x.move(x + 1.0)
        return k

    expect_error(emu, lambda: build()(arr((8, 16))), kind="NotImplementedError",
                 fragments=["Variable-length arguments"], tags=["varargs", "varargs-deco"])


def test_list_comprehension_sees_kernel_locals_from_python_3_12(pypto, emu, emu_session) -> None:
    # eval over the kernel's names, as the real parser: a NameError on 3.11; 3.12 inlines comprehensions (PEP 709)
    # and the real toolchain then traces this kernel too (pypto 0.2.0 on 3.12.1, 5 Dec)
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        y = x * 2.0
        parts = [y for _ in range(2)]  # <<listcomp
        out[:] = parts[0] + parts[1]

    if sys.version_info < (3, 12):
        expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="NameError",
                     fragments=["name 'y' is not defined"], tags=["listcomp"])
    else:
        x, out = np.full((8, 16), 1.5, np.float32), np.zeros((8, 16), np.float32)
        k(x, out)
        assert (out == 6.0).all()


def test_symbolic_tile_size(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(n, 16)  # <<sym-tile
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="ValueError", fragments=["Not concrete value"],
                 tags=["sym-tile"])


def test_nested_function_call_with_keywords(pypto, emu, emu_session) -> None:
    @pypto.frontend.function
    def helper(a: pypto.Tensor([8, 16], pypto.DT_FP32), dst: pypto.Tensor([8, 16], pypto.DT_FP32)):
        dst[:] = a + 1.0

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        helper(x, dst=out)  # <<fn-kw

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="NotImplementedError",
                 fragments=["Keyword arguments in nested function calls are not supported"], tags=["fn-kw"])


def test_nested_function_argument_count(pypto, emu, emu_session) -> None:
    @pypto.frontend.function
    def helper(a: pypto.Tensor([8, 16], pypto.DT_FP32), dst: pypto.Tensor([8, 16], pypto.DT_FP32)):
        dst[:] = a + 1.0

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        helper(x)  # <<fn-count

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["expects 2 arguments, but got 1"], tags=["fn-count"])


def test_nested_function_argument_annotation_mismatch(pypto, emu, emu_session) -> None:
    @pypto.frontend.function
    def helper(a: pypto.Tensor([8, 32], pypto.DT_FP32), dst: pypto.Tensor([8, 16], pypto.DT_FP32)):
        dst[:] = a[:, 0:16] + 1.0

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        helper(x, out)  # <<fn-annot

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["In nested function 'helper'"], tags=["fn-annot"])


def test_invalid_run_mode(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit(runtime_options={"run_mode": 5})
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="RuntimeError", fragments=["Invalid run mode"])


def test_unknown_runtime_option_key_in_0_2_0(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit(runtime_options={"max_workspace_kb": 1024})
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="IndexError", fragments=["map::at"])


def test_jit_on_non_function(pypto, emu, emu_session) -> None:
    with pytest.raises((emu.EmulatorError, TypeError)) as info:
        pypto.frontend.jit(42)
    assert "jit decorator can only be used on functions" in str(info.value)


def test_non_contiguous_argument(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + 1.0

    strided = arr((8, 32))[:, ::2]
    expect_error(emu, lambda: k(strided, arr((8, 16))), kind="RuntimeError", fragments=["not all tensors are contiguous"])


def test_matmul_k_valid_shape_mismatch(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
          c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        av = pypto.view(a, [32, 64], [0, 0], valid_shape=[32, 48])
        c[:] = pypto.matmul(av, b, pypto.DT_FP32)  # <<mm-kvalid

    expect_error(emu, lambda: k(arr((32, 64)), arr((64, 32)), arr((32, 32))), kind="RuntimeError",
                 fragments=["K-dimension valid shape mismatch"], tags=["mm-kvalid"])


def test_matmul_nz_output(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
          c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        c[:] = pypto.matmul(a, b, pypto.DT_FP32, c_matrix_nz=True)  # <<mm-nz

    expect_error(emu, lambda: k(arr((32, 64)), arr((64, 32)), arr((32, 32))), kind="ValueError",
                 fragments=["Output tensor do not support NZ currently"], tags=["mm-nz"])


# --------------------------------------------------------------------------------------------------------
# §6.1 and §10: legal-but-suspicious code the emulator reports


def test_c17b_vec_tile_rank_above_op_rank_warns(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 16)  # <<c17b-tile
        out[:] = x + 1.0  # <<c17b

    x, out = arr((8, 16)), np.zeros((8, 16), F32)
    k(x, out)
    no_errors(emu_session)
    np.testing.assert_array_equal(out, x + F32(1.0))
    assert warnings_at(emu_session, ["c17b", "c17b-tile"]), emu_session.diagnostics


def test_unroll_list_on_outer_loop_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8, 16], pypto.DT_FP32), out: pypto.Tensor([4, 8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 4, 16)
        for b in pypto.loop(4, unroll_list=[2]):  # <<outer-unroll
            for s in pypto.loop(2):
                v = pypto.view(x, [1, 4, 16], [b, s * 4, 0])
                pypto.assemble(v * 2.0, [b, s * 4, 0], out)

    x, out = arr((4, 8, 16)), np.zeros((4, 8, 16), F32)
    k(x, out)
    no_errors(emu_session)
    np.testing.assert_array_equal(out, x * F32(2.0))
    assert warnings_at(emu_session, ["outer-unroll"]), emu_session.diagnostics


def test_float_scalar_with_fp16_tensor_in_maximum_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP16), out: pypto.Tensor([8, 16], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.maximum(x, 0.0)  # <<max-float

    expect_error_or_warning(emu, emu_session, lambda: k(arr((8, 16), dtype=np.float16),
                                                        np.zeros((8, 16), np.float16)), ["max-float"])


def test_softmax_on_fp16_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP16), out: pypto.Tensor([8, 16], pypto.DT_FP16)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.softmax(x, -1)  # <<softmax-fp16

    expect_error_or_warning(emu, emu_session, lambda: k(arr((8, 16), dtype=np.float16),
                                                        np.zeros((8, 16), np.float16)), ["softmax-fp16"])


def test_reshape_inplace_on_output_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 32)
        o2 = pypto.reshape(out, [4, 32], inplace=True)  # <<reshape-out
        o2[:] = pypto.reshape(x, [4, 32]) + 1.0

    expect_error_or_warning(emu, emu_session, lambda: k(arr((8, 16)), np.zeros((8, 16), F32)), ["reshape-out"])


def test_python_side_effect_inside_loop_runs_once_per_path(pypto, emu, emu_session) -> None:
    calls: list[int] = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(4):
            calls.append(1)  # <<side-effect
            pypto.assemble(pypto.view(x, [8, 16], [i * 8, 0]) + 1.0, [i * 8, 0], out)

    x, out = arr((32, 16)), np.zeros((32, 16), F32)
    k(x, out)
    no_errors(emu_session)
    np.testing.assert_array_equal(out, x + F32(1.0))
    assert len(calls) == 1, f"appended {len(calls)} times; the body is traced once (§0.1.1)"
    assert warnings_at(emu_session, ["side-effect"]), "§10: Python side effects inside pypto.loop are reported"


# --------------------------------------------------------------------------------------------------------
# issue 3 item 4: uninitialized data and padding must never reach an output silently


def test_uninitialized_accumulator_read_in_first_iteration(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        acc = pypto.tensor([8, 16], pypto.DT_FP32, "acc")
        for i in pypto.loop(4):
            acc[:] = acc + pypto.view(x, [8, 16], [i * 8, 0])  # <<uninit-acc
        out[:] = acc * 1.0  # <<uninit-out

    # acc has a producer (the move), so the real toolchain compiles; on the device iteration 0 reads garbage.
    # The emulator poisons it and must report the read or the poisoned write-back.
    expect_error(emu, lambda: k(arr((32, 16)), np.zeros((8, 16), F32)), tags=["uninit-acc", "uninit-out"])


def test_padding_of_partial_local_tensor_never_written_back_silently(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        part = pypto.tensor([8, 16], pypto.DT_FP32, "part")
        part[:] = pypto.view(x, [8, 16], [0, 0], valid_shape=[5, 16]) * 2.0  # <<pad-move
        out[:] = part + 1.0  # <<pad-out

    x, out = arr((8, 16)), np.full((8, 16), -3.0, F32)
    try:
        k(x, out)
    except emu.EmulatorError as err:  # reporting the padding read / poisoned write-back is right
        assert err.line in {line_of("pad-move"), line_of("pad-out")}, _describe(err)
        return
    # otherwise the valid region (5 rows) propagated: rows 5..7 must keep their contents, never NaN
    no_errors(emu_session)
    assert not np.isnan(out).any(), "poison (padding) written into an output without a diagnostic"
    np.testing.assert_allclose(out[:5], x[:5] * F32(2.0) + F32(1.0), rtol=1e-6)
    np.testing.assert_array_equal(out[5:], np.full((3, 16), -3.0, F32))


def test_zeros_then_partial_assemble_mixes_producers(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        a = pypto.zeros([8, 16], dtype=pypto.DT_FP32)
        a[0:4, :] = x * 1.0  # <<zeros-assemble
        out[:] = a + 0.0  # <<zeros-read

    expect_error(emu, lambda: k(arr((4, 16)), arr((8, 16))), code="F21005",
                 fragments=["mix assemble and common operation"], tags=["zeros-assemble", "zeros-read"])


# --------------------------------------------------------------------------------------------------------
# more §7.2 parser messages and §5.1 operand rules


def test_false_assert_at_trace_time(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        assert x.shape[1] == 32, "need 32 columns"  # <<assert
        out[:] = x + 1.0

    err = expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), fragments=["need 32 columns"], tags=["assert"])
    assert getattr(err, "kind", "AssertionError") == "AssertionError" or "AssertionError" in str(err), _describe(err)


def test_unpack_mismatch(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        a, b, c = x.shape  # <<unpack
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["Cannot unpack 2 values into 3 targets"], tags=["unpack"])


def test_augmented_assign_to_undefined_name(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        total += x  # noqa: F821  # <<aug-undefined
        out[:] = x + 1.0

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="NameError",
                 fragments=["name 'total' is not defined"], tags=["aug-undefined"])


def test_binary_op_on_different_dtypes(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP16),
          out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + y  # <<mixed-dtypes

    # §5.1: both tensor operands must have the same dtype (no implicit promotion); message not quoted
    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16), dtype=np.float16), arr((8, 16))), tags=["mixed-dtypes"])


# --------------------------------------------------------------------------------------------------------
# §2.3 / §2.4 / §2.5 / §2.6 / §3.4 details


def test_zeros_assembled_across_loop_boundary_never_writes_silently(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        acc = pypto.zeros([32, 16], dtype=pypto.DT_FP32)
        for i in pypto.loop(4):
            acc[i * 8:(i + 1) * 8, :] = pypto.view(x, [8, 16], [i * 8, 0]) * 2.0  # <<zeros-loop-assemble
        out[:] = acc  # <<zeros-loop-move

    x, out = arr((32, 16)), np.full((32, 16), -4.0, F32)
    try:
        k(x, out)
    except emu.EmulatorError as err:  # §2.6 hazard: raising is the better answer
        assert err.line in {line_of("zeros-loop-assemble"), line_of("zeros-loop-move")}, _describe(err)
        return
    np.testing.assert_array_equal(out, np.full((32, 16), -4.0, F32))  # the oracle produced nothing


def test_local_tensor_filled_in_loop_then_bare_move_never_writes_silently(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), o: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        t = pypto.tensor([8, 16], pypto.DT_FP32, "t")
        for i in pypto.loop(4):
            t[:] = pypto.view(x, [8, 16], [i * 8, 0]) * 3.0
        o[:] = t  # <<local-move-after-loop

    x, o = arr((32, 16)), np.full((8, 16), -9.0, F32)
    try:
        k(x, o)
    except emu.EmulatorError as err:
        assert err.line == line_of("local-move-after-loop"), _describe(err)
        return
    np.testing.assert_array_equal(o, np.full((8, 16), -9.0, F32))  # §0.6.2: the oracle wrote nothing


def test_zero_dim_int32_argument_becomes_shape_1(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit(runtime_options={"ready_on_host_tensors": ["start"]})
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), start: pypto.Tensor([1], pypto.DT_INT32),
          out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        s = start[0]
        out[:] = pypto.view(x, [8, 16], [s, 0]) * 1.0

    x, out = arr((32, 16)), np.zeros((8, 16), F32)
    k(x, np.array(12, dtype=np.int32), out)  # §1.2: a 0-d tensor becomes shape [1]
    no_errors(emu_session)
    np.testing.assert_array_equal(out, x[12:20])


def test_too_many_indices(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x[0:8, 0:16, 0:1] + 1.0  # <<too-many-indices

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="IndexError",
                 fragments=["Too many indices for tensor with dimension 2"], tags=["too-many-indices"])


def test_two_ellipses(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 8, 16], pypto.DT_FP32), out: pypto.Tensor([2, 8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 8, 16)
        out[:] = x[..., 0:8, ...] + 1.0  # <<two-ellipses

    expect_error(emu, lambda: k(arr((2, 8, 16)), arr((2, 8, 16))), kind="ValueError",
                 fragments=["Only one ... is supported"], tags=["two-ellipses"])


def test_symbolic_scalar_with_float_operand(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(4):
            off = i * 8.0  # <<sym-float
            pypto.assemble(pypto.view(x, [8, 16], [off, 0]) * 1.0, [off, 0], out)

    err = expect_error(emu, lambda: k(arr((32, 16)), arr((32, 16))),
                       fragments=["'float' object has no attribute '_base'"], tags=["sym-float"])
    assert getattr(err, "kind", "AttributeError") == "AttributeError" or "AttributeError" in str(err), _describe(err)


def test_float_of_symbolic_scalar(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        for i in pypto.loop(4):
            scale = float(i)  # <<float-sym
            pypto.assemble(pypto.view(x, [8, 16], [i * 8, 0]) * scale, [i * 8, 0], out)

    expect_error(emu, lambda: k(arr((32, 16)), arr((32, 16))), kind="TypeError", tags=["float-sym"])


def test_python_list_indexed_by_loop_index(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([32, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        scales = [1.0, 2.0, 3.0, 4.0]
        for i in pypto.loop(4):
            sc = scales[i]  # <<list-sym
            pypto.assemble(pypto.view(x, [8, 16], [i * 8, 0]) * sc, [i * 8, 0], out)

    expect_error(emu, lambda: k(arr((32, 16)), arr((32, 16))), kind="TypeError", tags=["list-sym"])


def test_element_with_invalid_value(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.maximum(x, pypto.Element(pypto.DT_FP32, "zero"))  # <<element-str

    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 16))), kind="ValueError", fragments=["for Element"],
                 tags=["element-str"])


def test_cond_with_file_but_no_lineno(pypto, emu, emu_session) -> None:
    def helper(acc, tile, i):
        if pypto.cond(pypto.is_loop_begin(i), file="helper.py"):  # <<cond-file
            acc[:] = tile * 1.0
        else:
            acc[:] = acc + tile

    @pypto.frontend.jit
    def k(x: pypto.Tensor([32, 16], pypto.DT_FP32), out: pypto.Tensor([8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        acc = pypto.tensor([8, 16], pypto.DT_FP32, "acc")
        for i in pypto.loop(4):
            helper(acc, pypto.view(x, [8, 16], [i * 8, 0]), i)  # <<cond-file-call
        out[:] = acc * 1.0

    # the real frontend renders errors raised inside a natively run helper at the kernel statement that
    # called it; the helper's own line is as good
    expect_error(emu, lambda: k(arr((32, 16)), arr((8, 16))), kind="ValueError",
                 fragments=["file and lineno must be provided together or omitted"],
                 tags=["cond-file", "cond-file-call"])


def test_three_element_k_cube_tile_and_tile_getters(pypto, emu, emu_session) -> None:
    seen: dict[str, object] = {}

    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
          c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        seen["before"] = pypto.get_vec_tile_shapes()
        pypto.set_vec_tile_shapes(32, 32)
        seen["after"] = pypto.get_vec_tile_shapes()
        pypto.set_cube_tile_shapes([32, 32], [32, 64, 64], [32, 32])
        seen["cube"] = pypto.get_cube_tile_shapes()
        c[:] = pypto.matmul(a, b, pypto.DT_FP32)

    a, b, c = arr((32, 64)), arr((64, 32), 1), np.zeros((32, 32), F32)
    k(a, b, c)
    no_errors(emu_session)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
    assert list(seen["before"]) == [] and list(seen["after"]) == [32, 32], seen
    m, kk, n, split = seen["cube"]
    assert list(m) == [32, 32] and list(kk)[:2] == [32, 64] and list(n) == [32, 32] and not split, seen


def test_undefined_name_in_kernel(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        half = N // 2  # noqa: F821  # <<undefined-N
        out[:] = x[:, 0:half] + 1.0

    # §9: the published rrms_norm_rope kernel references an undefined `N` -- a NameError at trace time
    expect_error(emu, lambda: k(arr((8, 64)), arr((8, 64))), kind="NameError", fragments=["name 'N' is not defined"],
                 tags=["undefined-N"])


def test_matmul_without_out_dtype(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
          c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        c[:] = pypto.matmul(a, b)  # <<mm-no-dtype

    # §5.8: out_dtype is mandatory (a gym kernel calling pypto.matmul(x, w) is broken)
    expect_error(emu, lambda: k(arr((32, 64)), arr((64, 32)), arr((32, 32))), kind="TypeError", tags=["mm-no-dtype"])


def test_matmul_out_dtype_not_a_datatype(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_FP32), b: pypto.Tensor([64, 32], pypto.DT_FP32),
          c: pypto.Tensor([32, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        c[:] = pypto.matmul(a, b, "fp32")  # <<mm-str-dtype

    expect_error(emu, lambda: k(arr((32, 64)), arr((64, 32)), arr((32, 32))), kind="TypeError",
                 fragments=["Argument 'out_dtype' must be of type DataType"], tags=["mm-str-dtype"])


def test_matmul_operator_on_int32(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 64], pypto.DT_INT32), b: pypto.Tensor([64, 32], pypto.DT_INT32),
          c: pypto.Tensor([32, 32], pypto.DT_INT32)):
        pypto.set_vec_tile_shapes(32, 32)
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        c[:] = a @ b  # <<mm-op-int32

    ints = np.ones((32, 64), np.int32), np.ones((64, 32), np.int32), np.zeros((32, 32), np.int32)
    expect_error(emu, lambda: k(*ints), kind="RuntimeError", fragments=["unsupported dtype"], tags=["mm-op-int32"])


def test_nonexistent_silu(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 64], pypto.DT_FP32), out: pypto.Tensor([8, 64], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 64)
        out[:] = pypto.silu(x)  # <<silu

    # §5.3: there is no pypto.silu in 0.2.0 or HEAD
    err = expect_error(emu, lambda: k(arr((8, 64)), arr((8, 64))), fragments=["silu"], tags=["silu"])
    assert getattr(err, "kind", "AttributeError") == "AttributeError" or "AttributeError" in str(err), _describe(err)


# --------------------------------------------------------------------------------------------------------
# §4.4 / §5.6 operand constraints


def test_concat_of_ragged_tile_along_concat_axis_reported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], pypto.DT_FP32), y: pypto.Tensor([8, 32], pypto.DT_FP32),
          out: pypto.Tensor([16, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, 32)
        xr = pypto.view(x, [8, 32], [0, 0], valid_shape=[5, 32])
        out[:] = pypto.concat([xr, y], dim=0)  # <<concat-ragged

    # §4.4: concat inputs must be fully valid along `dim`
    expect_error_or_warning(emu, emu_session, lambda: k(arr((8, 32)), arr((8, 32)), np.zeros((16, 32), F32)),
                            ["concat-ragged"])


def test_noop_transpose_needs_aligned_last_tile_axis(pypto, emu) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 12], pypto.DT_FP32), out: pypto.Tensor([8, 12], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 3)
        out[:] = pypto.transpose(x, 1, 1)  # <<noop-transpose

    # §4.4 quotes `CHECK FAILED: lastDimBytes % BLOCK_SIZE == 0`; §7.3 shows the same CHECK's detail text - the
    # docs' rule, kept for HEAD. The 0.2.0 wheel compiles this very kernel in SIM (fidelity audit 9, re-run by hand
    # on 6 Dec 2026: "RESULT ok"): a no-op transpose is an identity there (tests/emulator/test_crosscheck_s35.py)
    with emu.session(emu.Options(compat="head")):
        expect_error(emu, lambda: k(arr((8, 12)), arr((8, 12))),
                     any_fragment=["lastDimBytes % BLOCK_SIZE == 0", "last dim is not aligned"],
                     tags=["noop-transpose"])
    with emu.session(emu.Options(compat="0.2.0")):
        x, out = arr((8, 12)), arr((8, 12))
        k(x, out)
        np.testing.assert_array_equal(out, x)


def test_transpose_4d_pair_not_supported(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 4, 8, 16], pypto.DT_FP32), out: pypto.Tensor([4, 2, 8, 16], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(1, 1, 8, 16)
        out[:] = pypto.transpose(x, 0, 1)  # <<transpose-01

    # §4.4: 4-D transpose only for the axis pairs (0,2), (1,3), (2,3), (1,2)
    expect_error(emu, lambda: k(arr((2, 4, 8, 16)), arr((4, 2, 8, 16))), tags=["transpose-01"])


def test_topk_k_larger_than_last_axis(pypto, emu, emu_session) -> None:
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], pypto.DT_FP32), out: pypto.Tensor([8, 32], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(8, 16)
        vals, idx = pypto.topk(x, 32, -1, True)  # <<topk-k
        out[:] = vals

    # §5.6: 1 <= k <= shape[-1]
    expect_error(emu, lambda: k(arr((8, 16)), arr((8, 32))), tags=["topk-k"])
