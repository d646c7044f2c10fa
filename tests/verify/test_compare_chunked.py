"""A large output leaf is compared chunk by chunk, in bounded memory, with the whole-array statistics.

Why: the whole-array comparison held about ten float32/float64 temporaries the size of the leaf; with a 1 GiB
output the verifier peaked at several times the op's data (issue #24, several-GB ops). The chunked path must
report what the whole-array path reports: exactly for counts, maxima, outliers and NaN/inf counts, up to float64
rounding for the mean and standard deviation of the diffs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from runtime.compare import _leaf_result, _leaf_result_chunked


def _pair(seed: int, shape: tuple[int, ...], dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(shape).astype(dtype)
    a = (b + rng.standard_normal(shape).astype(dtype) * np.float32(1e-4)).astype(dtype)
    flat = a.reshape(-1)
    bad = rng.choice(flat.size, 40, replace=False)
    flat[bad[:30]] += np.float32(0.5) * (1 + np.arange(30) % 3).astype(dtype)  # ties in the diffs
    flat[bad[30:35]] = np.nan
    flat[bad[35:]] = np.inf
    return a, b


@pytest.mark.parametrize("chunk", [997, 4096, 1 << 20])
def test_chunked_statistics_equal_the_whole_array_ones(chunk: int) -> None:
    a, b = _pair(3, (61, 173))
    whole = _leaf_result("output[0]", a, b, 1e-3, 1e-3, 20)
    parts = _leaf_result_chunked("output[0]", a, b, 1e-3, 1e-3, 20, chunk)
    exact = ("all_close", "shape_match", "actual_shape", "total_elements", "out_of_tolerance_count",
             "out_of_tolerance_ratio", "max_diff", "max_out_of_tolerance_diff", "max_rel_diff", "nan_count",
             "inf_count", "actual_dtype", "expected_dtype")
    for key in exact:
        assert getattr(parts, key) == getattr(whole, key), key
    assert [o.model_dump_json() for o in parts.outliers] == [o.model_dump_json() for o in whole.outliers]  # NaNs
    assert whole.out_of_tolerance_count == 40 and len(whole.outliers) == 20
    assert math.isinf(parts.mean_diff) and math.isinf(whole.mean_diff)  # inf diffs (NaN/inf elements)


def test_chunked_mean_and_std_match_when_every_diff_is_finite() -> None:
    rng = np.random.default_rng(5)
    b = rng.standard_normal((300, 77)).astype(np.float32)
    a = b + rng.standard_normal(b.shape).astype(np.float32) * np.float32(3e-3)
    whole = _leaf_result("y", a, b, 1e-3, 1e-3, 5)
    parts = _leaf_result_chunked("y", a, b, 1e-3, 1e-3, 5, 1234)
    assert parts.out_of_tolerance_count == whole.out_of_tolerance_count > 0
    assert parts.outliers == whole.outliers
    assert parts.mean_diff == pytest.approx(whole.mean_diff, rel=1e-9)
    assert parts.std_diff == pytest.approx(whole.std_diff, rel=1e-9)
    assert parts.mean_out_of_tolerance_diff == pytest.approx(whole.mean_out_of_tolerance_diff, rel=1e-9)


def test_a_leaf_over_the_threshold_takes_the_chunked_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import runtime.compare as compare

    seen = []
    real = compare._leaf_result_chunked
    monkeypatch.setattr(compare, "CHUNKED_ABOVE", 1000)
    monkeypatch.setattr(compare, "_leaf_result_chunked", lambda *a: seen.append(a[-1]) or real(*a))
    a, b = _pair(1, (40, 40))
    assert not compare.compare_outputs([a], [b], atol=1e-3, rtol=1e-3)[0].all_close
    assert seen == [compare.CHUNK_ELEMENTS]
