"""Deterministic inputs (identical bytes, representable, within range, bands) and the case list."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opdir_helpers import BASE_SPEC, SILU

from runtime.opdir import BANDS, Case, OpDirError, load_op_dir, parse_spec_text
from runtime.opdir._cases import build_cases
from runtime.opdir._inputs import generate_input, generate_inputs


def case(dtype: str = "fp32", seed: int = 0, band: str = "normal", dims: dict | None = None) -> Case:
    return Case(name="c", dims=dims or {"B": 16, "D": 32}, dtype=dtype, seed=seed, band=band)


SPEC = parse_spec_text(BASE_SPEC.replace("supported_dtypes: [fp32]", "supported_dtypes: [fp32, bf16]")
                       .replace("tolerance: {", "tolerance: {bf16: {atol: 1.0e-2, rtol: 1.0e-2}, "))


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("band", BANDS)
def test_same_case_same_bytes(dtype: str, band: str) -> None:
    a = generate_inputs(SPEC, case(dtype, 1, band))
    b = generate_inputs(SPEC, case(dtype, 1, band))
    assert [x.tobytes() for x in a] == [y.tobytes() for y in b]
    assert a[0].dtype == (np.float32 if dtype == "fp32" else ml_dtypes.bfloat16)
    assert a[1].dtype == np.float32  # concrete dtype, not T
    assert a[0].shape == (16, 32) and a[1].shape == (32,)


def test_different_seed_or_input_differs() -> None:
    a = generate_inputs(SPEC, case(seed=0))
    b = generate_inputs(SPEC, case(seed=1))
    assert a[0].tobytes() != b[0].tobytes()
    assert not np.array_equal(a[0][0, :], a[1])  # inputs draw from different streams


@pytest.mark.parametrize("band", BANDS)
def test_values_within_declared_range(band: str) -> None:
    for dtype in ("fp32", "bf16"):
        for seed in range(3):
            x = generate_inputs(SPEC, case(dtype, seed, band))[0].astype(np.float64)
            assert x.min() >= -2.0 and x.max() <= 2.0


def test_bf16_values_are_exactly_representable_and_range_edges_respected() -> None:
    text = BASE_SPEC.replace("range: [-2.0, 2.0]", "range: [-0.3, 0.3]").replace(
        "supported_dtypes: [fp32]", "supported_dtypes: [bf16]").replace("tolerance: {fp32", "tolerance: {bf16")
    spec = parse_spec_text(text)
    for band in BANDS:
        x = generate_input(spec.inputs[0], case("bf16", 2, band, {"B": 64, "D": 64}), 0)
        assert x.dtype == ml_dtypes.bfloat16
        f = x.astype(np.float32)
        assert np.array_equal(f.astype(ml_dtypes.bfloat16).astype(np.float32), f)
        # 0.3 is not representable in bf16; the nearest (0.30078125) would be out of range
        assert f.max() <= 0.3 and f.min() >= -0.3


def test_bands_have_their_character() -> None:
    def sample(band: str) -> np.ndarray:
        return generate_inputs(SPEC, case("fp32", 0, band, {"B": 64, "D": 32}))[0]

    normal, small, large, offset = (np.abs(sample(b)) for b in BANDS)
    assert small.max() <= 0.02 + 1e-7 < normal.max()
    assert large.min() >= 1.5 - 1e-6  # top quarter of |x| for range [-2, 2]
    assert sample("offset").mean() > 1.0 and abs(sample("normal").mean()) < 0.2
    assert offset.min() >= 0.4 - 1e-6


def test_normal_distribution_and_integer_and_bool_inputs() -> None:
    text = BASE_SPEC.replace("{name: b, shape: [D], dtype: fp32}",
                             "{name: b, shape: [D], dtype: int32, range: [3, 7]}\n"
                             "  - {name: m, shape: [B], dtype: bool}\n"
                             "  - {name: z, shape: [D], dtype: fp32, range: [10, 20], distribution: normal}")
    spec = parse_spec_text(text)
    x, b, m, z = generate_inputs(spec, case())
    assert b.dtype == np.int32 and b.min() >= 3 and b.max() <= 7 and len(set(b.tolist())) > 1
    assert m.dtype == np.bool_ and m.shape == (16,)
    assert z.min() >= 10 and z.max() <= 20 and abs(float(z.mean()) - 15) < 1.5


def test_silu_cases() -> None:
    op = load_op_dir(SILU)
    cases = op.cases()
    assert len(cases) == 12  # 2 P0 shapes x 2 dtypes x 3 seeds; B=77 already has a tail
    names = [c.name for c in cases]
    assert len(set(names)) == len(names)
    assert names[0] == "B64_D256-fp32-s0-normal"
    assert "B77_D256-bf16-s1-normal" in names
    assert {c.band for c in cases} == set(BANDS)  # bands rotate over (shape, seed)
    assert {c.seed for c in cases} == {0, 1, 2}
    assert all(c.tail == (c.dims["B"] == 77) for c in cases)
    assert op.cases(case="B77_D256-fp32-s2-small")[0].band == "small"
    with pytest.raises(OpDirError, match="no case named 'nope'; cases: B64_D256-fp32-s0-normal"):
        op.cases(case="nope")


def test_tail_case_derived_when_no_p0_shape_has_one() -> None:
    spec = parse_spec_text(BASE_SPEC.replace("{B: 21, D: 32}", "{B: 32, D: 32}"))
    cases = build_cases(spec)
    assert len(cases) == 2 * 3 + 1
    tail = cases[-1]
    assert tail.tail and tail.dims == {"B": 29, "D": 32} and tail.name == "B29_D32-fp32-s0-normal"
    assert not any(c.tail for c in cases[:-1])
    # same spec, P0 shape with a tail: nothing derived
    assert len(build_cases(parse_spec_text(BASE_SPEC))) == 6


def test_static_op_without_named_dims_has_one_shape_and_no_tail() -> None:
    text = (BASE_SPEC.replace("[B, D]", "[4, 8]").replace("shape: [D]", "shape: [8]")
            .replace("dynamic_axes: [B]\n", "").replace("p0_shapes: [{B: 16, D: 32}, {B: 21, D: 32}]\n", ""))
    cases = build_cases(parse_spec_text(text))
    assert [c.name for c in cases] == ["static-fp32-s0-normal", "static-fp32-s1-small", "static-fp32-s2-large"]


def test_op_make_inputs_matches_generator() -> None:
    op = load_op_dir(SILU)
    c = op.cases()[4]
    assert op.make_inputs(c)[0].tobytes() == generate_inputs(op.spec, c)[0].tobytes()


@pytest.mark.parametrize("dtype", ["fp16", "fp8e4m3", "fp8e5m2", "fp64"])
def test_other_float_dtypes_stay_in_range_and_representable(dtype: str) -> None:
    text = (BASE_SPEC.replace("range: [-2.0, 2.0]", "range: [-0.3, 0.3]")
            .replace("supported_dtypes: [fp32]", f"supported_dtypes: [{dtype}]")
            .replace("tolerance: {fp32", f"tolerance: {{{dtype}"))
    spec = parse_spec_text(text)
    for band in BANDS:
        x = generate_input(spec.inputs[0], case(dtype, 0, band, {"B": 32, "D": 32}), 0)
        f = x.astype(np.float64)
        assert f.min() >= -0.3 and f.max() <= 0.3
        assert np.array_equal(f.astype(x.dtype).astype(np.float64), f)


@settings(max_examples=60, deadline=None, database=None, derandomize=True)
@given(
    lo=st.floats(-1e4, 1e4, allow_nan=False),
    width=st.floats(1e-2, 1e4, allow_nan=False),
    dtype=st.sampled_from(["fp32", "bf16", "fp16"]),
    band=st.sampled_from(BANDS),
    seed=st.integers(0, 2**31),
)
def test_property_in_range_representable_deterministic(lo: float, width: float, dtype: str, band: str,
                                                       seed: int) -> None:
    hi = lo + width + abs(lo) * 0.02  # wider than one bf16 ulp (2**-7 relative), so the range holds values
    text = (BASE_SPEC.replace("range: [-2.0, 2.0]", f"range: [{lo!r}, {hi!r}]")
            .replace("supported_dtypes: [fp32]", f"supported_dtypes: [{dtype}]")
            .replace("tolerance: {fp32", f"tolerance: {{{dtype}"))
    spec = parse_spec_text(text)
    c = case(dtype, seed, band, {"B": 8, "D": 8})
    x = generate_input(spec.inputs[0], c, 0)
    f = x.astype(np.float64)
    assert np.isfinite(f).all() and f.min() >= lo and f.max() <= hi
    assert np.array_equal(f.astype(x.dtype).astype(np.float64), f)
    assert generate_input(spec.inputs[0], c, 0).tobytes() == x.tobytes()


def test_impossible_range_for_dtype_is_a_clear_problem() -> None:
    text = (BASE_SPEC.replace("range: [-2.0, 2.0]", "range: [100000.0, 200000.0]")
            .replace("supported_dtypes: [fp32]", "supported_dtypes: [fp16]").replace("tolerance: {fp32", "tolerance: {fp16"))
    spec = parse_spec_text(text)
    with pytest.raises(OpDirError) as info:
        generate_inputs(spec, case("fp16"))
    (p,) = info.value.problems
    assert p.field == "inputs.x.range" and "no fp16 value lies in the range" in p.message
