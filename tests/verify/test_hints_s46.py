"""The sizes a kernel file names itself (``runtime.verify._hints``) and version 23's ``hint_plan`` (red team round 36).

Round 35's ``r35_mid_tail11`` (``if 77 < n < 160 and n % TILE == 11``) passed 85% of version 22's runs, round 36's
accidental ``(n + 60) // 64`` prefill path 49%: a run samples a few tails per window of sizes. The file names its
window, its residue and its block; version 23 runs sizes at them. Here, without running a kernel: what is read from
the text, that the sizes each hostile file is wrong on are drawn in every one of 30 runs with its hints, and that an
honest ceiling-division tiling adds no case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import MAX_HINT_PER_DTYPE_AXIS, hint_plan, unseen_cases
from runtime.verify._hints import SizeHints, source_hints

ROOT = Path(__file__).resolve().parents[2]
RED = ROOT / "tests" / "redteam"
SILU2 = RED / "fixture_s46" / "silu2"


def test_hints_read_bounds_residues_and_block_edges_but_not_ceilings() -> None:
    text = """
TILE = 16
BLK = 4 * TILE
def f(x, n):
    a = (n + TILE - 1) // TILE          # a ceiling: nothing
    b = n // TILE                       # a floor: nothing
    c = (n + 60) // BLK                 # short for n % 64 in 1..3: residues 3 and 4 of 64
    if 77 < n < 160 and n % TILE == 11:
        pass
    if n % 32 in (2, 4, 6) or not n % 128:
        pass
"""
    h = source_hints(text, 23)  # version 23's reader (version 24's: tests/redteam/test_round37_s47.py)
    assert {77, 160, 11, 2, 4, 6}.issubset(h.bounds)
    assert {16, 64, 32, 128}.issubset(h.moduli)
    assert {(64, 3), (64, 4), (16, 11), (32, 2), (32, 4), (32, 6), (128, 0), (128, 1)}.issubset(h.residues)
    assert not {(16, 0), (16, 1), (16, 15)} & set(h.residues)
    assert source_hints("def f(:") == SizeHints() and not SizeHints()


def test_an_honest_ceiling_tiling_adds_no_case() -> None:
    od = load_op_dir(SILU2)
    hints = source_hints((RED / "fixture_s45" / "candidates" / "s2_honest.py").read_text())
    assert hints.moduli == (16,) and not hints.bounds and not hints.residues
    assert hint_plan(od.spec, [dict(s) for s in od.spec.p0_shapes], list(od.spec.supported_dtypes), [], hints, 0,
                     1 << 26) == []
    assert unseen_cases(od.spec, od.cases(), 3, hints=hints) == unseen_cases(od.spec, od.cases(), 3)


@pytest.mark.parametrize(("fixture", "name", "wrong"), [
    ("fixture_s45", "r35_mid_tail11", lambda n, d: 77 < n < 160 and n % 16 == 11),             # version 22: 85%
    ("fixture_s45", "r35_fp32_tail_pairs", lambda n, d: d == "fp32" and n % 32 in (2, 4, 6)),  # 15.5%
    ("fixture_s46", "r36_fp32_blk128_tail", lambda n, d: d == "fp32" and 97 <= n % 128 <= 111),  # 38.5%
    ("fixture_s46", "r36_pair_odd_tile", lambda n, d: ((n + 15) // 16) % 2 == 1 and n % 16 in (4, 5)),  # 14.5%
])
def test_every_run_with_the_files_hints_draws_a_size_it_is_wrong_on(fixture: str, name: str, wrong) -> None:
    od = load_op_dir(SILU2)
    hints = source_hints((RED / fixture / "candidates" / f"{name}.py").read_text())
    shapes = [dict(s) for s in od.spec.p0_shapes]
    dtypes = list(od.spec.supported_dtypes)
    missed = [seed for seed in range(30) if not any(
        wrong(int(d["B"]), t) for d, t in hint_plan(od.spec, shapes, dtypes, [], hints, seed, 1 << 26))]
    assert not missed, missed
    plan = hint_plan(od.spec, shapes, dtypes, [], hints, 0, 1 << 26)
    assert 0 < len(plan) <= MAX_HINT_PER_DTYPE_AXIS * len(dtypes)
    assert all(d not in shapes for d, _ in plan)


def test_hint_cases_come_after_version_22s_and_keep_its_draws() -> None:
    od = load_op_dir(SILU2)
    hints = source_hints((RED / "fixture_s45" / "candidates" / "r35_mid_tail11.py").read_text())
    for seed in (0, 11):
        old = unseen_cases(od.spec, od.cases(), seed, 22, hints=hints)  # version 22 reads no hints
        assert old == unseen_cases(od.spec, od.cases(), seed, 22)
        new = unseen_cases(od.spec, od.cases(), seed, 23, hints=hints)
        assert [(c.name, c.dims, c.dtype, c.seed) for c in new[:len(old)]] == \
            [(c.name, c.dims, c.dtype, c.seed) for c in old]
        assert len({c.seed for c in new}) == len(new)


def test_a_file_built_to_break_the_reader_gets_no_hints_not_an_error() -> None:
    """A chain of 1,500 ``+`` parses, and the recursive fold over it raised RecursionError out of verification
    (review, s46): the candidate's file must never be able to crash its own verification's reader."""
    for k in (1500, 2900, 20000):
        src = "N = " + "+".join(["1"] * k) + "\nif n < N:\n    pass\n"
        assert source_hints(src) == SizeHints()
    assert source_hints("N = " + "+".join(["1"] * 900) + "\nif n < N:\n    pass\n").bounds == (900,)
