"""A fifth gym corpus (s25, written blind to bisect's rules: 7 of 23 named) - the rules it led to that need no run.

``static_consumed_source``: a kernel raised because it read a tensor that an earlier whole-tensor move consumed
(``tsum[:] = gmax`` for an accumulator's initial value, attn_softmax; ``li[:] = m_ij`` beside ``mi[:] = m_ij``,
gqa_decode_attn). Bisect named the line that raised (the read), one statement after or a loop trip later than the
bug; the move is the culprit."""

from __future__ import annotations

from runtime.bisect._rules import static_consumed_source

MSG = ("op [{op}]tile shape not set (Empty tensor: '{name}' was consumed by an earlier whole-tensor move `dst[:] = t` "
       "/ `dst.move(t)`; make the move the last use of the tensor)")

LOOP = '''\
import pypto


@pypto.frontend.jit
def kern(x, out):
    gmax = pypto.full([16, 1], -1e30, pypto.DT_FP32)
    tsum = pypto.full([16, 1], 0.0, pypto.DT_FP32)
    for i in pypto.loop(4, name="t"):
        r = pypto.view(x, [16, 64], [0, i * 64])
        e = pypto.exp(pypto.sub(r, gmax))
        tsum[:] = gmax
        pypto.assemble(e, [0, i * 64], out)
'''

TWO = '''\
import pypto


@pypto.frontend.jit
def kern(x, mi, li):
    m_ij = pypto.amax(x, -1, keepdim=True)
    li[:] = m_ij
    mi[:] = m_ij
'''


def _line(src: str, text: str) -> int:
    return next(i for i, ln in enumerate(src.splitlines(), 1) if text in ln)


def test_a_move_later_in_the_loop_body_is_named_for_the_read_that_raised() -> None:
    got = static_consumed_source(LOOP, _line(LOOP, "pypto.sub(r, gmax)"), MSG.format(op="SUB", name="gmax"))
    assert got is not None and got[0] == _line(LOOP, "tsum[:] = gmax")


def test_of_two_moves_the_one_before_the_raising_line_is_named() -> None:
    got = static_consumed_source(TWO, _line(TWO, "mi[:] = m_ij"), MSG.format(op="MOVE", name="m_ij"))
    assert got is not None and got[0] == _line(TWO, "li[:] = m_ij")


def test_other_errors_and_partial_writes_name_nothing() -> None:
    assert static_consumed_source(TWO, _line(TWO, "mi[:] = m_ij"), "some other error") is None
    partial = TWO.replace("li[:] = m_ij", "li[0:8] = m_ij")
    assert static_consumed_source(partial, _line(partial, "mi[:] = m_ij"), MSG.format(op="MOVE", name="m_ij")) is None


def test_nan_made_of_an_overflow_names_the_op_where_inf_first_appears() -> None:
    """``exp`` of logits without the max subtracted overflows to inf; NaN appears two ops later (``inf / inf``).
    The origin is the ``exp``: the first value holding inf although what it reads is finite. An inf written by a
    constant (a mask fill, no operands) is meant and names nothing new."""
    import numpy as np

    from runtime.bisect._analyzer import Analyzer, Golden
    from runtime.bisect._records import Rec

    x = np.full((4, 8), 100.0, np.float32)
    g = Golden({"x": x, "out": np.zeros((4, 8), np.float32)}, {"x": "input", "out": "output"}, atol=1e-4, rtol=1e-3)
    an = Analyzer(g)
    an.begin_call([("x", x), ("out", np.zeros_like(x))])

    def rec(seq: int, op: str, *reads: int, **kw: object) -> Rec:
        return Rec(seq=seq, node=seq, op=op, file="k.py", line=seq + 1, iteration={}, shape=[4, 8],
                   inputs=[{"kind": "record", "seq": s} for s in reads], **kw)  # type: ignore[arg-type]

    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x * 10)
        recs = [(rec(0, "view", source="x", offsets=[0, 0]), x), (rec(1, "mul", 0), x * 10), (rec(2, "exp", 1), e),
                (rec(3, "sum", 2), e.sum(-1, keepdims=True) + 0 * e), (rec(4, "div", 2, 3), e / e)]
    for r, v in recs:
        an.add(r, v)
    an.finish()
    window = [r for r, _ in recs]
    origin = an.nan_origin(window)
    assert origin is not None and origin.op == "exp", origin
    fill = rec(5, "full")
    an.add(fill, np.full((4, 8), np.inf, np.float32))
    an.add(rec(6, "sub", 5, 5), np.full((4, 8), np.nan, np.float32))
    assert an.inf_origin(an.by_seq[6]) is None


def test_a_write_of_a_value_cast_to_the_wrong_dtype_names_the_cast() -> None:
    from runtime.bisect._rules import static_dtype_source

    src = '''\
import pypto


@pypto.frontend.jit
def kern(x, out):
    r = pypto.exp(x)
    r = pypto.cast(r, pypto.DT_FP16)
    pypto.assemble(r, [0, 0], out)
'''
    msg = "assemble: source dtype DT_FP16 != destination dtype DT_BF16"
    got = static_dtype_source(src, _line(src, "pypto.assemble"), msg)
    assert got is not None and got[0] == _line(src, "pypto.cast")
    # a cast to another dtype than the one the message names says nothing
    other = src.replace("DT_FP16)", "DT_FP32)")
    assert static_dtype_source(other, _line(other, "pypto.assemble"), msg) is None


def test_a_wrapper_returning_the_wrong_part_of_a_right_result_is_named(tmp_path, golden_cache) -> None:
    """Every kernel write matches, the wrapper hands back another part of the buffer (``out_padded[:, -S:]`` for
    ``[:, :S]`` in attn_softmax): before, "no recorded op could be mapped to the divergence" and no line. A replay
    of the calls as made holds the golden outputs in a kernel argument, so the wrapper's return is named."""
    import shutil
    from pathlib import Path

    from runtime.bisect import bisect

    base = Path(__file__).parent / "corpus_data" / "silu"
    op_dir = tmp_path / "silu"
    shutil.copytree(base, op_dir)
    p = op_dir / "silu_impl.py"
    src = p.read_text()
    assert src.count("    return y\n") == 1
    src = src.replace("    return y\n", "    return y[::-1]\n")
    p.write_text(src)
    rep = bisect(op_dir, "silu_impl.py", golden_cache=golden_cache)
    assert rep.first_divergence is not None and rep.first_divergence.line == _line(src, "return y[::-1]"), \
        (rep.summary, rep.evidence)
    assert "wrapper" in rep.summary
