"""SPEC.md front matter: valid files parse; every invalid file gets a plain message with file, line and field."""

from __future__ import annotations

from pathlib import Path

import pytest
from opdir_helpers import BASE_SPEC, SILU, write_op

from runtime.opdir import OpDirError, load_op_dir, parse_spec_text


def problems_of(text: str) -> list:
    with pytest.raises(OpDirError) as info:
        parse_spec_text(text)
    return info.value.problems


def only(text: str):
    probs = problems_of(text)
    assert len(probs) == 1, [str(p) for p in probs]
    return probs[0]


def test_silu_spec_parses() -> None:
    op = load_op_dir(SILU)
    s = op.spec
    assert s.op_name == "silu"
    assert [t.name for t in s.inputs] == ["x"] and [t.name for t in s.outputs] == ["y"]
    assert s.inputs[0].shape == ["B", "D"] and s.inputs[0].dtype == "T"
    assert s.inputs[0].range == (-8.0, 8.0)
    assert s.p0_shapes == [{"B": 64, "D": 256}, {"B": 77, "D": 256}]
    assert s.dynamic_axes == ["B"]
    assert s.supported_dtypes == ["fp32", "bf16"]
    assert s.tolerance["bf16"].atol == pytest.approx(1e-2)
    assert s.seeds == [0, 1, 2]


def test_attrs_defaults_and_aliases() -> None:
    text = BASE_SPEC.replace("seeds: [0, 1, 2]\n", "").replace("supported_dtypes: [fp32]", "supported_dtypes: [float32]")
    s = parse_spec_text(text)
    assert s.attrs == {"alpha": 2.0}
    assert s.seeds == [0, 1, 2]  # default
    assert s.supported_dtypes == ["fp32"]  # alias canonicalised
    assert s.inputs[1].dtype == "fp32" and s.inputs[0].distribution == "uniform"
    assert s.named_dims() == ["B", "D"]


def test_not_front_matter() -> None:
    p = only("# just a heading\n")
    assert (p.file, p.line) == ("SPEC.md", 1)
    assert "must start with a YAML front matter" in p.message


def test_unclosed_front_matter() -> None:
    p = only("---\nop_name: x\n")
    assert "never closed" in p.message


def test_yaml_syntax_error_has_line() -> None:
    text = BASE_SPEC.replace("dynamic_axes: [B]", "dynamic_axes: [B")
    p = only(text)
    assert p.message.startswith("YAML syntax error")
    assert p.line is not None and 8 <= p.line <= 10


def test_unknown_dtype_names_field_and_line() -> None:
    p = only(BASE_SPEC.replace("dtype: fp32}", "dtype: fp33}"))
    assert p.field == "inputs[1].dtype"
    assert p.line == 5
    assert "unknown dtype 'fp33'" in p.message and "bf16" in p.message


def test_missing_required_key_points_at_parent() -> None:
    p = only(BASE_SPEC.replace("op_name: scale_add\n", ""))
    assert p.field == "front matter" and "required key 'op_name' is missing" in p.message


def test_missing_tolerance_field_line() -> None:
    p = only(BASE_SPEC.replace("{atol: 1.0e-5, rtol: 1.0e-5}", "{atol: 1.0e-5}"))
    assert p.field == "tolerance.fp32" and p.line == 11
    assert "required key 'rtol' is missing" in p.message


def test_unknown_tensor_key() -> None:
    p = only(BASE_SPEC.replace("dtype: fp32}", "dtype: fp32, colour: red}"))
    assert p.field == "inputs[1].colour" and p.line == 5
    assert "unknown key 'colour'" in p.message and "allowed keys here: name, shape, dtype" in p.message


def test_bad_shape_entry() -> None:
    p = only(BASE_SPEC.replace("shape: [D], dtype: fp32", "shape: [0], dtype: fp32"))
    assert p.field == "inputs[1].shape[0]" and p.line == 5
    assert "a fixed size must be >= 1, got 0" == p.message


def test_bad_range() -> None:
    p = only(BASE_SPEC.replace("range: [-2.0, 2.0]", "range: [2.0, -2.0]"))
    assert p.field == "inputs[0].range" and p.line == 4
    assert "low must be smaller than high" in p.message


def test_unbound_dim_in_p0_shape() -> None:
    p = only(BASE_SPEC.replace("{B: 21, D: 32}", "{B: 21}"))
    assert p.field == "p0_shapes[1]" and p.line == 9
    assert "does not bind the named dim(s) D" in p.message


def test_p0_shape_with_unknown_dim() -> None:
    p = only(BASE_SPEC.replace("{B: 21, D: 32}", "{B: 21, D: 32, Q: 3}"))
    assert p.field == "p0_shapes[1].Q" and "'Q' is not a dim of any input or output" in p.message


def test_dynamic_axis_must_be_named_dim() -> None:
    p = only(BASE_SPEC.replace("dynamic_axes: [B]", "dynamic_axes: [B, N]"))
    assert p.field == "dynamic_axes[1]" and p.line == 8 and "'N' is not a named dim" in p.message


def test_supported_dtype_without_tolerance() -> None:
    p = only(BASE_SPEC.replace("supported_dtypes: [fp32]", "supported_dtypes: [fp32, bf16]"))
    assert p.field == "supported_dtypes[1]" and p.line == 10
    assert "dtype 'bf16' has no entry in tolerance" in p.message


def test_duplicate_tensor_name() -> None:
    p = only(BASE_SPEC.replace("{name: y,", "{name: x,"))
    assert p.field == "outputs[0].name" and p.line == 7 and "already used in inputs" in p.message


def test_duplicate_key() -> None:
    p = only(BASE_SPEC.replace("seeds: [0, 1, 2]\n", "seeds: [0, 1, 2]\nseeds: [3, 4, 5]\n"))
    assert p.line == 13 and "appears twice" in p.message


def test_bad_seeds_and_distribution() -> None:
    probs = problems_of(BASE_SPEC.replace("seeds: [0, 1, 2]", "seeds: [1, 1]")
                        .replace("range: [-2.0, 2.0]}", "range: [-2.0, 2.0], distribution: gauss}"))
    msgs = {p.field: p.message for p in probs}
    assert "must be one of" in msgs["inputs[0].distribution"]
    # the cross-field check runs only once the model itself validates
    assert "seeds" not in msgs
    p = only(BASE_SPEC.replace("seeds: [0, 1, 2]", "seeds: [1, 1, 2]"))
    assert p.field == "seeds" and p.line == 12 and "distinct" in p.message
    p = only(BASE_SPEC.replace("seeds: [0, 1, 2]", "seeds: [5, 6]"))
    assert p.field == "seeds" and "at least 3 seeds" in p.message


def test_several_problems_all_reported_sorted_by_line() -> None:
    text = BASE_SPEC.replace("dtype: fp32}", "dtype: fp33}").replace("{atol: 1.0e-5, rtol: 1.0e-5}", "{atol: -1}")
    probs = problems_of(text)
    assert [p.line for p in probs] == sorted(p.line for p in probs)
    assert {p.field for p in probs} >= {"inputs[1].dtype", "tolerance.fp32.atol", "tolerance.fp32"}


def test_load_op_dir_reports_missing_files(tmp_path: Path) -> None:
    root = write_op(tmp_path / "op", spec=None, golden=None)
    with pytest.raises(OpDirError) as info:
        load_op_dir(root)
    assert {p.file for p in info.value.problems} == {"SPEC.md", "golden.py"}
    with pytest.raises(OpDirError) as info:
        load_op_dir(tmp_path / "nope")
    assert "nope: does not exist (expected an operator directory" in str(info.value)


def test_problem_str_is_one_line() -> None:
    p = only(BASE_SPEC.replace("dtype: fp32}", "dtype: fp33}"))
    assert str(p).startswith("SPEC.md:5: inputs[1].dtype: unknown dtype")
    assert "\n" not in str(p)


def test_p0_shapes_must_be_mappings_or_gym_shape_lists() -> None:
    # the gym's form (a shape per case, bound against the first input's named dims) is accepted (issue #16)
    spec = parse_spec_text(BASE_SPEC.replace("p0_shapes: [{B: 16, D: 32}, {B: 21, D: 32}]", "p0_shapes: [[16, 32]]"))
    assert spec.p0_shapes == [{"B": 16, "D": 32}]
    p = only(BASE_SPEC.replace("p0_shapes: [{B: 16, D: 32}, {B: 21, D: 32}]", "p0_shapes: [16, 32]"))
    assert p.field == "p0_shapes" and p.line == 9
    assert "each P0 shape must be a mapping binding the named dims" in p.message


def test_p0_shapes_required_with_named_dims() -> None:
    p = only(BASE_SPEC.replace("p0_shapes: [{B: 16, D: 32}, {B: 21, D: 32}]\n", ""))
    assert p.field == "p0_shapes" and "required when shapes use named dims (B, D)" in p.message


@pytest.mark.parametrize(("typo", "meant"), [("dynamic_axis: [B]", "dynamic_axes"), ("seed: [5, 6, 7]", "seeds"),
                                             ("tolerances: {}", "tolerance"), ("p0_shape: []", "p0_shapes")])
def test_a_top_level_typo_is_refused_with_the_key_it_meant(typo: str, meant: str) -> None:
    """Issue #28 finding 4: `dynamic_axis: [B]` used to be accepted as an op attribute (B silently static) and
    `seed: [5, 6, 7]` too (the run used [0, 1, 2]); a near miss of a defined key is now a problem."""
    key = typo.split(":")[0]
    p = only(BASE_SPEC.replace("seeds: [0, 1, 2]\n", f"seeds: [0, 1, 2]\n{typo}\n"))
    assert p.field == key and p.line == 13
    assert f"unknown key '{key}'; did you mean '{meant}'?" in p.message


def test_an_attribute_that_looks_like_no_key_is_still_an_attribute() -> None:
    spec = parse_spec_text(BASE_SPEC.replace("seeds: [0, 1, 2]\n", "seeds: [0, 1, 2]\nnegative_slope: 0.1\n"))
    assert spec.attrs["negative_slope"] == 0.1


def test_a_nested_typo_says_what_it_meant() -> None:
    found = problems_of(BASE_SPEC.replace("dtype: fp32}", "dtpye: fp32}", 1))
    assert any("unknown key 'dtpye'; did you mean 'dtype'? allowed keys here:" in p.message for p in found), found
