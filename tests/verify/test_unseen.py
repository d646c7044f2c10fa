"""Unseen cases (issue #24 item 4): drawn per run, bounded, and they catch what the SPEC's shapes cannot."""

from __future__ import annotations

from pathlib import Path

import pytest
from verify_helpers import KERNELS, make_op, settings

from runtime.opdir import TAIL_MULTIPLE, load_op_dir
from runtime.opdir._inputs import FAMILY_KINDS, INIT_KINDS, VECTOR_KINDS
from runtime.opdir._memory import case_bytes
from runtime.opdir._unseen import (
    CASE_BYTES_CAP,
    DECODE_NEAR_CALLS,
    FILL_FACTOR,
    MAX_END_CASES,
    MAX_FAMILY_CASES,
    MAX_UNSEEN,
    TOTAL_BYTES_FLOOR,
    call_plan,
    total_cap,
    unseen_cases,
    verification_seed,
)
from runtime.verify import verify

_SPEC_64_77 = ("  - {B: 32, D: 64}\n  - {B: 37, D: 64}     # 5-row tail for a 16-row tile\n",
               "  - {B: 64, D: 64}\n  - {B: 77, D: 64}\n")


def _op_64_77(tmp_path: Path, kernel: str) -> Path:
    op = make_op(tmp_path, "silu", {"silu_impl.py": (KERNELS / kernel).read_text()})
    spec = (op / "SPEC.md").read_text()
    assert _SPEC_64_77[0] in spec
    (op / "SPEC.md").write_text(spec.replace(*_SPEC_64_77))
    return op


@pytest.mark.parametrize("seed", [0, 1, 2, 12345, 2**62 + 7])
def test_tail_bug_is_exact_on_the_spec_and_rejected_on_an_unseen_case(tmp_path: Path, seed: int) -> None:
    op = _op_64_77(tmp_path, "tail_bug_plus3.py")
    report = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=seed)
    assert report.verdict == "FAIL_NUMERIC", (report.verdict, report.reasons[:3])
    spec_cases = [c for c in report.cases if not c.unseen]
    assert spec_cases and all(c.status == "pass" for c in spec_cases)  # 64 and 77 tile exactly
    failing = [c for c in report.cases if c.status != "pass"]
    assert failing and all(c.unseen for c in failing)
    assert all((c.dims["B"] + 3) // 16 < -(-c.dims["B"] // 16) for c in failing)  # exactly the dropped-tail sizes
    assert any(r.startswith(f"case {failing[0].name}:") for r in report.reasons)


def test_unseen_cases_are_drawn_per_seed_recorded_and_hidden_from_agents(tmp_path: Path) -> None:
    op = make_op(tmp_path, "silu")
    a = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=11)
    b = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=11)
    c = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=12)
    assert a.verdict == b.verdict == c.verdict == "PASS"
    assert a.report_hash == b.report_hash and a.unseen_seed == 11
    assert [x.name for x in a.cases] != [x.name for x in c.cases]  # another seed, other cases
    assert a.report_hash != c.report_hash
    view = a.sanitized()
    assert "unseen_seed" not in view and "11" not in str([x.get("seed") for x in view["cases"] if x["unseen"]])
    assert all("seed" not in x for x in view["cases"] if x["unseen"])
    assert all("seed" in x for x in view["cases"] if not x["unseen"])
    from runtime.opdir import _unseen

    assert _unseen._fresh_seed() != _unseen._fresh_seed()  # runtime.verify alone: a fresh seed per run


def test_generator_tails_bounds_and_pairs() -> None:
    op = load_op_dir(Path(__file__).parent / "fixtures" / "silu")
    spec_cases = op.cases()
    spec_sizes = {c.dims["B"] for c in spec_cases}
    largest = max(case_bytes(op.spec, c) for c in spec_cases)
    tails: set[int] = set()
    for seed in range(40):
        # (version 21) the sweep's one-call cases are asserted in tests/verify/test_unseen_v21_s44.py
        drawn = unseen_cases(op.spec, spec_cases, seed, 20)
        assert drawn == unseen_cases(op.spec, spec_cases, seed, 20)  # deterministic in the seed
        # (version 17) the value families' whole-vector cases come last, bounded apart
        unseen = [c for c in drawn if c.vector not in FAMILY_KINDS
                  and not set(c.whole.values()) & {*FAMILY_KINDS, *INIT_KINDS}]
        assert drawn[:len(unseen)] == unseen and len(drawn) - len(unseen) <= MAX_FAMILY_CASES
        assert 0 < len(unseen) <= MAX_UNSEEN
        assert all(c.unseen and c.name.startswith("unseen") and str(c.seed) not in c.name for c in unseen)
        assert not {c.seed for c in unseen} & {c.seed for c in spec_cases}
        new = [c for c in unseen if c.dims["B"] not in spec_sizes]
        assert any(c.dims["B"] <= TAIL_MULTIPLE // 2 for c in new)  # a small size
        assert any(c.dims["B"] % TAIL_MULTIPLE == TAIL_MULTIPLE - 1 for c in new)  # one less than a tile
        assert any(c.dims["B"] % TAIL_MULTIPLE == 1 for c in new)  # a tail of 1: catches every (n + c) // 16
        assert any(c.dims["B"] > max(spec_sizes) for c in new)  # larger than the SPEC's
        assert any(c.dims["B"] >= FILL_FACTOR // 2 * max(spec_sizes) for c in new)  # the fill size (attack A1)
        assert any(c.dims["B"] % TAIL_MULTIPLE == 0 for c in new)  # an aligned size off the SPEC (attack A1)
        for c in unseen:
            assert case_bytes(op.spec, c) <= min(CASE_BYTES_CAP, max(CASE_BYTES_CAP // 16, int(largest * 1.25)))
        groups: dict[tuple, set[int]] = {}
        for c in [*spec_cases, *unseen]:
            groups.setdefault((c.dims["B"], c.dtype), set()).add(c.seed)
        assert all(len(s) >= 2 for s in groups.values())  # every shape runs on two value sets at least
        tails |= {c.dims["B"] % TAIL_MULTIPLE for c in new}
    assert len(tails) == TAIL_MULTIPLE  # every tail occurs over 40 runs (attack A1: even tails were rare)


def test_call_plan_order_and_count_vary_with_the_seed() -> None:
    names = [f"c{i}" for i in range(8)]
    plans = {tuple(call_plan(names, s, repeats=2)) for s in range(20)}
    assert len(plans) > 10
    for plan in plans:
        assert sorted(set(plan)) == sorted(names) and len(plan) == len(names) + 2
        assert plan.count("c0") >= 2 and plan.index("c0") < len(plan) - 1


def test_every_dtype_gets_a_small_and_a_tail_one_size() -> None:
    """Held-out attack A1b: a bf16-only "latency path" wrong below 32 rows passed because each size class always
    got the same dtype (bf16 never saw a small size)."""
    op = load_op_dir(Path(__file__).parent / "fixtures" / "silu")
    spec = op.spec.model_copy(update={"supported_dtypes": ["fp32", "bf16"]})
    for seed in range(30):
        drawn = unseen_cases(spec, op.cases(), seed, 20)  # (version 21: its sweep in test_unseen_v21_s44.py)
        unseen = [c for c in drawn if not c.whole]  # (version 15) the one-row vector-kind cases: bounded apart
        assert len(unseen) <= MAX_UNSEEN
        assert len(drawn) - len(unseen) <= DECODE_NEAR_CALLS * 2 + len(VECTOR_KINDS) - 1 + MAX_END_CASES
        for dtype in ("fp32", "bf16"):
            sizes = {c.dims["B"] for c in unseen if c.dtype == dtype}
            assert any(b <= TAIL_MULTIPLE // 2 for b in sizes), (seed, dtype, sizes)
            assert any(b % TAIL_MULTIPLE == 1 for b in sizes), (seed, dtype, sizes)


def test_each_verified_file_gets_its_own_unseen_cases_under_one_run_seed(tmp_path: Path) -> None:
    """Held-out attack A10: with one seed per pipeline run, a kernel written after a failing report could
    special-case the unseen shapes that report listed. The seed is the run's seed x the verified file's bytes."""
    op = make_op(tmp_path, "silu")
    a = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=11)
    (op / "silu_impl.py").write_text((op / "silu_impl.py").read_text() + "\n# another attempt\n")
    b = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=11)
    assert a.verdict == b.verdict == "PASS" and a.unseen_seed == b.unseen_seed == 11
    assert [c.dims for c in a.cases if c.unseen] != [c.dims for c in b.cases if c.unseen]
    assert verification_seed(11, b"x") == verification_seed(11, b"x") != verification_seed(11, b"y")


def test_a_several_gb_spec_case_runs_once_and_unseen_cases_stay_under_the_cap() -> None:
    """The bound logic behind bench/verify_scale.py (a 2 GiB SPEC case): unseen cases never exceed the cap, the
    big SPEC shape gets no fresh-seed rerun and the call plan never repeats it (it runs exactly once)."""
    from runtime.opdir._unseen import case_cap

    op = load_op_dir(Path(__file__).parent / "fixtures" / "silu")
    spec = op.spec.model_copy(update={"p0_shapes": [{"B": 1 << 22, "D": 64}]})  # 2 GiB of input + output
    spec_cases = [c.model_copy(update={"dims": {"B": 1 << 22, "D": 64}}) for c in op.cases()[:1]]
    assert case_bytes(spec, spec_cases[0]) == 2 << 30
    cap = case_cap(spec, spec_cases)
    assert cap == CASE_BYTES_CAP
    for seed in range(10):
        unseen = unseen_cases(spec, spec_cases, seed)
        assert unseen and all(case_bytes(spec, c) <= cap for c in unseen)
        assert not [c for c in unseen if c.dims["B"] == 1 << 22]
        names = [c.name for c in [*spec_cases, *unseen]]
        plan = call_plan(names, seed, repeats=2, repeatable=[c.name for c in unseen])
        assert plan.count(spec_cases[0].name) == 1
        # all unseen cases together stay within a quarter of the big case (the verifier holds every case at once)
        assert sum(case_bytes(spec, c) for c in unseen) <= max(TOTAL_BYTES_FLOOR, (2 << 30) // 4)
        assert any(c.dims["B"] % 16 == 1 for c in unseen) and any(c.dims["B"] < 16 for c in unseen)
    # a mid-size op (one 200 MiB case): 20 unseen cases of 64 MiB would have been 1.25 GiB; now 256 MiB at most
    # (drawing version 9: 512 MiB, for the classes it runs in every dtype)
    mid = spec.model_copy(update={"p0_shapes": [{"B": 400_000, "D": 64}]})
    mid_cases = [c.model_copy(update={"dims": {"B": 400_000, "D": 64}}) for c in op.cases()[:1]]
    for seed in range(10):
        unseen = unseen_cases(mid, mid_cases, seed)
        assert unseen and sum(case_bytes(mid, c) for c in unseen) <= 2 * TOTAL_BYTES_FLOOR == total_cap(mid, mid_cases)
        assert sum(case_bytes(mid, c) for c in unseen_cases(mid, mid_cases, seed, version=8)) <= TOTAL_BYTES_FLOOR
