"""What the third gym corpus (``gym_corpus_third``) found bisect naming wrong, on small kernels written here.

Each was a late or missed line on a real gym kernel (``bench/bisect_gym_corpus.md``, the third-corpus section):

* a ``pypto.loop`` one trip short (``rope_sloop_last``) or an offset that forgets its tile size (``rope_noff``):
  output rows nobody wrote, and the last write was named - the loop was not found because the write's offset is a
  local (``s_off``) computed from the loop index, not the index itself; overlapping writes are a wrong step, not a
  short loop;
* a ``valid_shape`` passed as one name bound to a list (``rope_vshape_cs``): the view was named, not the list;
* a write offset by the loop index where the read walks tile by tile (``as_out_tile_index``): the read was named;
* errors raised where a wrong choice made upstream only arrives: a local written in a Python loop one round short
  (``ll_bias_last_row``), a local declared with the wrong dtype (``gqa_mi_dtype``), a rounded output copy computed
  with (``lstm_h_rounded``), a ``valid_shape`` that declares a partial tile whole (``mhc_valid``), a keepdim
  reduction over the wrong axis meeting its destination (``gqa_amax_axis``);
* a scalar the wrapper computes wrong (``adam_wrapper_b1``): the kernel line applying it was named;
* the one-tile case of an online softmax (``gqa_single_div``: a bug in the branch only a one-tile case runs): no
  derived goldens for a loop that ran once, not localized;
* a running-state write that stores the tile's value instead of the update computed for it (``gqa_mid_oi``:
  ``oi[:] = o_ij``): the update's line was named, its own computation right but fed a wrong state;
* a tile extent short of the loop's step (``lstm_unroll_tile``: rows between the writes never written): an orphan
  pairing nothing downstream could test (``inv_rms`` with the kernel's ``sqrt``) was named.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from runtime.bisect import bisect
from runtime.bisect._records import Rec
from runtime.bisect._rules import (
    _bound_line,
    _driving_loop,
    _step_source,
    static_dtype_source,
    static_extent_source,
    static_shape_source,
    static_unwritten_source,
)

ROPE = Path(__file__).parent / "stuck_data" / "rope_heads"
EMA = Path(__file__).parent / "third_data" / "ema"
SILU = Path(__file__).parent / "corpus_data" / "silu"
RMSROW = Path(__file__).parent / "third_data" / "rmsrow"

TILED = '''\
import pypto


@pypto.frontend.jit
def kern(x, out):
    S = x.shape[2]
    s_loops = (S + 16 - 1) // 16
    for b in pypto.loop(2, name="b_loop"):
        for n_blk in pypto.loop(4, name="n_loop"):
            n_off = n_blk * 32
            for s_blk in pypto.loop(s_loops, name="s_loop"):
                s_off = s_blk * 16
                valid_s = (S - s_off).min(16)
                vshape = [1, 32, valid_s, 32]
                t = pypto.view(x, [1, 32, 16, 64], [b, n_off, s_off, 0], valid_shape=vshape)
                pypto.assemble(t, [b, n_off, s_off, 0], out)
'''


def _line(src: str, text: str) -> int:
    return next(i for i, ln in enumerate(src.splitlines(), 1) if text in ln)


def _write(line: int) -> Rec:
    return Rec(seq=0, node=None, op="assemble", file="k.py", line=line, iteration={})


def test_the_loop_driving_a_write_is_found_through_the_offset_local() -> None:
    write = _write(_line(TILED, "pypto.assemble"))
    loop = _driving_loop(TILED, write, 2)
    assert loop is not None and loop.line == _line(TILED, "for s_blk")
    loop = _driving_loop(TILED, write, 1)
    assert loop is not None and loop.line == _line(TILED, "for n_blk")
    assert _driving_loop(TILED, write, 3) is None  # a constant offset: no loop drives it


def test_the_line_that_scales_the_loop_index_into_the_offset() -> None:
    write = _write(_line(TILED, "pypto.assemble"))
    assert _step_source(TILED, write, 1, _line(TILED, "for n_blk")) == _line(TILED, "n_off = n_blk * 32")
    inline = TILED.replace("[b, n_off, s_off, 0], out", "[b, n_blk, s_off, 0], out")
    assert _step_source(inline, write, 1, _line(inline, "for n_blk")) == write.line


def test_a_valid_shape_passed_as_one_name_is_followed_to_its_list() -> None:
    view = _line(TILED, "pypto.view")
    assert _bound_line(TILED, view, 2) == (_line(TILED, "valid_s = "), "valid_s")  # a local on that axis
    assert _bound_line(TILED, view, 3) == (_line(TILED, "vshape = "), "vshape")  # a constant: the list's line


LOCALS = '''\
import pypto


@pypto.frontend.jit
def kern(x, w, h_out, c_out, n):
    mi = pypto.tensor([4, 8, 1], pypto.DT_BF16, "mi")
    bias = pypto.tensor([n, 64], pypto.DT_FP32, "bias")
    for i in range(n - 1):
        pypto.assemble(w, [i, 0], bias)
    y = pypto.add(x, bias)
    for s in pypto.loop(4):
        m = pypto.amax(x, 1, keepdim=True)
        if pypto.is_loop_begin(s):
            mi[:] = m
        else:
            mi[:] = pypto.maximum(mi, m)
    c = pypto.add(y, y)
    c_o = pypto.cast(c, pypto.DT_FP16)
    pypto.assemble(c_o, [0, 0], c_out)
    h = pypto.mul(c_o, 2.0)
    h2 = pypto.mul(h, w)
    pypto.assemble(h2, [0, 0], h_out)
'''


def test_a_local_written_only_in_a_short_python_loop_names_the_loop() -> None:
    got = static_unwritten_source(LOCALS, _line(LOCALS, "y = pypto.add"),
                                  "Run pass failed. (ADD: Tensor 'bias' is missing Alloc - a local pypto.tensor is "
                                  "read but never written)")
    assert got is not None and got[0] == _line(LOCALS, "for i in range")
    assert static_unwritten_source(LOCALS, _line(LOCALS, "y = pypto.add"), "some other error") is None


def test_a_dtype_error_writing_a_local_names_its_declaration() -> None:
    got = static_dtype_source(LOCALS, _line(LOCALS, "mi[:] = m"),
                              "move: source dtype DT_FP32 != destination dtype DT_BF16 (insert pypto.cast)")
    assert got is not None and got[0] == _line(LOCALS, "mi = pypto.tensor")


def test_a_dtype_error_from_a_rounded_output_copy_names_the_statement_computing_with_it() -> None:
    got = static_dtype_source(LOCALS, _line(LOCALS, "h2 = pypto.mul"),
                              "mul: The dtype of input tensors are not same. (DT_FP16 vs DT_FP32)")
    assert got is not None and got[0] == _line(LOCALS, "h = pypto.mul(c_o")


def test_a_keepdim_reduction_over_the_axis_the_shapes_refuse_is_named() -> None:
    got = static_shape_source(LOCALS, _line(LOCALS, "mi[:] = m"),
                              "`mi[:] = ...` / move: source shape [4, 1, 64] != destination shape [4, 8, 1]")
    assert got is not None and got[0] == _line(LOCALS, "m = pypto.amax")
    # shapes that say nothing about the axis name nothing
    assert static_shape_source(LOCALS, _line(LOCALS, "mi[:] = m"),
                               "move: source shape [4, 1, 64] != destination shape [2, 8, 1]") is None


EXTENT = '''\
import pypto


@pypto.frontend.jit
def kern(x, out):
    t = x.shape[0]
    for i in pypto.loop(1):
        tile_t = 32
        t_valid = (t - i).min(tile_t)
        v = pypto.view(x, [tile_t, 16], [0, 0], valid_shape=[t_valid, 16])
        v = pypto.transpose(v, 1, 0)
        v = pypto.reshape(v, [16, tile_t], valid_shape=[16, tile_t], inplace=True)
        v = pypto.transpose(v, 1, 0)
        tmp = pypto.Tensor([t, 16], dtype=pypto.DT_FP32)
        pypto.assemble(v, [0, 0], tmp)
'''


def test_a_write_past_its_destination_names_the_valid_shape_that_declared_the_tile_whole() -> None:
    msg = "assemble into 'tmp': region [0, 32) on axis 0 is outside the destination extent 8"
    got = static_extent_source(EXTENT, _line(EXTENT, "pypto.assemble"), msg)
    assert got is not None and got[0] == _line(EXTENT, "pypto.reshape")
    right = EXTENT.replace("valid_shape=[16, tile_t]", "valid_shape=[16, t_valid]")
    assert static_extent_source(right, _line(right, "pypto.assemble"), msg) is None


def test_valid_data_larger_than_the_destination_names_the_valid_shape_that_declared_the_tile_whole() -> None:
    # (the emulator's run-time size check, s47, fires before the region check: same cause, same line)
    msg = ("assemble into 'tmp': source valid shape (32, 16) is larger than the destination shape (8, 16) on axis 0 "
           "(iteration i=0)")
    got = static_extent_source(EXTENT, _line(EXTENT, "pypto.assemble"), msg)
    assert got is not None and got[0] == _line(EXTENT, "pypto.reshape")
    right = EXTENT.replace("valid_shape=[16, tile_t]", "valid_shape=[16, t_valid]")
    assert static_extent_source(right, _line(right, "pypto.assemble"), msg) is None
    # the trace-time whole-tensor check ("source shape ... larger than destination shape") is not this message
    assert static_extent_source(EXTENT, _line(EXTENT, "pypto.assemble"),
                                "assemble: source shape (32, 16) is larger than destination shape (8, 16) on axis 0") \
        is None


def _planted(tmp: Path, base: Path, stage: str, old: str, new: str, mark: str) -> tuple[Path, int]:
    op_dir = tmp / base.name
    shutil.copytree(base, op_dir)
    p = op_dir / stage
    src = p.read_text()
    assert src.count(old) == 1
    src = src.replace(old, new)
    p.write_text(src)
    return op_dir, _line(src, mark)


@pytest.mark.parametrize("old,new,mark", [
    ('pypto.loop((S + ST - 1) // ST, name="s_loop")', 'pypto.loop((S + ST - 1) // ST - 1, name="s_loop")',
     "for s_blk in"),
    ("h_off = h_blk * HT", "h_off = h_blk", "h_off = h_blk"),
    ("c_t = pypto.view(cos, [1, 1, ST, D], [b, 0, s_off, 0], valid_shape=[1, 1, valid_s, D])",
     "vshape_cs = [1, 1, valid_s, HALF]\n                "
     "c_t = pypto.view(cos, [1, 1, ST, D], [b, 0, s_off, 0], valid_shape=vshape_cs)", "vshape_cs = "),
], ids=["loop_one_short", "offset_without_tile", "valid_shape_list"])
def test_geometry_bugs_are_named_where_the_choice_is_made(tmp_path: Path, golden_cache: dict, old: str, new: str,
                                                          mark: str) -> None:
    op_dir, line = _planted(tmp_path, ROPE, "rope_heads_impl.py", old, new, mark)
    rep = bisect(op_dir, "rope_heads_impl.py", golden_cache=golden_cache)
    assert rep.status == "DIVERGENCE_FOUND", rep.summary
    assert rep.first_divergence is not None and rep.first_divergence.line == line, (rep.summary, rep.evidence)


def test_a_write_offset_by_the_bare_loop_index_is_named_not_the_read(tmp_path: Path, golden_cache: dict) -> None:
    # the values written at column j equal the golden at column j * C, where the one read fetched them: before, the
    # read was named ("its offsets do not follow the write's"); the write's offsets overlap, the read's tile the axis
    op_dir, line = _planted(tmp_path, SILU, "silu_impl.py", "pypto.assemble(yt, [i * T, j * C], y)",
                            "pypto.assemble(yt, [i * T, j], y)", "pypto.assemble(yt")
    rep = bisect(op_dir, "silu_impl.py", golden_cache=golden_cache)
    assert rep.first_divergence is not None and rep.first_divergence.line == line, (rep.summary, rep.evidence)


def test_writes_with_gaps_between_them_name_the_tile_extent_not_an_unconfirmed_pairing(
        tmp_path: Path, golden_cache: dict) -> None:
    # rows 4-7 of every 8 are never written. Before, the golden's ``inv_rms`` paired with the kernel's ``sqrt`` (the
    # kernel divides by it) "departed while its operands match" and was named: the pairing could not be tested
    # (nothing downstream departs) and was kept. Every write it feeds matches: the pairing is dropped, and the gap
    # between the writes names the local that sets the tile's extent
    op_dir, line = _planted(tmp_path, RMSROW, "rmsrow_impl.py", "rows = ROWS", "rows = ROWS // 2", "rows = ROWS")
    rep = bisect(op_dir, "rmsrow_impl.py", golden_cache=golden_cache)
    assert rep.first_divergence is not None and rep.first_divergence.line == line, (rep.summary, rep.evidence)
    assert any("pairing" in e and "dropped" in e for e in rep.evidence)


def test_the_right_rmsrow_names_nothing(golden_cache: dict, tail_case) -> None:
    rep = bisect(RMSROW, "rmsrow_impl.py", case=tail_case(RMSROW), golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", rep.summary


def _rec(seq: int, op: str, line: int, it: int, *, target: str | None = None) -> Rec:
    return Rec(seq=seq, node=line, op=op, file="k.py", line=line, iteration={"kv": it}, target=target)


def test_a_state_write_that_drops_the_update_computed_for_it_is_named() -> None:
    # per iteration: o = matmul (20), new = state * a + o (21), state[:] = o (22) where state[:] = new was meant;
    # the update of iteration 0 is never read, and iteration 1's update reads the state iteration 0 wrote
    from types import SimpleNamespace

    from runtime.bisect._auto import _dropped_update

    o0, n0, w0 = _rec(0, "matmul", 20, 0), _rec(1, "add", 21, 0), _rec(2, "move", 22, 0, target="state")
    o1, n1, w1 = _rec(3, "matmul", 20, 1), _rec(4, "add", 21, 1), _rec(5, "move", 22, 1, target="state")
    parents = {n0.seq: [o0], w0.seq: [o0], n1.seq: [o1, w0], w1.seq: [o1]}

    def an(p: dict) -> SimpleNamespace:
        return SimpleNamespace(recs=[o0, n0, w0, o1, n1, w1], parents=lambda r: p.get(r.seq, []),
                               arg_shapes={"out": (8, 8)})

    got = _dropped_update(an(parents), n1)  # type: ignore[arg-type]
    assert got is not None and got[0] is w0
    # the right kernel: the write stores the update (it is read), nothing is dropped
    assert _dropped_update(an({**parents, w0.seq: [n0], w1.seq: [n1]}), n1) is None  # type: ignore[arg-type]
    # a state that is a kernel argument is an output, not running state
    w0.target = "out"
    assert _dropped_update(an(parents), n1) is None  # type: ignore[arg-type]


def test_a_one_tile_case_of_a_tiled_softmax_gets_the_tile_goldens() -> None:
    # gqa_single_div: the one-tile case (64 keys, tiles of 64) runs only the is_loop_begin/is_loop_end branch,
    # ``div(o_ij, m_ij)`` where ``l_ij`` was meant; ``o_ij = exp(s - m) @ v`` had no golden (no derived goldens for a
    # loop that ran once), so nothing between the matching scores and the output could be named
    from types import SimpleNamespace

    import numpy as np

    from runtime.bisect._online import _tiling

    s0 = Rec(seq=0, node=1, op="mul", file="k.py", line=10, iteration={"LOOP_S2": 0})
    s0.valid_shape, s0.shape = [4, 8, 64], [4, 8, 64]
    g = SimpleNamespace(arrays={"scores": np.zeros((1, 32, 1, 64), np.float32)})

    def an(it: dict[str, int]) -> SimpleNamespace:
        s0.iteration = it
        return SimpleNamespace(g=g, recs=[s0], status={0: "match"}, matched={0: ("scores", (0, 0, 0, 0))})

    assert _tiling(an({"LOOP_S2": 0}), "scores") == ("LOOP_S2", 64)  # type: ignore[arg-type]
    assert _tiling(an({}), "scores") is None  # type: ignore[arg-type] # not in a loop: no tile to align with
    assert _tiling(an({"LOOP_S2": 1}), "scores") is None  # type: ignore[arg-type] # a loop that ran more than once


def test_a_scalar_the_wrapper_computes_wrong_names_the_wrapper_line(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, EMA, "ema_impl.py", "one_m_beta = 1.0 - beta", "one_m_beta = 1.0 - beta * beta",
                            "one_m_beta = 1.0 - beta")
    rep = bisect(op_dir, "ema_impl.py", golden_cache=golden_cache)
    assert rep.status == "DIVERGENCE_FOUND"
    assert rep.first_divergence is not None and rep.first_divergence.line == line, (rep.summary, rep.evidence)
    assert any("every scalar parameter" in e.lower() for e in rep.evidence)


def test_a_kernel_line_applying_the_wrong_scalar_parameter_stays_named(tmp_path: Path, golden_cache: dict) -> None:
    # ``one_m_beta`` is left unread: the kernel chose the wrong parameter, the wrapper's number is right
    op_dir, line = _planted(tmp_path, EMA, "ema_impl.py", "pypto.mul(g_t, one_m_beta)", "pypto.mul(g_t, beta)",
                            "mg = pypto.mul")
    rep = bisect(op_dir, "ema_impl.py", golden_cache=golden_cache)
    assert rep.first_divergence is not None and rep.first_divergence.line == line, (rep.summary, rep.evidence)


DISPATCH = '''\
import pypto


@pypto.frontend.jit
def k_bf16(w: pypto.Tensor([8], pypto.DT_BF16), out: pypto.Tensor([8], pypto.DT_BF16), a: float, b: float):
    pass


@pypto.frontend.jit
def k_fp32(w: pypto.Tensor([8], pypto.DT_FP32), out: pypto.Tensor([8], pypto.DT_FP32), a: float, b: float):
    pass


def wrapper(w, beta, bf16):
    one_m_b = 1.0 - beta
    if bf16:
        kernel = k_bf16
    else:
        kernel = k_fp32
    out = w.copy()
    kernel(w, out, float(beta), float(one_m_b))
    return out
'''


def test_the_wrapper_line_of_a_scalar_argument_through_a_dispatch_alias_and_a_conversion() -> None:
    from runtime.bisect._parse import parse_source
    from runtime.bisect._scalar import _argument_line

    tree = parse_source(DISPATCH)
    kdef = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "k_fp32")
    assert _argument_line(tree, kdef, "b") == _line(DISPATCH, "one_m_b = 1.0 - beta")
    assert _argument_line(tree, kdef, "a") is None  # the wrapper's own parameter, passed through


def test_the_right_ema_names_nothing(golden_cache: dict, tail_case) -> None:
    rep = bisect(EMA, "ema_impl.py", case=tail_case(EMA), golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", rep.summary


def test_corpus_lines_are_the_vendor_lines() -> None:
    """Every third-corpus bug names a line whose text holds its ``old`` once (checked against the vendor file when
    the gym is present; the format is checked always)."""
    import gym_corpus_third as third

    ids = [b.id for b in third.BUGS]
    assert len(ids) == len(set(ids)) >= 20
    gym = third.shared_gym()
    for b in third.BUGS:
        assert b.old != b.new and b.line > 0
        if gym is not None:
            text = (gym / "ops" / b.op / third.OPS[b.op]).read_text().splitlines()[b.line - 1]
            assert text.count(b.old) == 1, (b.id, text)
