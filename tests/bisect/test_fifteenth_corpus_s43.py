"""The fifteenth gym corpus (``gym_corpus_fifteenth``, session 43): one small row per open item of the fourteenth
corpus, bisected on the real operator (slow tier), plus the rules on our own small kernel (``fifteenth_data/alias``)
and on kernel sources (fast tier).

Scored with this file's rows (hit = the named culprit, or its call site, is on the bugged statement). Before the s43
change: 0 hit of 3 (the axis row not localized; the alias row a miss at the ``sum`` on line 53, the line before; the
pad row named at the kernel's view that ran past the short buffer). After: 3 hit - ``_rules.wrong_axis`` through a
scalar factor, ``_claims.bare_alias``, ``_rules.static_wrapper_pad_source``. On the fourteenth corpus
``f14_lstm_rms_axis`` is now named at line 60 (14 of 16 where 13 were).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from gym_corpus_fifteenth import BUGS
from planting import plant

from runtime.bisect import bisect
from runtime.bisect._claims import _bare_aliases
from runtime.bisect._rules import static_wrapper_pad_source

DATA = Path(__file__).parent / "fifteenth_data"


def first_case(op_dir: Path) -> str:
    """One case (the first in bisect's order): what these tests check needs no other (fast tier)."""
    from runtime.bisect.api import order_cases
    from runtime.opdir import load_op_dir

    return order_cases(load_op_dir(op_dir).cases())[0].name


NAMED: list[str] = ["f15_lstm_rms_axis_neg2", "f15_rms_mean_alias", "f15_as_wrapper_pad16"]
OPEN: dict[str, str] = {}


def test_every_row_is_accounted_for() -> None:
    assert sorted(b.id for b in BUGS) == sorted([*NAMED, *OPEN])


def test_our_alias_kernel_is_named_nothing(golden_cache: dict) -> None:
    rep = bisect(DATA / "alias", "alias_impl.py", golden_cache=golden_cache, case=first_case(DATA / "alias"))
    assert rep.status == "NO_DIVERGENCE", rep.summary


def test_a_bare_alias_skipping_a_step_is_named_not_its_reader(tmp_path: Path, golden_cache: dict) -> None:
    # ``ms = sq`` binds the value golden 'sq' holds where golden 'ms' is half of it: before s43 the add reading
    # ``ms`` was named (its operands "match"); now the alias line
    op_dir, line = plant(DATA, tmp_path, "alias", "ms = pypto.mul(sq, 0.5)", "ms = sq")
    rep = bisect(op_dir, "alias_impl.py", golden_cache=golden_cache, case=first_case(op_dir))
    f = rep.first_divergence
    assert rep.status == "DIVERGENCE_FOUND" and f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("no op runs on line" in e for e in rep.evidence), rep.evidence


def test_an_alias_of_the_right_value_is_not_named(tmp_path: Path, golden_cache: dict) -> None:
    # ``m2 = ms`` of the right value, then a wrong constant in the op reading it: the op stays named
    op_dir, line = plant(DATA, tmp_path, "alias", "y_t = pypto.add(ms, 1.0)",
                         "m2 = ms\n        y_t = pypto.add(m2, 2.0)", key="2.0")
    rep = bisect(op_dir, "alias_impl.py", golden_cache=golden_cache, case=first_case(op_dir))
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)


def test_bare_aliases_are_read_in_the_function_holding_the_line() -> None:
    src = textwrap.dedent('''\
        def helper(x):
            s = pypto.sum(x, 1)
            mean_sq = s
            return mean_sq

        def other(y):
            z = y
            return z
        ''')
    assert _bare_aliases(src, 2) == [(3, "mean_sq", "s")]
    assert _bare_aliases(src, 8) == [(7, "z", "y")]
    assert _bare_aliases("def f(a):\n    return a.b\n", 2) == []


WRAPPED = textwrap.dedent('''\
    import pypto
    import torch

    S_TILE = 64


    @pypto.frontend.jit
    def kern(scores, out, n_tiles: int):
        for t in range(n_tiles):
            row = pypto.view(scores, [1, S_TILE], [0, t * S_TILE])
            pypto.assemble(row, [0, t * S_TILE], out)


    def wrapper(scores):
        M, S = scores.shape
        n_tiles = (S + S_TILE - 1) // S_TILE
        padded_S = (S + 15) // 16 * 16
        if padded_S > S:
            padded = torch.cat([scores, torch.zeros(M, padded_S - S)], dim=1)
        else:
            padded = scores
        out = torch.empty(M, padded_S)
        kern(padded, out, n_tiles)
        return out[:, :S]
    ''')
OVERRUN = ("view of 'scores': window [0, 64) on axis 1 runs past the tensor extent 16; pass valid_shape= for the "
           "tail")


def test_a_wrapper_padding_to_a_smaller_multiple_than_the_tile_is_named() -> None:
    got = static_wrapper_pad_source(WRAPPED, 10, OVERRUN)
    assert got is not None and got[0] == 17 and "rounding by 16" in got[1], got


def test_no_wrapper_pad_claim_without_the_evidence() -> None:
    # padding to the kernel's tile: the rounding by S_TILE is no short pad (the overrun comes from elsewhere)
    right = WRAPPED.replace("(S + 15) // 16 * 16", "n_tiles * S_TILE")
    assert static_wrapper_pad_source(right, 10, OVERRUN) is None
    # an extent that is a multiple of the tile, another tensor, another error: nothing to say
    assert static_wrapper_pad_source(WRAPPED, 10, OVERRUN.replace("extent 16", "extent 128")) is None
    # (an extent of whole tiles with the window off the grid - stacked rows of a short size - still shows it)
    stacked = OVERRUN.replace("[0, 64)", "[16, 80)").replace("extent 16", "extent 64")
    assert (static_wrapper_pad_source(WRAPPED, 10, stacked) or (0, ""))[0] == 17
    assert static_wrapper_pad_source(WRAPPED, 10, OVERRUN.replace("'scores'", "'out'")) is None
    assert static_wrapper_pad_source(WRAPPED, 10, "view of 'scores': offset 64 on axis 1 is outside the tensor "
                                                  "extent 64") is None
    # two statements rounding by a short constant: which one is short is not known, no claim
    two = WRAPPED.replace("out = torch.empty(M, padded_S)", "padded = padded[:, : (S + 7) // 8 * 8]\n"
                          "    out = torch.empty(M, padded_S)")
    assert static_wrapper_pad_source(two, 10, OVERRUN) is None


def _bisect_row(bug_id: str, op_root: Path, tmp_path: Path, golden_cache: dict):  # noqa: ANN202 - (report, span)
    from gym_corpus import bisect_row
    from gym_corpus_fifteenth import materialize

    return bisect_row(BUGS, materialize, bug_id, op_root, tmp_path, golden_cache)


@pytest.mark.slow
@pytest.mark.parametrize("bug_id", NAMED)
def test_fifteenth_gym_bug_is_named_at_its_line(op_root: Path, tmp_path: Path, bug_id: str,
                                                golden_cache: dict) -> None:
    from gym_corpus import assert_named_at_line

    assert_named_at_line(bug_id, *_bisect_row(bug_id, op_root, tmp_path, golden_cache))


