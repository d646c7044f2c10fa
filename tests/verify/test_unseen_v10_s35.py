"""Unseen drawing version 10 (red team s35): what the author of a kernel can see is not all verify runs.

- every input at the top of its range, one sign, on the largest SPEC shape in every dtype (``TOP_BAND``): an int8
  GEMM through the fp16 cube is exact while a partial sum stays under 2**24, and independent random operands never
  get there;
- the SPEC's float attributes that the wrapper and the golden both take, at other values (``attribute_cases``): a
  softcap kernel that multiplies by the SPEC's cap instead of the caller's passed every verification.

The candidates run through verify on three seeds in ``tests/redteam/test_round16_s35.py`` (slow tier)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runtime.opdir import load_op_dir
from runtime.opdir._cases import Case
from runtime.opdir._inputs import TOP_BAND, TOP_SPLIT_BAND, generate_input
from runtime.opdir._unseen import ATTR_FACTORS, attribute_cases, unseen_cases, varied_attributes
from runtime.verify._calling import call_wrapper
from runtime.verify._engine import _golden_keywords

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "redteam" / "fixture_s35"
SEEDS = (0, 1, 7, 11, 12345)


@pytest.mark.parametrize("op", ["silu", "rms_norm", "layer_norm"])
def test_version_10_draws_version_9_then_the_top_of_the_range_in_every_dtype(op: str) -> None:
    o = load_op_dir(ROOT / "workspace" / op)
    cases = o.cases()
    for seed in SEEDS:
        v9 = unseen_cases(o.spec, cases, seed, version=9)
        v10 = unseen_cases(o.spec, cases, seed, version=10)
        assert [c.model_dump() for c in v10[:len(v9)]] == [c.model_dump() for c in v9]
        top = v10[len(v9):]
        assert [c.dtype for c in top] == [d for d in o.spec.supported_dtypes for _ in range(2)]
        assert [c.band for c in top] == [TOP_BAND, TOP_SPLIT_BAND] * len(o.spec.supported_dtypes)
        assert not any(c.special for c in top)


def test_the_int8_gemm_gets_operands_whose_dot_products_pass_two_to_the_24() -> None:
    o = load_op_dir(FIXTURE / "int8_gemm")
    top = [c for c in unseen_cases(o.spec, o.cases(), 3) if c.band in (TOP_BAND, TOP_SPLIT_BAND)]
    assert [c.band for c in top] == [TOP_BAND, TOP_SPLIT_BAND]
    a, b = (generate_input(t, top[0], i) for i, t in enumerate(o.spec.inputs))
    assert a.min() >= 127 - 254 // 8 and b.min() >= 127 - 254 // 8
    assert (a.astype(np.int64) @ b.astype(np.int64)).min() > 2**24
    # the split: a's K axis climbs for 2048 terms, then cancels (red team s35b: a guard on the final value passed)
    a, b = (generate_input(t, top[1], i).astype(np.int64) for i, t in enumerate(o.spec.inputs))
    half = a.shape[1] // 2
    assert (a[:, :half] > 0).all() and (a[:, half:] < 0).all() and (b > 0).all()
    partial = a[:, :half] @ b[:half]
    assert partial.min() > 2**24 and np.abs(a @ b).max() < partial.min()
    # the SPEC's own cases stay far below it: what an fp32 accumulation gets right
    c0 = o.cases()[0]
    a, b = (generate_input(t, c0, i) for i, t in enumerate(o.spec.inputs))
    assert np.abs(a.astype(np.int64) @ b.astype(np.int64)).max() < 2**24


@pytest.mark.parametrize("band", [TOP_BAND, TOP_SPLIT_BAND])
def test_float_inputs_of_a_top_case_take_the_large_band(band: str) -> None:
    """An honest fp16 kernel is judged by a tolerance: the gym's sum_lstm (fp16 LSTM gates) left it on a few elements
    with every input at the end of its imported range. The top bands are for integer results, which must be exact."""
    o = load_op_dir(ROOT / "workspace" / "silu")  # x in [-8, 8]
    case = Case(name="t", dims={"B": 64, "D": 256}, dtype="fp32", seed=5, band=band)
    x = generate_input(o.spec.inputs[0], case, 0)
    want = generate_input(o.spec.inputs[0], case.model_copy(update={"band": "large"}), 0)
    np.testing.assert_array_equal(x, want)


def test_varied_attributes_are_floats_both_sides_take() -> None:
    o = load_op_dir(FIXTURE / "softcap")
    assert _golden_keywords(o) == ["cap"]
    assert varied_attributes(o.spec, ["cap"], ["cap"]) == ["cap"]
    assert varied_attributes(o.spec, ["cap"], []) == []  # the golden builds it in: the SPEC fixes it
    assert varied_attributes(o.spec, [], ["cap"]) == []  # the wrapper does not take it: the kernel may build it in
    spec = o.spec.model_copy(update={"attrs": {"cap": 30, "k": 4.0, "flag": True, "z": 0.0}})
    assert varied_attributes(spec, ["cap", "flag", "z", "k"], ["cap", "flag", "z", "k"], version=10) == ["k"]  # int/bool/0
    assert varied_attributes(spec, ["cap", "flag", "z", "k"], ["cap", "flag", "z", "k"], version=11) == ["k"]


def test_attribute_cases_pass_other_values_in_pairs_and_say_them() -> None:
    o = load_op_dir(FIXTURE / "softcap")
    cases = o.cases()
    assert attribute_cases(o.spec, cases, ["cap"], 5, 30, version=9) == []
    values = set()
    for seed in SEEDS:
        extra = attribute_cases(o.spec, cases, ["cap"], seed, 30, version=10)
        assert [c.dtype for c in extra] == ["fp32", "fp32", "bf16", "bf16"]
        assert [c.special for c in extra] == [False, True, False, True]
        low, high = extra[0].attrs["cap"], extra[1].attrs["cap"]
        assert [c.attrs for c in extra] == [{"cap": low}, {"cap": high}] * 2 and all(c.unseen for c in extra)
        # one value below the SPEC's and one above (red team s35b: `min(cap, 30.0)` passed every value below)
        assert ATTR_FACTORS[0][0] * 30.0 * 0.99 <= low <= ATTR_FACTORS[0][1] * 30.0 * 1.01
        assert ATTR_FACTORS[1][0] * 30.0 * 0.99 <= high <= ATTR_FACTORS[1][1] * 30.0 * 1.01
        assert extra[0].name == f"unseen30-B64_V256-fp32-cap{low:g}"
        assert extra[1].name == f"unseen31-B64_V256-fp32-cap{high:g}"
        cap = low
        assert len({c.seed for c in extra} - {c.seed for c in cases}) == len(extra)
        values.add(cap)
    assert len(values) >= 3  # drawn per verification


def test_a_call_of_an_attribute_case_passes_its_values() -> None:
    seen = []

    def wrapper(x, cap=None):
        seen.append(cap)
        return x

    x = np.zeros(2, np.float32)
    calling = {"kwargs": {"cap": 30.0}, "attrs": [{}, {"cap": 18.5}]}
    call_wrapper(wrapper, [x], calling, 0)
    call_wrapper(wrapper, [x], calling, 1)
    call_wrapper(wrapper, [x], {"kwargs": {"cap": 30.0}}, 1)  # no per-call entries: the SPEC's value
    assert seen == [30.0, 18.5, 30.0]



def test_intake_says_when_a_value_attribute_is_written_as_an_int(tmp_path: Path) -> None:
    """Red team s35b: ``cap: 30`` is a YAML int, never varied - a kernel with 30.0 built in passed every verification.
    Intake says so when golden() scales by it; a count used as an index (a top-k's ``k``) gets no note."""
    from runtime.opdir import intake

    op = tmp_path / "softcap"
    op.mkdir()
    (op / "golden.py").write_text((FIXTURE / "softcap" / "golden.py").read_text())
    (op / "SPEC.md").write_text((FIXTURE / "softcap" / "SPEC.md").read_text().replace("cap: 30.0", "cap: 30"))
    assert intake(op, run_golden=False).notes == [
        "attribute 'cap' is an int (30) that golden() multiplies or divides by: verification passes other whole "
        "numbers only - if it is a real value, write it as 30.0"]
    assert intake(FIXTURE / "softcap", run_golden=False).notes == []
    (op / "golden.py").write_text("import numpy as np\n\n\ndef golden(x, cap):\n    k = cap\n"
                                  "    return np.sort(x, axis=-1)[:, :cap] * 2 ** cap\n")
    assert intake(op, run_golden=False).notes == []
