"""What the fourteenth gym corpus (``gym_corpus_fourteenth``, session 42) found bisect naming wrong or nothing, on a small
kernel of our own (``fourteenth_data/twopass``) and on kernel sources, plus the mechanisms' guards. The gym rows
themselves are in ``test_fourteenth_corpus_s42.py``.

* a write of the golden's previous step (``cast(dk_acc)`` where ``cast(mul(dk_acc, scale))`` was meant): the copy's
  operand matches a golden, so the departure was taken for "a coincidence of a wrong quantity" and nothing was named.
  Now (``_claims.missing_factor``) when the written golden is one constant times the operand's, the line computing the
  written value is named;
* a read of the value before its last step (``cast(o_ij)`` where ``o_final = div(o_ij, l_ij)``, computed and never
  read, was meant): the repair test set the op before to the output's golden and named it. Now
  (``_repair.dead_successor_read``) a value computed from the claimed op, read by nothing and matching a golden, is
  tried in the reader's place (one replay each) and the reader is named;
* a pass whose loop runs no trip while another pass wrote its output (the dK/dV pass' ``pypto.loop(s_loop - 1)``):
  nothing departed, nothing was named. Now (``_rules.static_zero_trip_source(written=...)``) the outputs the run never
  wrote are looked at alone, through aliases (``dk_2d = dk``); a ``loop(start, stop, step)`` counts its trips from
  all three (it read ``start`` as the count);
* a loop stopping one short whose write takes its offsets from a local list (``output_offset = [bs_offset, 0]``): the
  write was named (its value matches: a false claim). Now (``_rules._offset_lists``) the list is followed to the loop
  index, and the loop's stop bound is named on its own line when the loop call spans lines;
* a cast to the wrong dtype before a matmul (``cast(ds_ij, DT_FP16)`` then ``matmul(ds_bf16, k_j)``): the missing-cast
  rule followed the names through the cast into the helper. Now (``_rules.static_cast_dtype_source``) the cast whose
  dtype disagrees with the dtype the source declares for the other operand is named.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import ml_dtypes
import numpy as np
from planting import plant

from runtime.bisect import bisect
from runtime.bisect._analyzer import Analyzer, Golden
from runtime.bisect._claims import missing_factor
from runtime.bisect._rules import static_cast_dtype_source, static_zero_trip_source

DATA = Path(__file__).parent / "fourteenth_data"


def test_the_right_kernel_is_named_nothing(golden_cache: dict) -> None:
    rep = bisect(DATA / "twopass", "twopass_impl.py", golden_cache=golden_cache)
    assert rep.status == "NO_DIVERGENCE", rep.summary


def test_a_dropped_scale_before_the_write_names_the_line_computing_the_written_value(tmp_path: Path,
                                                                                    golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "twopass", "y1_t = pypto.cast(pypto.mul(a, 0.5), pypto.DT_BF16)",
                         "y1_t = pypto.cast(a, pypto.DT_BF16)")
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("the factor is missing" in e for e in rep.evidence), rep.evidence


def test_a_wrong_constant_is_no_missing_factor_claim(tmp_path: Path, golden_cache: dict) -> None:
    # the scale applied, but a wrong one: the mul departs from matching operands and is named itself
    op_dir, line = plant(DATA, tmp_path, "twopass", "pypto.mul(a, 0.5)", "pypto.mul(a, 0.25)")
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line and f.op != "missing_factor", (rep.summary, rep.evidence)


def test_a_read_of_the_value_before_its_last_step_names_the_read(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "twopass", "p_bf16 = pypto.cast(p, pypto.DT_BF16)",
                         "p_bf16 = pypto.cast(r, pypto.DT_BF16)")
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("before its last step" in e for e in rep.evidence), rep.evidence


def test_a_wrong_op_in_the_helper_is_not_taken_for_a_skipped_step(tmp_path: Path, golden_cache: dict) -> None:
    # the normalised value is wrong (nothing left unread that matches): no "reads the value before its last step"
    op_dir, line = plant(DATA, tmp_path, "twopass", "return pypto.div(r, s)", "return pypto.mul(r, s)")
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    assert not any("before its last step" in e for e in rep.evidence), rep.evidence
    f = rep.first_divergence
    assert f is None or line in (f.line, f.call_site) or f.op != "cast", (rep.summary, rep.evidence)


def test_a_pass_whose_loop_runs_no_trip_names_its_count(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "twopass", 'for j in pypto.loop(n_loop, name="LOOP_b"',
                         'for j in pypto.loop(N // 32, name="LOOP_b"')
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("never wrote its parameter 'y2'" in e for e in rep.evidence), rep.evidence


def test_a_loop_one_short_with_offsets_in_a_list_names_its_bound(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = plant(DATA, tmp_path, "twopass", 'n_loop, name="LOOP_a"', 'n_loop - 1, name="LOOP_a"')
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert f.status not in ("match", "input", "const"), rep.to_json()


KERNEL = textwrap.dedent('''\
    import pypto

    S_TILE, HEAD_DIM = 128, 64


    @pypto.frontend.jit
    def kern(q, dq, dk):
        dq_2d = dq
        dk_2d = dk
        s = q.shape[0]
        s_loop = s // S_TILE
        for s1 in pypto.loop(s_loop, name="a"):
            pypto.assemble(pypto.view(q, [S_TILE, HEAD_DIM], [s1 * S_TILE, 0]), [s1 * S_TILE, 0], dq_2d)
        for s2 in pypto.loop(s_loop, name="b"):
            for s1 in pypto.loop(0, s_loop - 1, 1, name="c"):
                pypto.assemble(pypto.view(q, [S_TILE, HEAD_DIM], [s1 * S_TILE, 0]), [s2 * S_TILE, 0], dk_2d)
    ''')


def test_zero_trip_of_one_output_through_an_alias() -> None:
    shapes = [("kern", {"q": (128, 64), "dq": (128, 64), "dk": (128, 64)})]
    got = static_zero_trip_source(KERNEL, shapes, written={"dq"})
    assert got is not None and got[0] == 15 and "'dk'" in got[1], got
    # every output written: nothing to say; a longer sequence runs the inner loop once
    assert static_zero_trip_source(KERNEL, shapes, written={"dq", "dk"}) is None
    assert static_zero_trip_source(KERNEL, [("kern", {"q": (256, 64), "dq": (256, 64), "dk": (256, 64)})],
                                   written={"dq"}) is None


def test_a_three_argument_loop_counts_from_its_start_and_step() -> None:
    # ``pypto.loop(0, S, L)`` with S below L runs one trip: before s42 its first argument (0) was read as the count
    src = textwrap.dedent('''\
        import pypto

        @pypto.frontend.jit
        def kern(x, out):
            S = x.shape[0]
            for i in pypto.loop(0, S, 128, name="a"):
                pypto.assemble(pypto.view(x, [128, 8], [i, 0]), [i, 0], out)
        ''')
    assert static_zero_trip_source(src, [("kern", {"x": (16, 8), "out": (16, 8)})]) is None
    empty = src.replace("pypto.loop(0, S, 128", "pypto.loop(0, S - 16, 128")
    got = static_zero_trip_source(empty, [("kern", {"x": (16, 8), "out": (16, 8)})])
    assert got is not None and got[0] == 6, got


CAST = textwrap.dedent('''\
    import pypto


    @pypto.frontend.jit
    def kern(k: pypto.Tensor([128, 64], pypto.DT_BF16), ds: pypto.Tensor([128, 128], pypto.DT_FP32)):
        k_2d = k
        k_j = pypto.view(k_2d, [128, 64], [0, 0])
        ds_bf16 = pypto.cast(ds, pypto.DT_FP16)
        dq_tile = pypto.matmul(ds_bf16, k_j, pypto.DT_FP32)
    ''')


def test_a_cast_to_the_dtype_the_other_operand_has_not_is_named() -> None:
    got = static_cast_dtype_source(CAST, 9, "Non-FP8 inputs require identical dtypes.")
    assert got is not None and got[0] == 8 and "DT_FP16" in got[1], got


def test_no_cast_claim_when_the_source_does_not_give_every_operand_a_dtype() -> None:
    computed = CAST.replace("k_j = pypto.view(k_2d, [128, 64], [0, 0])", "k_j = pypto.exp(k_2d)")
    assert static_cast_dtype_source(computed, 9, "Non-FP8 inputs require identical dtypes.") is None
    same = CAST.replace("pypto.DT_FP16)", "pypto.DT_BF16)")
    assert static_cast_dtype_source(same, 9, "Non-FP8 inputs require identical dtypes.") is None
    assert static_cast_dtype_source(CAST, 9, "shape mismatch") is None
    # a cast to the dtype the kernel computes in (a parameter declared with it) beside an un-cast operand: the other
    # operand lost its cast (s39's castpair, the alias rule's), this cast is not named
    fp16_used = CAST.replace("ds: pypto.Tensor([128, 128], pypto.DT_FP32)", "ds: pypto.Tensor([128, 128], pypto.DT_FP16)")
    assert static_cast_dtype_source(fp16_used, 9, "Non-FP8 inputs require identical dtypes.") is None


def test_missing_factor_needs_one_constant_over_the_whole_golden() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    arrays = {"x": a, "m": a * 2.0, "out": (a * 0.25).astype(ml_dtypes.bfloat16), "sq": a * a}
    g = Golden(arrays, {"x": "input", "m": "intermediate", "out": "output", "sq": "intermediate"}, 1e-2, 1e-2)
    an = Analyzer(g)
    k = missing_factor(an, "m", "out")
    assert k is not None and abs(k - 0.125) < 1e-3, k
    assert missing_factor(an, "out", "m") is None       # (the golden's later value is no earlier step)
    assert missing_factor(an, "m", "sq") is None        # not one constant


def test_call_sites_come_from_the_kernel_that_ran() -> None:
    # two jit kernels call one helper in the same loops (flash_attention_score_grad's profile copy first): the ops of
    # the second kernel's run get the second kernel's call line (before s42: the first one's)
    from runtime.bisect._claims import call_sites
    from runtime.bisect._records import Rec

    src = textwrap.dedent('''\
        import pypto

        def tile(a):
            return pypto.mul(a, 2.0)

        @pypto.frontend.jit
        def profile(x, out):
            for i in pypto.loop(4, name="L", idx_name="i"):
                t = pypto.view(x, [4, 4], [i * 4, 0])
                pypto.assemble(tile(t), [i * 4, 0], out)

        @pypto.frontend.jit
        def kernel(x, out):
            for i in pypto.loop(4, name="L", idx_name="i"):
                t = pypto.view(x, [4, 4], [i * 4, 0])
                pypto.assemble(tile(t), [i * 4, 0], out)
        ''')
    it = {"L": 0}
    recs = [Rec(seq=0, node=0, op="view", file="k_impl.py", line=15, iteration=dict(it)),
            Rec(seq=1, node=1, op="mul", file="k_impl.py", line=4, iteration=dict(it)),
            Rec(seq=2, node=2, op="assemble", file="k_impl.py", line=16, iteration=dict(it))]
    assert call_sites(src, "k_impl.py", recs).get(1) == 16
    # (only the helper's ops recorded: nothing says which kernel ran - the first call, as before)
    assert call_sites(src, "k_impl.py", recs[1:2]).get(1) == 10
