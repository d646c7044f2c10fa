"""The kernel program codec: bit-identical round trips, a validator that refuses what the tracer never makes,
and one error type for any bytes at all.

Why: in verification the device process decodes programs sent by the sandboxed child, so (1) a program must
survive ``decode(encode(p))`` without changing a single output bit, counter or diagnostic, and (2) hostile
bytes must end in `ProgramError` with a one-line reason - never another exception, a crash or a hang.
The round trip runs on every kernel of the acceptance corpus (a "dual" executor runs each kernel call both
directly and through the codec and compares everything); the fuzz tests feed random bytes and mutated valid
programs to the decoder and the executor.
"""

import json
import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_corpus import CASES, _run_case

import runtime.emulator as emu
from runtime.emulator import _executor
from runtime.emulator.device import ExecOptions, ExecResult, Limits, ProgramError, decode, encode, execute
from runtime.emulator.device._codec import MAGIC

pypto = emu.install()
F32 = np.float32


class Dual:
    """A kernel executor that runs every call directly and through the codec and compares the two
    (`_executor.run_checked` raises on any difference); counts calls and keeps the encoded programs."""

    def __init__(self) -> None:
        self.calls = 0
        self.blobs: list[bytes] = []

    def __call__(self, program: Any, args: list[np.ndarray], options: ExecOptions) -> ExecResult:
        res = _executor.run_checked(program, args, options)
        self.calls += 1
        self.blobs.append(encode(program))
        return res


def test_the_round_trip_check_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """A codec that changed an op on the way (here: add became sub) is caught, not passed through."""
    x = np.ones((20, 32), F32)
    real_decode = _executor.decode

    def lying_decode(blob: bytes) -> Any:
        p = real_decode(blob)
        stack = [p.body]
        while stack:
            for path in stack.pop().paths:
                for it in path.items:
                    if getattr(it, "kind", None) == "binary" and it.params["fn"] == "add":
                        it.params["fn"] = "sub"
                    elif hasattr(it, "lid"):
                        stack.append(it.body)
        return p

    _executor.run_checked(tiled.program(x, np.zeros_like(x)), [x, np.zeros_like(x)], ExecOptions())
    monkeypatch.setattr(_executor, "decode", lying_decode)
    with pytest.raises(_executor.RoundTripMismatch, match="kernel tiled"):
        _executor.run_checked(tiled.program(x, np.zeros_like(x)), [x, np.zeros_like(x)], ExecOptions())


@pytest.mark.parametrize(("module", "case_name"), CASES, ids=[f"{m}::{c}" for m, c in CASES])
def test_corpus_case_round_trips_bit_identically(module: str, case_name: str, corpus_module: Any) -> None:
    dual = Dual()
    case = getattr(corpus_module(module), case_name)()
    with _executor.use(dual), emu.session() as s:
        _run_case(case, s, emu)
    assert dual.calls == len(case.calls)


def _other_values(a: Any) -> Any:
    """Same shape and dtype, different bytes (a fresh seeded draw)."""
    if not isinstance(a, np.ndarray):
        return a
    rng = np.random.default_rng(a.size + 7)
    if a.dtype.kind in "iub":
        return rng.integers(0, 2, size=a.shape).astype(a.dtype)
    return rng.standard_normal(a.shape).astype(a.dtype)


@pytest.mark.parametrize(("module", "case_name"), CASES, ids=[f"{m}::{c}" for m, c in CASES])
def test_program_bytes_do_not_depend_on_input_values(module: str, case_name: str, corpus_module: Any) -> None:
    """Two traces with the same shapes and other values encode to the same bytes (the verifier compares them
    to catch host-computed values smuggled into a kernel's constants)."""
    case = getattr(corpus_module(module), case_name)()
    for call in case.calls:
        seen: list[list[bytes]] = []
        for args in (call.args, [_other_values(x) for x in call.args]):
            blobs: list[bytes] = []

            def capture(program: Any, arrays: list[np.ndarray], options: ExecOptions, blobs: list = blobs) -> Any:
                blobs.append(encode(program))
                return execute(program, arrays, options)

            with _executor.use(capture), emu.session():
                try:
                    call.kernel(*[a.copy() if isinstance(a, np.ndarray) else a for a in args], **call.kwargs)
                except emu.EmulatorError:
                    pass  # other values may make a kernel fail at run time; its program is what counts
            seen.append(blobs)
        assert seen[0] and seen[0] == seen[1]


# ---- kernels used by the tests below ---------------------------------------------------------------------

@pypto.frontend.jit
def tiled(x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, 8)):
        t = pypto.view(x, [8, 32], [i * 8, 0], valid_shape=[(n - i * 8).min(8), 32])
        pypto.assemble(pypto.sum(t * t, -1, keepdim=True) + t, [i * 8, 0], y)


@pypto.frontend.jit
def branchy(x: pypto.Tensor([16, 32], pypto.DT_FP32), idx: pypto.Tensor([4], pypto.DT_INT32),
            y: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(2):
        t = pypto.view(x, [8, 32], [i * 8, 0])
        if idx[i] > 0:
            pypto.assemble(pypto.exp(t), [i * 8, 0], y)
        else:
            pypto.assemble(t * 2.0, [i * 8, 0], y)


@pypto.frontend.jit
def oob(x: pypto.Tensor([16, 32], pypto.DT_FP32), y: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 32)
    for i in pypto.loop(2):
        pypto.assemble(pypto.view(x, [8, 32], [i * 12, 0]) + 1.0, [i * 12, 0], y)


def _program_bytes() -> tuple[bytes, list[np.ndarray]]:
    x = np.linspace(-1, 1, 20 * 32, dtype=F32).reshape(20, 32)
    return encode(tiled.program(x, np.zeros_like(x))), [x, np.zeros_like(x)]


def test_encoding_is_deterministic_and_compact() -> None:
    a, _ = _program_bytes()
    b, _ = _program_bytes()
    assert a == b
    assert a.startswith(MAGIC) and len(a) < 4000
    header = json.loads(a[len(MAGIC) + 4:len(MAGIC) + 4 + struct.unpack_from("<I", a, len(MAGIC))[0]])
    assert {n[0] for n in header["exprs"]} >= {"sym", "idx", "bin"}


def test_runtime_errors_warnings_and_branches_survive_the_round_trip() -> None:
    dual = Dual()
    x = np.arange(16 * 32, dtype=F32).reshape(16, 32) / 512
    with _executor.use(dual), emu.session():
        y = np.zeros_like(x)
        branchy(x, np.array([1, 0, 0, 0], np.int32), y)
        assert np.array_equal(y[:8], np.exp(x[:8])) and np.array_equal(y[8:], x[8:] * F32(2.0))
        with pytest.raises(emu.EmulatorError) as err:
            oob(x, np.zeros_like(x))
    assert err.value.code == "EMU_VIEW_OOB" and "iteration loop_1=1" in err.value.message
    assert err.value.line is not None and dual.calls == 2
    with _executor.use(dual), emu.session(emu.Options(out_of_bounds="clip", check_poison=False)) as s:
        oob(x, np.zeros_like(x))
    assert any(d.code == "EMU_VIEW_CLIP" for d in s.warnings)


def test_an_executor_sees_the_program_and_its_result_reaches_the_session() -> None:
    seen: list[Any] = []

    def remote(program: Any, args: list[np.ndarray], options: ExecOptions) -> ExecResult:
        seen.append(program)
        work = [a.copy() for a in args]  # like a device process: its own copies, bytes copied back
        res = execute(decode(encode(program)), work, options)
        for i in res.written:
            args[i][...] = work[i]
        return res

    x = np.ones((20, 32), F32)
    y = np.zeros_like(x)
    with _executor.use(remote), emu.session() as s:
        tiled(x, y)
    assert len(seen) == 1 and seen[0].kernel == "tiled"
    assert np.array_equal(y, np.full_like(x, 33.0))
    assert s.counters.runs == 1 and s.counters.ops["assemble"] == 3 and s.counters.loop_trips == {"loop_1": 3}


@pypto.frontend.jit
def reads_hidden(x: pypto.Tensor([16, 16], pypto.DT_FP32), bias: pypto.Tensor([1, 16], pypto.DT_FP32),
                 w: pypto.Tensor([16, 16], pypto.DT_FP32), y: pypto.Tensor([16, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 16)
    pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
    y[:] = pypto.matmul(x, w, pypto.DT_FP32, extend_params={"bias_tensor": bias})


def test_keys_read_names_reads_that_ins_omits() -> None:
    """``ins`` feeds counters and records (unchanged); `keys_read` is the full list (matmul bias here)."""
    from runtime.emulator.device import keys_read, program_reads

    x = np.ones((16, 16), F32)
    program = reads_hidden.program(x, np.ones((1, 16), F32), x, np.zeros_like(x))
    mm = next(it for it in program.body.paths[0].items if it.kind == "matmul")
    bias_key = program.params[1].key
    assert bias_key not in mm.ins and bias_key in keys_read(mm)
    assert {p.key for p in program.params[:3]} <= program_reads(program)
    assert program.params[3].key not in program_reads(program)  # y is only written


def test_written_arguments_and_write_masks() -> None:
    x = np.ones((20, 32), F32)
    y = np.zeros_like(x)
    program = tiled.program(x, y)
    res = execute(program, [x, y], ExecOptions(track_writes=True))
    assert res.error is None and res.written == [1] and set(res.write_masks or {}) == {1}
    assert (res.write_masks or {})[1].all()
    z = np.zeros((16, 32), F32)
    res = execute(branchy.program(z, np.array([1, 0, 0, 0], np.int32), z.copy()),
                  [z, np.array([0, 1, 0, 0], np.int32), z.copy()], ExecOptions(track_writes=True))
    assert res.written == [2] and (res.write_masks or {})[2].all()


def test_limits_stop_runaway_programs_with_an_error_not_a_hang() -> None:
    x = np.ones((4000, 32), F32)
    program = tiled.program(x, np.zeros_like(x))
    res = execute(program, [x, np.zeros_like(x)], ExecOptions(limits=Limits(max_steps=100)))
    assert res.error is not None and res.error.code == "EMU_LIMIT"
    res = execute(program, [x, np.zeros_like(x)], ExecOptions(limits=Limits(max_alloc_bytes=16)))
    assert res.error is None  # views of arguments allocate nothing
    small = np.ones((3, 32), F32)
    res = execute(tiled.program(small, np.zeros_like(small)), [small, np.zeros_like(small)],
                  ExecOptions(limits=Limits(max_alloc_bytes=16)))
    assert res.error is not None and res.error.code == "EMU_LIMIT"  # the clipped tail tile needs a buffer


def test_arguments_must_match_the_program() -> None:
    x = np.ones((20, 32), F32)
    program = tiled.program(x, np.zeros_like(x))
    for args, why in (([x], "takes 2"), ([x, np.zeros((20, 32), np.float16)], "dtype"),
                      ([x, np.zeros((20, 31), F32)], "shape"), ([x, np.zeros((32, 20), F32).T], "contiguous")):
        with pytest.raises(ProgramError, match=why):
            execute(program, args)


def test_a_program_the_builders_cannot_take_is_a_program_error() -> None:
    x = np.ones((20, 32), F32)
    program = tiled.program(x, np.zeros_like(x))
    program.body.paths[0].items[0].body.paths[0].items[0].params["offs"] = None  # not decoded: never validated
    with pytest.raises(ProgramError, match="cannot prepare"):
        execute(program, [x, np.zeros_like(x)])


# ---- the validator refuses what the tracer never makes -----------------------------------------------------

def _split(blob: bytes) -> tuple[dict, bytes]:
    n = struct.unpack_from("<I", blob, len(MAGIC))[0]
    start = len(MAGIC) + 4
    return json.loads(blob[start:start + n]), blob[start + n:]


def _join(header: dict, rest: bytes = b"") -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode()
    return MAGIC + struct.pack("<I", len(text)) + text + rest


def _first_op(h: dict, kind: str) -> list:
    stack = [h["body"]]
    while stack:
        for _decisions, items in stack.pop():
            for it in items:
                if it[0] == "o" and it[1] == kind:
                    return it
                if it[0] == "l":
                    stack.append(it[6])
    raise LookupError(kind)


MUTATIONS = {
    "unknown op kind": lambda h: _first_op(h, "view").__setitem__(1, "exec"),
    "parameters must be exactly": lambda h: _first_op(h, "view")[3].__setitem__("extra", 1),
    "expected a bool": lambda h: _first_op(h, "view")[3].__setitem__("copy", 1),
    "expected an int in": lambda h: _first_op(h, "view")[3].__setitem__("src", 10**6),
    "before any op defines it": lambda h: _first_op(h, "binary")[3].__setitem__("a", h["n_keys"] - 1),
    "dtype": lambda h: _first_op(h, "binary")[3].__setitem__("odt", "object"),
    "unknown binary function": lambda h: _first_op(h, "binary")[3].__setitem__("fn", "__import__"),
    "not defined before it": lambda h: h["exprs"][1].__setitem__(2, {"x": 5}),
    "malformed expression node": lambda h: h["exprs"].append(["call", "os.system"]),
    "outs disagree": lambda h: _first_op(h, "view").__setitem__(5, [0]),
    "header fields must be exactly": lambda h: h.__setitem__("pickle", "x"),
    "unsupported program version": lambda h: h.__setitem__("v", 2),
    "differ in length": lambda h: _first_op(h, "view")[3].__setitem__("shape", [8]),
    "rank": lambda h: (_first_op(h, "view")[3].__setitem__("shape", [8, 32, 1]),
                       _first_op(h, "view")[3].__setitem__("offs", [0, 0, 0]),
                       _first_op(h, "view")[3].__setitem__("vs", None)),
}


@pytest.mark.parametrize("reason", sorted(MUTATIONS))
def test_validator_refuses_inconsistent_programs(reason: str) -> None:
    blob, _ = _program_bytes()
    h, rest = _split(blob)
    MUTATIONS[reason](h)
    with pytest.raises(ProgramError, match=reason) as err:
        decode(_join(h, rest))
    assert "\n" not in str(err.value)


def test_guards_must_match_their_paths() -> None:
    z = np.zeros((16, 32), F32)
    h, rest = _split(encode(branchy.program(z, np.zeros(4, np.int32), z.copy())))
    loop = h["body"][0][1][0]
    assert loop[0] == "l" and len(loop[6]) == 2
    bad = json.loads(json.dumps(h))
    del bad["body"][0][1][0][6][1]  # drop the path of the other branch
    with pytest.raises(ProgramError, match="other branch"):
        decode(_join(bad, rest))
    bad = json.loads(json.dumps(h))
    for it in bad["body"][0][1][0][6][0][1]:
        if it[0] == "g":
            it[2] = not it[2]
    with pytest.raises(ProgramError, match="decisions"):
        decode(_join(bad, rest))


def test_bounds_on_size_depth_and_constants() -> None:
    blob, _ = _program_bytes()
    with pytest.raises(ProgramError, match="exceeds the limit"):
        decode(blob, Limits(max_bytes=100))
    with pytest.raises(ProgramError, match="ops"):
        decode(blob, Limits(max_ops=2))
    h, rest = _split(blob)
    chain: Any = 1
    h["exprs"] = [["sym", "n"]] + [["bin", "+", {"x": i}, 1] for i in range(500)]
    with pytest.raises(ProgramError, match="deeper than"):
        decode(_join(h, rest))
    h, rest = _split(blob)
    h["exprs"] = [["sym", "n"]] + [["bin", "+", {"x": i}, {"x": i}] for i in range(40)]
    with pytest.raises(ProgramError, match="larger than"):
        decode(_join(h, rest))  # a DAG whose tree expansion is 2**40 nodes
    del chain
    x = np.ones((4, 8), F32)
    h, rest = _split(encode(_scalar_kernel.program(x, np.zeros_like(x))))
    h["blobs"][0][3] += 4
    with pytest.raises(ProgramError, match="byte count"):
        decode(_join(h, rest + b"\0" * 4))


@pypto.frontend.jit
def _scalar_kernel(x: pypto.Tensor([4, 8], pypto.DT_FP32), y: pypto.Tensor([4, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(4, 8)
    y[:] = x * 0.5


def test_json_tricks_are_refused() -> None:
    blob, rest = _program_bytes()
    h, rest = _split(blob)
    text = json.dumps(h, separators=(",", ":"))
    for bad, why in ((text.replace('"v":1', '"v":NaN'), "constant"), (text.replace('"v":1', '"v":1,"v":1'), "duplicate"),
                     (text.replace('"v":1', '"v":1.0'), "float"), ("[" * 100000 + "]" * 100000, "JSON"),
                     (text.replace('"v":1', '"v":' + "9" * 5000), "JSON")):
        raw = bad.encode()
        with pytest.raises(ProgramError, match=why):
            decode(MAGIC + struct.pack("<I", len(raw)) + raw + rest)
    for junk in (b"", b"PTOKPRG1", MAGIC + b"\xff\xff\xff\xff{}", b"\x80" * 100, "text"):
        with pytest.raises(ProgramError):
            decode(junk)  # type: ignore[arg-type]


# ---- fuzzing ----------------------------------------------------------------------------------------------

FUZZ_LIMITS = Limits(max_steps=20_000, max_alloc_bytes=8 * 1024**2)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_only_ever_raise_program_error(data: bytes) -> None:
    for blob in (data, MAGIC + data, MAGIC + struct.pack("<I", len(data)) + data):
        try:
            decode(blob)
        except ProgramError as exc:
            assert str(exc) and "\n" not in str(exc)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.text(max_size=8)
                     | st.sampled_from(["view", "binary", "exp", "+", "min", "float32", "DT_FP32", "read"]),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(
                         ["x", "f", "s", "a", "src", "out"]), inner, max_size=2), max_leaves=8)


def _paths(v: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*prefix, i))
    elif isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*prefix, k))
    return out


def _set(h: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    cur = h
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value
    return h


_BASE_BLOB, _BASE_ARGS = _program_bytes()
_BASE_H, _BASE_REST = _split(_BASE_BLOB)
_BASE_PATHS = _paths(_BASE_H)


def _run_decoded(blob: bytes) -> None:
    try:
        program = decode(blob)
    except ProgramError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    args = [a.copy() for a in _BASE_ARGS]
    try:
        res = execute(program, args, ExecOptions(limits=FUZZ_LIMITS))
    except ProgramError:
        return
    assert isinstance(res, ExecResult)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_programs_decode_and_run_or_raise_program_error(data: st.DataObject) -> None:
    h = json.loads(json.dumps(_BASE_H))
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(h)))
        h = _set(h, path, data.draw(_JSON))
    _run_decoded(_join(h, _BASE_REST) if isinstance(h, dict) else _join({"v": h}, _BASE_REST))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_numeric_mutations_run_within_limits(data: st.DataObject) -> None:
    """Ints swapped for other ints (keys, extents, loop bounds, offsets): decodes or not, runs bounded."""
    h = json.loads(json.dumps(_BASE_H))
    ints = [p for p in _paths(h) if type(_get(h, p)) is int]
    for _ in range(data.draw(st.integers(1, 4))):
        p = data.draw(st.sampled_from(ints))
        _set(h, p, data.draw(st.sampled_from([0, 1, -1, 2, 7, 8, 31, 32, 33, 10**6, 2**31, -(2**40)])))
    _run_decoded(_join(h, _BASE_REST))


def _get(h: Any, path: tuple) -> Any:
    for p in path:
        h = h[p]
    return h


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(_BASE_BLOB) - 1), st.integers(0, 255))
def test_byte_flips_only_ever_raise_program_error(pos: int, byte: int) -> None:
    blob = bytearray(_BASE_BLOB)
    blob[pos] = byte
    _run_decoded(bytes(blob))
