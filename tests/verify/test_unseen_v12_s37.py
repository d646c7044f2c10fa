"""Unseen drawing version 12 (red team s37): peaked and ascending vectors in the special cases, one tensor passed for
two inputs, whole-number attributes passed as ints - and the wrapper call and lint rules that go with them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from runtime.lint import lint_source
from runtime.opdir import load_op_dir
from runtime.opdir._inputs import generate_inputs
from runtime.opdir._unseen import alias_groups, attribute_cases, unseen_cases, vary_unseen_attributes
from runtime.verify._calling import call_wrapper

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "redteam" / "fixture_s37"
SEEDS = (0, 1, 7, 11, 12345)


def test_version_12_adds_the_aliased_cases_and_peaks() -> None:
    o = load_op_dir(FIXTURE / "mul2")
    for seed in SEEDS:
        v11 = unseen_cases(o.spec, o.cases(), seed, version=11)
        v12 = unseen_cases(o.spec, o.cases(), seed, version=12)
        assert all(c.peaks == c.special for c in v12) and not any(c.peaks or c.alias for c in v11)
        aliased = [c for c in v12 if c.alias]
        assert sorted(c.dtype for c in aliased) == sorted(o.spec.supported_dtypes)
        assert all(c.alias == ["x", "r"] and c.name.endswith("-r_is_x") for c in aliased)
        # s37b: not only the first SPEC shape (a path for B != 64 passed)
        assert {c.dims["B"] for c in aliased} == {int(sh["B"]) for sh in o.spec.p0_shapes}


def test_an_aliased_case_gives_one_array_for_both_inputs() -> None:
    o = load_op_dir(FIXTURE / "mul2")
    c = next(c for c in unseen_cases(o.spec, o.cases(), 0) if c.alias)
    x, r = generate_inputs(o.spec, c)
    assert x is r


def test_alias_groups_need_the_same_shape_dtype_and_overlapping_ranges() -> None:
    o = load_op_dir(FIXTURE / "mul2")
    assert alias_groups(o.spec, "fp32") == [("x", "r")]
    x, r = o.spec.inputs
    unit = o.spec.model_copy(update={"inputs": [x, r.model_copy(update={"range": (0.0, 1.0)})]})
    assert alias_groups(unit, "fp32") == [("x", "r")]  # s37b: mulr(p, p), p in [0, 1]
    c = next(c for c in unseen_cases(unit, o.cases(), 0) if c.alias)
    a, b = generate_inputs(unit, c)
    assert a is b and a.min() >= 0.0 and a.max() <= 1.0
    apart = o.spec.model_copy(update={"inputs": [x, r.model_copy(update={"range": (2.0, 3.0)})]})
    assert alias_groups(apart, "fp32") == []
    three = o.spec.model_copy(update={"inputs": [x, r, r.model_copy(update={"name": "s"})]})
    assert alias_groups(three, "fp32") == [("x", "r"), ("x", "s"), ("r", "s"), ("x", "r", "s")]
    cases = [c for c in unseen_cases(three, o.cases(), 0) if c.alias]
    assert ["r", "s"] in [c.alias for c in cases] and ["x", "r", "s"] in [c.alias for c in cases]
    trio = next(c for c in cases if len(c.alias) == 3)
    a, b, s = generate_inputs(three, trio)
    assert a is b is s and trio.name.endswith("-r_s_is_x")
    assert alias_groups(load_op_dir(FIXTURE / "lsoftmax").spec, "fp32") == []


def test_the_wrapper_gets_one_object_for_both_inputs() -> None:
    seen: list[bool] = []

    def wrapper(x, r):
        seen.append(x is r)
        return x

    a, b = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    calling = {"alias": [[0, 1], []]}
    call_wrapper(wrapper, [a, b], calling, 0)
    call_wrapper(wrapper, [a, b], calling, 1)
    assert seen == [True, False]

    def three(x, r, s):
        seen.append(x is r is s)

    call_wrapper(three, [a, b, a.copy()], {"alias": [[0, 1, 2]]}, 0)
    assert seen[-1] is True


def test_a_torch_wrapper_gets_one_tensor_for_both_inputs_in_every_mode() -> None:
    pytest.importorskip("torch")
    seen: list[bool] = []

    def wrapper(x, r):
        seen.append(x is r)
        return x

    a, b = np.ones((2, 3), np.float32), np.ones((2, 3), np.float32)
    for mode in ("plain", "no_grad", "inference", "train", "forward"):
        call_wrapper(wrapper, [a, b], {"torch": True, "modes": [mode], "alias": [[0, 1]]}, 0)
    assert seen == [True] * 5


def test_special_cases_hold_a_late_peak_and_an_ascending_row() -> None:
    o = load_op_dir(FIXTURE / "lsoftmax")
    late = early = ascending = descending = 0
    for seed in SEEDS:
        for c in unseen_cases(o.spec, o.cases(), seed):
            if not c.special or c.columns:
                continue
            (x,) = generate_inputs(o.spec, c)
            half = x.shape[1] // 2
            late += int(np.sum(x[:, half:].max(axis=1) > x[:, :half].max(axis=1) + 16.0))
            early += int(np.sum(x[:, :half].max(axis=1) > x[:, half:].max(axis=1) + 16.0))
            ascending += int(np.sum(np.all(np.diff(x, axis=1) >= 0, axis=1)))
            descending += int(np.sum(np.all(np.diff(x, axis=1) <= 0, axis=1)))
    assert min(late, early, ascending, descending) >= 3, (late, early, ascending, descending)


def test_version_11_special_cases_have_no_peaks() -> None:
    o = load_op_dir(FIXTURE / "lsoftmax")
    for c in unseen_cases(o.spec, o.cases(), 0, version=11):
        if c.special and not c.columns:
            (x,) = generate_inputs(o.spec, c)
            half = x.shape[1] // 2
            assert not np.any(x[:, half:].max(axis=1) > x[:, :half].max(axis=1) + 16.0)


def test_a_whole_number_attribute_is_passed_as_another_int() -> None:
    o = load_op_dir(FIXTURE / "softcap")
    assert o.spec.attrs["cap"] == 30.0
    for seed in SEEDS:
        ints = {c.attrs["cap"] for c in attribute_cases(o.spec, o.cases(), ["cap"], seed, 30)
                if type(c.attrs["cap"]) is int}
        # s37b: the SPEC's own value, one below, one far above (a branch for ints >= 48 or <= 30 passed)
        assert 30 in ints and min(ints) < 30 and max(ints) >= 45, ints
        assert not [c for c in attribute_cases(o.spec, o.cases(), ["cap"], seed, 30, version=11)
                    if type(c.attrs["cap"]) is int]
        shaped = vary_unseen_attributes(o.spec, unseen_cases(o.spec, o.cases(), seed), ["cap"], seed)
        assert any(type(c.attrs.get("cap")) is int for c in shaped) or len([c for c in shaped if c.attrs]) < 4


def test_an_eps_is_never_passed_as_an_int() -> None:
    o = load_op_dir(ROOT / "tests" / "redteam" / "fixture_s36" / "rms_norm_s")
    for seed in SEEDS:
        assert all(type(c.attrs["eps"]) is float
                   for c in attribute_cases(o.spec, o.cases(), ["eps"], seed, 30))


SRC = (FIXTURE / "candidates" / "sc_pad_fpad.py").read_text(encoding="utf-8")


def _rules(text: str, rule: str, op: str = "softcap") -> list[str]:
    return [f.message for f in lint_source(text, f"{op}_impl.py", stage="final", op_dir=FIXTURE / op)
            if f.rule_id == rule]


def test_constant_padding_is_layout_and_other_modes_compute() -> None:
    assert "torch.nn.functional.pad(x.contiguous(), (0, 0, 0, pad))" in SRC
    assert _rules(SRC, "OL62") == []
    for mode in ('"constant"', "'constant'"):
        assert _rules(SRC.replace("(0, 0, 0, pad))", f"(0, 0, 0, pad), mode={mode})"), "OL62") == []
    assert _rules(SRC.replace("(0, 0, 0, pad))", '(0, 0, 0, pad), mode="reflect")'), "OL62")
    assert _rules(SRC.replace("(0, 0, 0, pad))", "(0, 0, 0, pad), mode=m)"), "OL62")  # not a literal


def test_a_kernel_cache_keyed_on_a_spec_attribute() -> None:
    plain = (FIXTURE / "candidates" / "sc_plain.py").read_text(encoding="utf-8")
    assert "key = (tdtype, cap)" in plain
    assert _rules(plain, "PF11") == []
    other = plain.replace("def softcap_wrapper(x, cap):", "def softcap_wrapper(x, cap, other=None):").replace(
        "_kernel_for(x.dtype, cap)", "_kernel_for(x.dtype, other)")
    assert other.count("other") == 2 and _rules(other, "PF11")  # not a SPEC attribute: the caller's object
    keyed_on_x = plain.replace("_kernel_for(x.dtype, cap)", "_kernel_for(x.dtype, x)")
    assert "x = x.contiguous()" in keyed_on_x and _rules(keyed_on_x, "PF11")  # the input, rebound to itself
    hidden = plain.replace("    softcap_kernel = _kernel_for(x.dtype, cap)",
                           "    cap, c = x, float(cap)\n    softcap_kernel = _kernel_for(x.dtype, cap)")
    assert hidden != plain and _rules(hidden, "PF11")  # s37b: the input under the attribute's name
    for honest in ("    cap = float(cap)\n", "    cap, n = float(cap), x.shape[0]\n"):
        text = plain.replace("    softcap_kernel = _kernel_for(x.dtype, cap)",
                             honest + "    softcap_kernel = _kernel_for(x.dtype, cap)")
        assert text != plain and _rules(text, "PF11") == [], honest


def test_a_parameter_rebound_from_itself_is_still_the_argument() -> None:
    src = '''import pypto
_K = {}


def _kernel(key):
    if key not in _K:
        @pypto.frontend.jit
        def k(a: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32), b: pypto.Tensor([pypto.DYNAMIC], pypto.DT_FP32)):
            pypto.assemble(pypto.view(a, [16], [0]), [0], b)
        _K[key] = k
    return _K[key]


def softcap_wrapper(x, cap):
    x = x.contiguous()
    y = x.new_empty(x.shape)
    _kernel(x)(x, y)
    return y
'''
    assert _rules(src, "PF11")
    assert not _rules(src.replace("_kernel(x)(x, y)", "_kernel(x.shape[0])(x, y)"), "PF11")


def test_a_second_small_size_and_a_valuation_of_256() -> None:
    """Red team s37c: a `n <= 8` decode path and a `n % 256 == 0` path in 512-row blocks passed most verifications."""
    o = load_op_dir(FIXTURE / "rms_norm")
    for seed in SEEDS:
        cases = unseen_cases(o.spec, o.cases(), seed)
        sizes = {(c.dims["B"], c.dtype) for c in cases}
        assert any(2 <= b <= 8 for b, _ in sizes), (seed, sorted(sizes))
        assert any(b % 256 == 0 and (b // 256) % 2 == 1 for b, _ in sizes), (seed, sorted(sizes))
