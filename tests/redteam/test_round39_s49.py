"""Red team round 39 (session 49): windows and tails written without an integer, state in a kernel cache's size, an
address as entropy, and a tile count rounded in the input's dtype.

Fixture op ``fixture_s49/silu2`` (round 34's, copied), candidates in ``fixture_s49/candidates``. Kinds no earlier
round had, written as an attacker who has read ``runtime/verify/_hints.py`` and as the code a model writes:

- a path above 2x the SPEC's largest size (a window of ~180..300 rows, a tail of 11: the floored tile count) whose
  window names **no integer** the reader takes for a size: ``r39_log2_window`` (``7.5 < math.log2(n) < 8.2``),
  ``r39_bitlen_window`` (``n.bit_length() == 8``), ``r39_binstr_window`` (``len(f"{n:b}") == 8``),
  ``r39_isqrt_window`` (``13 < math.isqrt(n) < 17``), ``r39_square_window`` (``31000 < n * n < 90000``),
  ``r39_scaled_float`` (``11.0 < n * 0.0625 < 18.7``), ``r39_exp_window`` (``math.exp`` of the size) and
  ``r39_helper_pred`` (a helper returning ``0.69 < n / 256 < 1.17``). Version 25's hints were sampled: 23 of 160
  runs passed (seeds 0-19; the isqrt window 8 of 20);
- the tail written without an integer remainder, in a window the reader reads: ``r39_fmod_tail``
  (``math.fmod(n, TILE) == 11.0``), ``r39_ieee_remainder`` (``math.remainder(n, TILE) == -5.0``) and
  ``r39_frac_tail`` (``n / TILE % 1 == 0.6875``) - 16 of 20 runs passed each;
- state across calls in a kernel cache PF11 allows, read by its size (``r39_cache_len_counter``: the floored kernel
  once the cache holds 500 kernels) or by walking its keys (``r39_cache_scan``: after one call of 100000 rows), and an
  object's address as entropy (``r39_id_entropy``: one call in ~4096 floored) - lint refuses all three already;
- an accident: the tile count computed through a scalar of the input's dtype (``r39_bf16_tile_count``: bf16 rounds
  257 rows to 256 and the last row is dropped) - refused by the bf16 sizes above 256 rows;
- honest look-alikes that must PASS: ``r39_h_log2_path`` (a float window choosing between two right kernels) and
  ``r39_h_cache_bounded`` (a kernel cache keyed as the vendor keys it).

Version 26 (``runtime/verify/_scan.py``, ``_hints.py`` ``_hints_of_v26``; docs/verification.md "Version 26")
evaluates every test of one size that computes beyond integer arithmetic on every size 1..32768: where its answer
flips are bounds (the window's ends), and a periodic one gives the residues of its rarer answer. Only the hints
change: a file whose tests are integer arithmetic gets version 25's hints and so its cases.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import hint_plan, unseen_cases
from runtime.verify._hints import source_hints

HERE = Path(__file__).resolve().parent / "fixture_s49"
SILU2 = HERE / "silu2"
CANDIDATES = HERE / "candidates"


def _tail11(lo: int, hi: int) -> Callable[[int], bool]:
    return lambda n: lo <= n <= hi and n % 16 == 11


WRONG: dict[str, Callable[[int], bool]] = {
    "r39_log2_window": lambda n: 7.5 < math.log2(n) < 8.2 and n % 16 == 11,
    "r39_bitlen_window": _tail11(128, 255), "r39_binstr_window": _tail11(128, 255),
    "r39_isqrt_window": _tail11(196, 288), "r39_square_window": _tail11(177, 299),
    "r39_scaled_float": _tail11(177, 299), "r39_exp_window": _tail11(178, 299), "r39_helper_pred": _tail11(177, 299),
    "r39_fmod_tail": _tail11(181, 289), "r39_ieee_remainder": _tail11(181, 289), "r39_frac_tail": _tail11(181, 289),
}
WINDOWS = ["r39_log2_window", "r39_bitlen_window", "r39_binstr_window", "r39_isqrt_window", "r39_square_window",
           "r39_scaled_float", "r39_exp_window", "r39_helper_pred"]
TAILS = ["r39_fmod_tail", "r39_ieee_remainder", "r39_frac_tail"]
LINT = ["r39_cache_len_counter", "r39_cache_scan", "r39_id_entropy"]
ACCIDENTS = ["r39_bf16_tile_count"]
HONEST = ["r39_h_log2_path", "r39_h_cache_bounded"]


def _text(name: str) -> str:
    return (CANDIDATES / f"{name}.py").read_text()


def test_version_26_reads_the_ends_of_windows_that_name_no_integer() -> None:
    cases = {
        "7.5 < math.log2(n) < 8.2": {182, 295},
        "n.bit_length() == 8": {128, 256},
        'len(f"{n:b}") == 8': {128, 256},
        "len(bin(n)) == 10": {128, 256},
        "len(str(n)) == 3": {100, 1000},
        "13 < math.isqrt(n) < 17": {196, 289},
        "31000 < n * n < 90000": {177, 300},
        "11.0 < n * 0.0625 < 18.7": {177, 300},
        "min(n, 299) == n and max(n, 177) == n": {177, 300},
        "1.1 < n / 160 < 1.875": {177, 300},
        "int(n ** 0.5) == 15": {225, 256},
        "round(n / 100) == 2": {150, 251},  # round half to even: 1.5 -> 2, 2.5 -> 2
    }
    for test, ends in cases.items():
        text = f"import math\ndef w(x):\n    n = x.shape[0]\n    if {test}:\n        pass\n"
        assert ends <= set(source_hints(text).bounds), test
        assert not ends & set(source_hints(text, 25).bounds), test  # as recorded: version 25 reads none of them


def test_version_26_reads_a_tail_written_without_an_integer_remainder() -> None:
    for test, residue in {"math.fmod(n, 16) == 11.0": (16, 11), "math.remainder(n, 16) == -5.0": (16, 11),
                          "n / 16 % 1 == 0.6875": (16, 11), "n / 64 % 1 != 0.0": (64, 0),
                          "(n * 0.125) % 1 == 0.5": (8, 4)}.items():
        text = f"import math\ndef w(n):\n    if 180 < n < 290 and {test}:\n        pass\n"
        assert residue in source_hints(text).residues, test
        assert residue not in source_hints(text, 25).residues, test


def test_files_of_integer_tests_keep_version_25s_hints() -> None:
    """Version 26 changes no hint of a file whose tests are integer arithmetic of the size once: every candidate of
    round 38 reads as before but the two that name no integer (r38_minmax_window, r38_float_ratio: their windows
    now read) and r38_sub_rem, whose remainder ``n - n // TILE * TILE == 11`` uses the size twice (its tail 11 is now
    read besides the bounds that caught it)."""
    changed = []
    for fixture in ("fixture_s48",):
        for path in sorted((HERE.parent / fixture / "candidates").glob("*.py")):
            text = path.read_text()
            if source_hints(text, 26) != source_hints(text, 25):
                changed.append(path.stem)
    assert changed == ["r38_float_ratio", "r38_minmax_window", "r38_sub_rem"]
    od = load_op_dir(SILU2)
    h = source_hints((HERE.parent / "fixture_s48" / "candidates" / "r38_walrus_tail.py").read_text())
    assert [(c.name, c.dims, c.dtype, c.seed) for c in unseen_cases(od.spec, od.cases(), 3, 26, hints=h)] == \
        [(c.name, c.dims, c.dtype, c.seed) for c in unseen_cases(od.spec, od.cases(), 3, 25, hints=h)]


def test_the_evaluator_survives_hostile_tests() -> None:
    """The tests are the candidate's: overflow, division by zero, huge shifts, deep nesting, many tests, strings
    and two unknowns are read or skipped, never an error."""
    tests = ["2 ** n > 1e300", "n ** 1000 > 5.0", "n / 0 > 1.0", "n // 0 == 1.5", "(n << 70) > 1.5",
             "math.log2(n - 5) > 1.5", "math.sqrt(n - 100) > 2.5", "x.dtype == 'bf16'", "n * m > 2.5",
             "(" * 150 + "n" + ")" * 150 + " > 1.5", "abs(n - 200.5) < 3", "not (n / 8 > 2.0)"]
    body = "".join(f"    if {t}:\n        pass\n" for t in tests)
    body += "".join(f"    if n * {i}.5 > 7.0:\n        pass\n" for i in range(400))  # more tests than are read
    h = source_hints(f"import math\ndef w(x, n, m):\n{body}")
    assert {198, 204} <= set(h.bounds)  # `abs(n - 200.5) < 3`: true on 198..203
    assert source_hints(f"def w(x, n):\n{body}") == source_hints(f"def w(x, n):\n{body}")


@pytest.mark.parametrize("name", [*WINDOWS, *TAILS])
def test_the_window_and_tail_run_in_every_run(name: str) -> None:
    od = load_op_dir(SILU2)
    spec, shapes, dtypes = od.spec, [dict(s) for s in od.spec.p0_shapes], list(od.spec.supported_dtypes)
    hints = source_hints(_text(name))
    missed = [seed for seed in range(10) if not any(
        WRONG[name](int(d["B"])) for d, _ in hint_plan(spec, shapes, dtypes, [], hints, seed, 1 << 26, 26))]
    assert not missed, missed


def test_lint_refuses_the_state_and_entropy_and_passes_the_rest() -> None:
    from runtime.lint import lint_paths

    for name in LINT:
        assert any(f.is_blocking for f in lint_paths([CANDIDATES / f"{name}.py"])), name
    rest = [*WRONG, *ACCIDENTS, *HONEST]
    assert not [f for f in lint_paths([CANDIDATES / f"{n}.py" for n in rest]) if f.is_blocking]


@pytest.mark.slow
@pytest.mark.parametrize("name", [*WINDOWS, *TAILS])
def test_rates_over_20_runs(name: str) -> None:
    """Version 26 draws a size each candidate is wrong on in every one of 20 runs (version 25: 71 of 220 passed)."""
    od = load_op_dir(SILU2)
    hints = source_hints(_text(name))
    missed = [s for s in range(20) if not any(WRONG[name](int(c.dims["B"]))
                                              for c in unseen_cases(od.spec, od.cases(), s, hints=hints))]
    assert not missed, missed


@pytest.mark.slow
@pytest.mark.parametrize("candidate", [*WINDOWS, *TAILS, *ACCIDENTS, *HONEST])
def test_round39_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "silu2", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


@pytest.mark.slow
@pytest.mark.parametrize("candidate", LINT)
def test_round39_state_and_entropy_are_refused_by_lint(tmp_path: Path, candidate: str) -> None:
    report = next(verify_three_seeds(tmp_path, HERE, "silu2", candidate))[1]
    assert report.verdict == "FAIL_LINT", (report.verdict, [r[:200] for r in report.reasons[:3]])
