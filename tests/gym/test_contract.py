"""The contract that fits the gym (issue #16): gym SPEC forms, typed attributes reaching the wrapper as
keywords, torch wrappers, constant outputs where SPEC says so. No torch needed except where marked."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

from runtime.opdir import OpDirError, intake
from runtime.opdir._spec import parse_spec_text
from runtime.verify import verify
from runtime.verify._target import TargetError, plan_target

HAS_TORCH = importlib.util.find_spec("torch") is not None

GYM_SPEC = """---
op_name: scale_rows
inputs:
  - {name: x, shape: [B, D], dtype: T, range: [-2.0, 2.0]}
outputs:
  - {name: y, shape: [B, D], dtype: T}
dynamic_axes: [B]
p0_shapes: [[32, 64], [45, 64]]
supported_dtypes: [float32]
tolerance: {atol: 1.0e-5, rtol: 1.0e-5}
attributes:
  scale: {type: float, value: 1.5}
---
scale rows
"""


def test_gym_spec_forms_one_tolerance_and_list_of_lists_p0_shapes() -> None:
    spec = parse_spec_text(GYM_SPEC)
    assert spec.p0_shapes == [{"B": 32, "D": 64}, {"B": 45, "D": 64}]
    assert set(spec.tolerance) == {"fp32"} and spec.tolerance["fp32"].atol == 1e-5
    assert spec.attrs == {"scale": 1.5} and spec.attributes["scale"].type == "float"


def test_gym_p0_shapes_per_input_and_mismatch_is_a_clear_problem() -> None:
    text = GYM_SPEC.replace("p0_shapes: [[32, 64], [45, 64]]", "p0_shapes: [[[32, 64]], {x: [45, 64]}]")
    assert parse_spec_text(text).p0_shapes == [{"B": 32, "D": 64}, {"B": 45, "D": 64}]
    bad = GYM_SPEC.replace("p0_shapes: [[32, 64], [45, 64]]", "p0_shapes: [[32, 64, 2]]")
    with pytest.raises(OpDirError, match="rank"):
        parse_spec_text(bad)


def test_typed_attribute_with_a_wrong_value_is_refused_at_its_line() -> None:
    bad = GYM_SPEC.replace("scale: {type: float, value: 1.5}", "scale: {type: int, value: 1.5}")
    with pytest.raises(OpDirError) as exc:
        parse_spec_text(bad)
    assert "not of type int" in str(exc.value)


KERNEL = '''import numpy as np
import pypto

D = 64


@pypto.frontend.jit
def scale_kernel(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
                 scale: float):
    pypto.set_vec_tile_shapes(16, D)
    for i in pypto.loop(pypto.ceildiv(x.shape[0], 16), name="r", idx_name="i"):
        t = pypto.view(x, [16, D], [i * 16, 0], valid_shape=[(x.shape[0] - i * 16).min(16), D])
        pypto.assemble(pypto.mul(t, scale), [i * 16, 0], y)


def scale_rows_wrapper(x, scale=1.0):
    y = np.empty_like(x)
    scale_kernel(x, y, scale)
    return y
'''

GOLDEN = '''# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|---|---|
# | 1 | x * scale | [B,D] -> [B,D] |
import numpy as np


def golden(x, scale=1.0):
    return (x * np.float32(scale)).astype(x.dtype)
'''


def _op(tmp_path: Path, kernel: str = KERNEL) -> Path:
    d = tmp_path / "scale_rows"
    d.mkdir()
    (d / "SPEC.md").write_text(GYM_SPEC)
    (d / "golden.py").write_text(GOLDEN)
    (d / "scale_rows_impl.py").write_text(kernel)
    return d


def test_spec_attribute_reaches_the_wrapper_as_a_keyword(tmp_path: Path) -> None:
    d = _op(tmp_path)
    plan = plan_target(d, d / "scale_rows_impl.py", "scale_rows", ["x"], ["y"], {"scale": 1.5})
    assert plan.params == ["x"] and plan.attrs == ["scale"] and not plan.torch_io
    report = verify(d, d / "scale_rows_impl.py")
    assert report.verdict == "PASS", report.reasons
    # the wrapper's default (1.0) would fail numerically: the SPEC value 1.5 is what it got
    (d / "SPEC.md").write_text(GYM_SPEC.replace("value: 1.5", "value: 2.5"))
    assert verify(d, d / "scale_rows_impl.py").verdict == "PASS"


def test_tensor_parameter_after_an_attribute_is_a_clear_target_error(tmp_path: Path) -> None:
    d = _op(tmp_path, KERNEL.replace("def scale_rows_wrapper(x, scale=1.0):", "def scale_rows_wrapper(scale, x):"))
    with pytest.raises(TargetError, match="put the tensor inputs first"):
        plan_target(d, d / "scale_rows_impl.py", "scale_rows", ["x"], ["y"], {"scale": 1.5})


@pytest.mark.skipif(not HAS_TORCH, reason="a torch wrapper needs torch (pip install torch==2.13.0, a CPU build)")
def test_torch_wrapper_gets_torch_tensors_and_may_return_them(tmp_path: Path) -> None:
    kernel = KERNEL.replace("import numpy as np\n", "import torch\n").replace(
        "    y = np.empty_like(x)\n", "    assert isinstance(x, torch.Tensor)\n    y = torch.empty_like(x)\n")
    d = _op(tmp_path, kernel)
    report = verify(d, d / "scale_rows_impl.py")
    assert report.verdict == "PASS", report.reasons


CONST_GOLDEN = '''# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|---|---|
# | 1 | softmax over a length-1 axis | [B,1] -> [B,1] |
import numpy as np


def golden(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(x.dtype)
'''
CONST_SPEC = """---
op_name: softmax1
inputs:
  - {name: x, shape: [B, 1], dtype: fp32}
outputs:
  - {name: y, shape: [B, 1], dtype: fp32CONST}
p0_shapes: [{B: 8}]
supported_dtypes: [fp32]
tolerance: {fp32: {atol: 1.0e-6, rtol: 1.0e-6}}
---
"""


def test_intake_accepts_a_constant_output_only_where_spec_says_so(tmp_path: Path) -> None:
    d = tmp_path / "softmax1"
    d.mkdir()
    (d / "golden.py").write_text(CONST_GOLDEN)
    (d / "SPEC.md").write_text(CONST_SPEC.replace("CONST", ""))
    refused = intake(d)
    assert any("constant" in p.message for p in refused.problems)
    (d / "SPEC.md").write_text(CONST_SPEC.replace("CONST", ", constant: true"))
    assert intake(d).problems == []


def test_a_kernel_only_on_some_axis_lengths_constant_is_not_refused(tmp_path: Path) -> None:
    d = tmp_path / "softmax_n"
    d.mkdir()
    (d / "golden.py").write_text(CONST_GOLDEN.replace("[B,1] -> [B,1]", "[B,N] -> [B,N]"))
    (d / "SPEC.md").write_text(textwrap.dedent(CONST_SPEC.replace("CONST", "")).replace("[B, 1]", "[B, N]")
                               .replace("p0_shapes: [{B: 8}]", "p0_shapes: [{B: 8, N: 1}, {B: 8, N: 16}]"))
    assert not any("constant" in p.message for p in intake(d).problems)
