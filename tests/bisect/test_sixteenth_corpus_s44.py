"""The sixteenth gym corpus (``gym_corpus_sixteenth``, session 44) and the two open items of session 43, on our own
small kernels (fast tier) and on the real operators (slow tier).

Scored with ``bench/bisect_gym_corpus.py --corpus sixteenth --no-verify --no-ratio --no-baseline`` (hit = the named
culprit, or its call site, is on the bugged statement). Blind (origin/main at the start of s44, no rule change):
12 hit, 1 late of 13 - ``f16_ll_mask_broadcast``, the group mask unsqueezed on axis 1, named at the ``expand_clone``
that raised on the next line. After: 13 of 13 (``_rules.shape_error_source`` reads an unexpandable shape back to the
``unsqueeze`` that made it).

The two open items of s43, each a general fix:

* twopass ``a = t`` (``a = mul(t, 3.0)`` meant): the golden's ``a`` matched nothing and was paired with the second
  pass' ``exp`` (the only unmatched op whose place fits), which then "departed with matching operands" and was named.
  The pairing test (``_repair.confirm_pairings``) only looked at the first departing value, a write of the first pass
  that is no pairing - so the pairing was never tested. It now tests every departing paired op the strict rule could
  name (the pairing is dropped: what the ``exp`` feeds is written right); and a wrong-selection repair whose golden the
  kernel binds by a bare alias of the selection (``a = t``, golden ``a``) names the alias line, not the view.
* ``f14_gdr_q_noscale`` (``q_s = q_n``): the golden re-binds the scaled query under its old name, so the by-name alias
  rule had nothing to compare ``q_s`` with and the matmul reading it was named. Now (``_repair.dropped_scale_alias``)
  when the named op is a linear op whose statement applies no constant and reads only matching values, one of them
  through a bare alias, the golden holds that value's golden times a constant later, and a replay with the value
  scaled by it makes the last departing write match: the alias line is named. Here on ``sixteenth_data/scaled``
  (the gym row is in ``test_fourteenth_corpus_s42.py``).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from gym_corpus_sixteenth import BUGS
from planting import plant

from runtime.bisect import bisect
from runtime.bisect._records import Rec
from runtime.bisect._rules import shape_error_source, static_reshape_dim_source

DATA = Path(__file__).parent / "sixteenth_data"
TWOPASS = Path(__file__).parent / "fourteenth_data"

NAMED: list[str] = [b.id for b in BUGS]
OPEN: dict[str, str] = {}


def first_case(op_dir: Path) -> str:
    """One case (the first in bisect's order): what these tests check needs no other (fast tier)."""
    from runtime.bisect.api import order_cases
    from runtime.opdir import load_op_dir

    return order_cases(load_op_dir(op_dir).cases())[0].name


def test_every_row_is_accounted_for() -> None:
    assert sorted(b.id for b in BUGS) == sorted([*NAMED, *OPEN])
    assert len(BUGS) >= 8


def test_a_bare_alias_dropping_a_step_in_the_first_pass_is_named_not_the_second_pass(tmp_path: Path,
                                                                                    golden_cache: dict) -> None:
    op_dir, line = plant(TWOPASS, tmp_path, "twopass", "a = pypto.mul(t, 3.0)", "a = t")
    rep = bisect(op_dir, "twopass_impl.py", golden_cache=golden_cache, case=first_case(op_dir))
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("pairing of line 34" in e and "is dropped" in e for e in rep.evidence), rep.evidence
    assert f.status not in ("match", "input", "const"), rep.to_json()


def test_our_scaled_kernel_is_named_nothing(golden_cache: dict) -> None:
    rep = bisect(DATA / "scaled", "scaled_impl.py", golden_cache=golden_cache, case=first_case(DATA / "scaled"))
    assert rep.status == "NO_DIVERGENCE", rep.summary


def test_a_scale_dropped_by_a_bare_alias_is_named_at_the_alias(tmp_path: Path, golden_cache: dict) -> None:
    # no golden is called ``q_s`` (the golden re-binds ``query``): the value test, not the name, finds the alias
    op_dir, line = plant(DATA, tmp_path, "scaled", "q_s = pypto.mul(q_n, 0.125)", "q_s = q_n")
    rep = bisect(op_dir, "scaled_impl.py", golden_cache=golden_cache, case=first_case(op_dir))
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("scaled by 0.125" in e and "a scaling step is missing" in e for e in rep.evidence), rep.evidence


def test_a_wrong_scale_before_a_right_alias_is_named_at_the_scale(tmp_path: Path, golden_cache: dict) -> None:
    # the scale applied, a wrong one, then an honest alias the matmul reads: the mul stays named, not the alias
    op_dir, line = plant(DATA, tmp_path, "scaled", "q_s = pypto.mul(q_n, 0.125)\n        s_t = pypto.matmul(q_s,",
                         "q_s = pypto.mul(q_n, 0.25)\n        q_a = q_s\n        s_t = pypto.matmul(q_a,", key="0.25")
    rep = bisect(op_dir, "scaled_impl.py", golden_cache=golden_cache, case=first_case(op_dir))
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert not any("a scaling step is missing" in e for e in rep.evidence), rep.evidence


def test_a_constant_multiple_is_exact_relative_to_the_values() -> None:
    from runtime.bisect._repair import _constant_multiple

    rng = np.random.default_rng(0)
    q = (rng.standard_normal((4, 128)) * 0.09).astype(np.float32)  # all of it below a 0.05 atol's tenfold
    k = _constant_multiple(q, q * np.float32(1 / 128 ** 0.5))
    assert k is not None and abs(k - 128 ** -0.5) < 1e-6, k
    assert _constant_multiple(q, q) is None                      # (a factor of 1 is no step)
    assert _constant_multiple(q, q * q) is None                  # not one constant
    assert _constant_multiple(q, np.zeros_like(q)) is None
    assert _constant_multiple(q[:2], q * 2) is None              # sizes differ


def _recs(axis_shape: tuple[int, ...]) -> list[Rec]:
    mask = Rec(seq=0, node=0, op="scatter_", file="k.py", line=10, iteration={}, shape=[16, 8])
    un = Rec(seq=1, node=1, op="unsqueeze", file="k.py", line=11, iteration={}, shape=list(axis_shape),
             inputs=[{"kind": "record", "seq": 0}])
    return [mask, un]


def test_an_unsqueeze_on_the_wrong_axis_is_named_for_the_expand_that_raised() -> None:
    msg = "expand_clone: [16, 1, 8] cannot expand to [16, 8, 32]"
    got = shape_error_source(_recs((16, 1, 8)), msg, 13)
    assert got is not None and got[0].line == 11 and "new axis at 2" in got[1], got
    # no other place of the new axis gives a shape that expands: nothing to say
    assert shape_error_source(_recs((16, 8, 1)), "expand_clone: [16, 8, 1] cannot expand to [16, 9, 32]", 13) is None
    assert shape_error_source(_recs((1, 16, 8)), "expand_clone: [1, 16, 8] cannot expand to [16, 16, 16]", 13) is None


RESHAPE = textwrap.dedent('''\
    import pypto


    @pypto.frontend.jit
    def kern(x, gate, out, n_group, k_group):
        ne = gate.shape[0]
        unit = ne // k_group
        for i, tb in pypto.loop_unroll(0, x.shape[0], 1, name="L", idx_name="i", unroll_list=[4, 1]):
            s = pypto.view(x, [tb, ne], [i, 0])
            r = pypto.reshape(s, [tb, n_group, unit])
            pypto.assemble(pypto.reshape(r, [tb, ne]), [i, 0], out)
    ''')
SIZE = "reshape: Shape size not match: element count of [4, 256] != [4, 8, 64]"


def test_a_reshape_dim_computed_wrong_names_its_computation() -> None:
    got = static_reshape_dim_source(RESHAPE, 10, SIZE)
    assert got is not None and got[0] == 7 and "needs to be 32" in got[1], got


def test_no_reshape_dim_claim_without_one_computed_dim_that_would_fit() -> None:
    # two computed dims: which one is wrong is not known
    two = RESHAPE.replace("for i, tb", "g2 = n_group * 1\n    for i, tb").replace("[tb, n_group, unit]", "[tb, g2, unit]")
    assert static_reshape_dim_source(two, 11, SIZE) is None
    # no count makes the dim whole, another message, another line
    assert static_reshape_dim_source(RESHAPE, 10, SIZE.replace("[4, 256]", "[4, 250]")) is None
    assert static_reshape_dim_source(RESHAPE, 10, "reshape: only one -1 allowed (Shape size not match)") is None
    assert static_reshape_dim_source(RESHAPE, 11, SIZE) is None
    # all dims given to the kernel (the loop's tile, parameters): nothing computed to name
    given = RESHAPE.replace("[tb, n_group, unit]", "[tb, n_group, k_group]")
    assert static_reshape_dim_source(given, 10, SIZE) is None


def _bisect_row(bug_id: str, op_root: Path, tmp_path: Path, golden_cache: dict):  # noqa: ANN202 - (report, span)
    from gym_corpus import bisect_row
    from gym_corpus_sixteenth import materialize

    return bisect_row(BUGS, materialize, bug_id, op_root, tmp_path, golden_cache)


@pytest.mark.slow
@pytest.mark.parametrize("bug_id", NAMED)
def test_sixteenth_gym_bug_is_named_at_its_line(op_root: Path, tmp_path: Path, bug_id: str,
                                                golden_cache: dict) -> None:
    from gym_corpus import assert_named_at_line

    assert_named_at_line(bug_id, *_bisect_row(bug_id, op_root, tmp_path, golden_cache))
