"""detailed_tensor_compare / compare_outputs follow the upstream v2 semantics (workflow.md Part B §8.1)."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from runtime.compare import (
    CompareOptions,
    compare_outputs,
    detailed_tensor_compare,
    tensor_leaf_pairs,
)


def test_pass_and_fail_threshold_is_relative_to_reference() -> None:
    b = np.array([100.0, 1.0], dtype=np.float32)
    a = np.array([100.05, 1.05], dtype=np.float32)
    r = detailed_tensor_compare(a, b, "t", atol=1e-3, rtol=1e-3, verbose=False)
    # 0.05 <= 1e-3 + 1e-3*100 = 0.101 passes; 0.05 > 1e-3 + 1e-3*1 fails
    assert r["tolerance_mask"].tolist() == [True, False]
    assert r["out_of_tolerance_count"] == 1 and r["all_close"] is False
    # asymmetric: swapping the arguments changes the threshold
    r2 = detailed_tensor_compare(np.float32([0.0]), np.float32([10.0]), rtol=0.1, atol=0.0, verbose=False)
    r3 = detailed_tensor_compare(np.float32([10.0]), np.float32([0.0]), rtol=0.1, atol=0.0, verbose=False)
    assert not r2["all_close"] and not r3["all_close"]
    r4 = detailed_tensor_compare(np.float32([9.5]), np.float32([10.0]), rtol=0.1, atol=0.0, verbose=False)
    r5 = detailed_tensor_compare(np.float32([10.0]), np.float32([9.5]), rtol=0.05, atol=0.0, verbose=False)
    assert r4["all_close"] and not r5["all_close"]


def test_shape_mismatch_is_failure_without_broadcast() -> None:
    r = detailed_tensor_compare(np.zeros((2, 3)), np.zeros((3,)), verbose=False)
    assert r["shape_match"] is False and r["all_close"] is False
    assert r["total_elements"] == 6 and r["out_of_tolerance_ratio"] == 1.0
    assert math.isinf(r["max_diff"]) and r["std_diff"] == 0.0
    assert r["tolerance_mask"] is None and r["outlier_indices"] is None


def test_empty_tensors_are_close() -> None:
    r = detailed_tensor_compare(np.zeros((0, 4)), np.zeros((0, 4)), verbose=False)
    assert r["all_close"] and r["total_elements"] == 0 and r["max_diff"] == 0.0


def test_nan_and_inf_semantics() -> None:
    inf, nan = np.inf, np.nan
    a = np.array([nan, 1.0, inf, -inf, inf, 1.0, 2.0], dtype=np.float32)
    b = np.array([nan, nan, inf, -inf, -inf, inf, 2.0], dtype=np.float32)
    r = detailed_tensor_compare(a, b, verbose=False)
    assert r["tolerance_mask"].tolist() == [False, False, True, True, False, False, True]
    assert r["diff_tensor"][2] == 0.0 and np.isinf(r["diff_tensor"][0])
    assert math.isinf(r["max_diff"])


def test_outliers_sorted_descending_and_capped() -> None:
    b = np.zeros(50, dtype=np.float32)
    a = np.arange(50, dtype=np.float32)
    r = detailed_tensor_compare(a, b, verbose=False)
    assert r["out_of_tolerance_count"] == 49
    assert len(r["outlier_diffs"]) == 20
    assert r["outlier_diffs"].tolist() == sorted(r["outlier_diffs"].tolist(), reverse=True)
    assert int(r["outlier_indices"][0][0]) == 49
    r = detailed_tensor_compare(a, b, max_outliers_display=3, verbose=False)
    assert len(r["outlier_diffs"]) == 3


def test_statistics_population_std() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    b = np.zeros(4, dtype=np.float32)
    r = detailed_tensor_compare(a, b, verbose=False)
    assert r["mean_diff"] == pytest.approx(2.5)
    assert r["std_diff"] == pytest.approx(np.std([1, 2, 3, 4]))
    assert r["max_out_of_tolerance_diff"] == 4.0
    assert r["mean_out_of_tolerance_diff"] == pytest.approx(2.5)


def test_option_forms() -> None:
    a, b = np.float32([1.0]), np.float32([1.5])
    assert detailed_tensor_compare(a, b, "x", 1.0, 0.0, False)["all_close"]  # legacy positional rtol, atol
    assert detailed_tensor_compare(a, b, name="x", rtol=0.0, atol=0.6, verbose=False)["all_close"]
    assert detailed_tensor_compare(a, b, options=CompareOptions(atol=0.6, rtol=0.0, verbose=False))["all_close"]
    # legacy keyword overrides the options object
    assert not detailed_tensor_compare(a, b, options=CompareOptions(atol=0.6, verbose=False), atol=0.0,
                                       rtol=0.0)["all_close"]
    assert detailed_tensor_compare(a, b, name="lbl", verbose=False)["tensor_name"] == "lbl"
    assert detailed_tensor_compare(a, b, verbose=False)["tensor_name"] == "tensor"
    with pytest.raises(TypeError):
        detailed_tensor_compare(a, b, "x", 1, 1, True, 20, 5)
    with pytest.raises(TypeError):
        detailed_tensor_compare(a, b, "x", 0.1, rtol=0.2)
    with pytest.raises(TypeError):
        detailed_tensor_compare(a, b, "x", name="y")
    with pytest.raises(TypeError):
        detailed_tensor_compare(a, b, bogus=1)


@pytest.mark.parametrize("dt", [ml_dtypes.bfloat16, np.float16, ml_dtypes.float8_e4m3fn, np.int32, np.bool_])
def test_low_precision_and_integer_dtypes(dt: type) -> None:
    x = np.array([1, 0, 1, 1], dtype=np.float32).astype(dt)
    r = detailed_tensor_compare(x, x.copy(), verbose=False)
    assert r["all_close"] and r["total_elements"] == 4


def test_bf16_rounding_is_visible() -> None:
    x = np.linspace(1, 2, 64, dtype=np.float32)
    lossy = x.astype(ml_dtypes.bfloat16)
    assert not detailed_tensor_compare(lossy, x, atol=1e-5, rtol=1e-5, verbose=False)["all_close"]
    assert detailed_tensor_compare(lossy, x, atol=1e-2, rtol=1e-2, verbose=False)["all_close"]


def test_leaf_recursion_paths_and_container_mismatch() -> None:
    z = np.zeros(3, dtype=np.float32)
    pairs = tensor_leaf_pairs((z, {"m": z, "v": [z]}), (z, {"m": z, "v": [z]}))
    assert [p for p, _, _ in pairs] == ["output[0]", "output[1]['m']", "output[1]['v'][0]"]
    with pytest.raises(AssertionError):
        tensor_leaf_pairs((z,), (z, z))
    with pytest.raises(AssertionError):
        tensor_leaf_pairs({"a": z}, {"b": z})
    with pytest.raises(AssertionError):
        tensor_leaf_pairs(z, (z,))
    with pytest.raises(TypeError):
        tensor_leaf_pairs((1,), (1,))
    with pytest.raises(ValueError):
        tensor_leaf_pairs((), ())


def test_compare_outputs_names_failing_leaf_and_never_raises() -> None:
    z = np.zeros(4, dtype=np.float32)
    res = compare_outputs((z, z + 1), (z, z), atol=1e-3, rtol=1e-3)
    assert [r.all_close for r in res] == [True, False]
    assert res[1].path == "output[1]" and res[1].outliers[0].abs_diff == 1.0
    bad = compare_outputs((z,), (z, z), atol=1e-3, rtol=1e-3)
    assert len(bad) == 1 and not bad[0].all_close and "items" in (bad[0].error or "")
    js = compare_outputs(z + np.inf, z, atol=0, rtol=0)[0].model_dump_json()
    assert "Infinity" in js


finite = st.floats(-1e6, 1e6, allow_nan=False, width=32)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(hnp.arrays(np.float32, hnp.array_shapes(max_dims=3, max_side=6), elements=finite))
def test_identity_always_close(x: np.ndarray) -> None:
    r = detailed_tensor_compare(x, x.copy(), atol=0.0, rtol=0.0, verbose=False)
    assert r["all_close"] and r["max_diff"] == 0.0 and r["outlier_indices"] is None


@settings(max_examples=60, deadline=None, derandomize=True)
@given(hnp.arrays(np.float32, st.integers(1, 30), elements=finite),
       hnp.arrays(np.float32, st.integers(1, 30), elements=finite),
       st.floats(0, 10), st.floats(0, 1))
def test_invariants(a: np.ndarray, b: np.ndarray, atol: float, rtol: float) -> None:
    if a.shape != b.shape:
        r = detailed_tensor_compare(a, b, atol=atol, rtol=rtol, verbose=False)
        assert not r["all_close"] and not r["shape_match"]
        return
    r = detailed_tensor_compare(a, b, atol=atol, rtol=rtol, verbose=False)
    assert 0 <= r["out_of_tolerance_count"] <= r["total_elements"]
    assert r["all_close"] == (r["out_of_tolerance_count"] == 0)
    assert r["max_diff"] >= r["mean_diff"] - 1e-6 * abs(r["mean_diff"]) >= 0 or r["max_diff"] == 0
    expected_mask = np.abs(a - b) <= np.float32(atol) + np.float32(rtol) * np.abs(b)
    assert r["tolerance_mask"].tolist() == expected_mask.tolist()
    # loosening the tolerance never increases the failure count
    r_loose = detailed_tensor_compare(a, b, atol=atol * 2 + 1, rtol=rtol * 2, verbose=False)
    assert r_loose["out_of_tolerance_count"] <= r["out_of_tolerance_count"]
    if r["outlier_diffs"] is not None:
        d = r["outlier_diffs"].tolist()
        assert d == sorted(d, reverse=True)
        assert d[0] == pytest.approx(r["max_out_of_tolerance_diff"])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(hnp.arrays(np.float32, st.integers(1, 20), elements=st.floats(allow_nan=True, allow_infinity=True,
                                                                      width=32)))
def test_nan_never_passes(x: np.ndarray) -> None:
    r = detailed_tensor_compare(x, x.copy(), verbose=False)
    assert r["out_of_tolerance_count"] == int(np.isnan(x).sum())
