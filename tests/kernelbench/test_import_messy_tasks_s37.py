"""KernelBench task files as the public repository writes them, messy parts included (session 37): GPU timing sizes
(4096 x 393216), ``.cuda()`` in get_inputs(), Python numbers among the inputs, a ``DYNAMIC_AXIS`` string, inputs
with a matrix structure, level1 activations / norms / losses, a level4 task whose dependency is missing. The task
texts are our own synthetic ones, written inline."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters.kernelbench import _importer, _probe
from orchestrator.adapters.kernelbench._importer import TaskImport, TaskImportError
from orchestrator.adapters.kernelbench._ops import classify

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")

HUGE = """import torch
import torch.nn as nn

FORMULA = "out[b, d] = sigmoid(x[b, d])"
DYNAMIC_AXIS = ["B"]

class Model(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)

batch_size = 4096
dim = 393216

def get_inputs():
    x = torch.randn(batch_size, dim) * 0.02
    mask = torch.randint(0, 2, (batch_size, dim)).bool()
    return [x, torch.ones(dim)]

def get_init_inputs():
    return []
"""


def _task(tmp_path: Path, text: str, name: str = "7_Task.py") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_cut_keeps_trailing_axes_and_bounds_the_elements() -> None:
    assert _probe._cut([4096, 393216]) == [10, 393216]
    assert _probe._cut([2048, 1048576]) == [4, 1048576]
    assert _probe._cut([1048576, 1]) == [1048576, 1]  # at the bound: untouched
    assert _probe._cut([1, 1 << 30]) == [1, _probe.SAMPLE_ELEMENTS]
    assert _probe._cut([64, 64]) == [64, 64]


@needs_torch
def test_gpu_timing_sizes_are_described_without_building_them(tmp_path: Path, torch_restored: Any,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """4096 x 393216 float32 is 6.4 GB (and the float64 statistics copy 12.9 GB): the probe died or took the
    machine's memory. Shapes now come from the meta device, value statistics from a cut-down run."""
    monkeypatch.setattr(_probe, "SAMPLE_ELEMENTS", 1 << 19)  # a smaller cut: the same path, faster
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.monotonic()
    d = _probe.describe(_task(tmp_path, HUGE))
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    x, ones = d["inputs"]
    assert x["shape"] == [4096, 393216] and x["dtype"] == "float32" and x["sampled"] is True
    assert abs(x["std"] - 0.02) < 1e-3 and x["within_1sd"] > 0.64  # the task's distribution, at a holdable size
    assert ones["shape"] == [393216] and ones["std"] == 0.0 and ones["sampled"] is False
    assert grown_mb < 500 and time.monotonic() - start < 20


def _desc(inputs: list[dict[str, Any]], params: list[str], formula: str | None = None,
          dynamic: list[str] | None = None) -> dict[str, Any]:
    return {"formula": formula, "dynamic_axis": dynamic or [], "forward_params": [
        {"name": n, "kind": "POSITIONAL_OR_KEYWORD"} for n in params], "init": [], "inputs": inputs,
        "parameters": [], "buffers": [], "dropout": []}


def _normal(shape: list[int], **extra: Any) -> dict[str, Any]:
    return {"kind": "tensor", "shape": shape, "dtype": "float32", "integer": False, "min": -3.0, "max": 3.0,
            "mean": 0.0, "std": 1.0, "finite": True, "within_1sd": 0.68, "distinct": None, **extra}


def test_a_large_fixed_size_task_is_refused_before_any_child_builds_its_inputs(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """No dynamic axis and 1.6 G elements: the refusal came only after the trace child had drawn them in float64.

    Since session 39 a hintless task whose forward inputs share a leading (batch) axis gets that axis as dynamic
    (round 5: a single 4096 x 393216 input imports with B shrunk); since session 42 (round 8) inputs with different
    leading sizes (a matmul's M and K) get every axis longer than 64 as dynamic, so this pair's first child traces it
    at 64 / 77, never at its own sizes. A hint that leaves the large axes fixed is refused before any child, as here
    before."""
    requests: list[dict[str, Any]] = []

    def no_child(request: dict[str, Any], *_: Any, **__: Any) -> dict[str, Any]:
        requests.append(request)
        raise AssertionError("a child process was started")

    monkeypatch.setattr(_importer, "_probe", no_child)
    report = TaskImport(task="23_Softmax.py", op_name="softmax")
    desc = _desc([_normal([4096, 393216], sampled=True), _normal([393216, 64])], ["x", "w"])
    plan = _importer._plan_inputs(desc, report)
    assert plan.dynamic == ["D0", "D1"]
    with pytest.raises(AssertionError, match="a child process was started"):
        _importer._random_path(Path(tmp_path / "t.py"), "", desc, plan, report, tmp_path / "out", [], 5.0, 5.0)
    shapes = [i["shape"] for case in requests[0]["cases"] for i in case["inputs"]]
    assert shapes == [[64, 64], [64, 64], [77, 79], [79, 64]]
    assert any("cut down" in n for n in report.notes)  # the sampled statistics are said in IMPORT.md
    hinted = _desc([_normal([4096, 393216], sampled=True), _normal([393216, 64])], ["x", "w"],
                   "y[b, n] = x[b, k] @ w[k, n]", ["N"])
    report = TaskImport(task="23_Softmax.py", op_name="softmax")
    plan = _importer._plan_inputs(hinted, report)
    # since round 9 (s43) the line names the input none of whose axes the hint makes dynamic, not the dynamic axis
    with pytest.raises(TaskImportError, match=r"^x, an input of forward none of whose axes is in DYNAMIC_AXIS holds "
                                              r"1,610,612,736 elements \(B=4096 x K=393216\)"):
        _importer._random_path(Path(tmp_path / "t.py"), "", hinted, plan, report, tmp_path / "out", [], 5.0, 5.0)
    assert len(requests) == 1


def test_python_numbers_in_get_inputs_are_constants_of_the_op() -> None:
    """``return [x, gamma, 1e-6]`` was refused (``only tensors can be kernel inputs``); eps is part of the op."""
    report = TaskImport(task="9_rms.py", op_name="rms")
    desc = _desc([_normal([4, 64, 128]), _normal([128]), {"kind": "scalar", "value": 1e-6, "type": "float"},
                  {"kind": "scalar", "value": [1, 2], "type": "list"}], ["x", "gamma", "eps", "dims"],
                 "y[b, s, h] = x[b, s, h] * gamma[h]", ["B"])
    plan = _importer._plan_inputs(desc, report)
    assert [t["name"] for t in plan.inputs] == ["x", "gamma"] and plan.consts == {2: 1e-6, 3: [1, 2]}
    assert plan.dynamic == ["B"] and any("eps = 1e-06" in n for n in report.notes)
    request = _importer._trace_request(Path("t.py"), plan, _importer._p0(plan))
    assert [i.get("value") for i in request["cases"][0]["inputs"]][2:] == [1e-6, [1, 2]]
    _importer._value_specs(plan, report)
    golden = _importer._golden_text(Path("t.py"), "", plan, [], 2)
    assert "def golden(x, gamma):" in golden
    assert "(_pto_forge_tensor(x, None), _pto_forge_tensor(gamma, None), 1e-06, [1, 2])" in golden


def test_a_non_number_input_is_still_refused_in_one_line() -> None:
    desc = _desc([_normal([4, 4]), {"kind": "other", "type": "object", "repr": "<object>"}], ["x", "cfg"])
    with pytest.raises(TaskImportError, match="'cfg' is a object"):
        _importer._plan_inputs(desc, TaskImport(task="t.py", op_name="t"))


def test_dynamic_axis_given_as_one_string_is_names_not_letters() -> None:
    assert _probe._dynamic_axis("SEQ") == ["SEQ"]
    assert _probe._dynamic_axis("B, S") == ["B", "S"]
    assert _probe._dynamic_axis(("M",)) == ["M"]
    assert _probe._dynamic_axis(None) == [] and _probe._dynamic_axis(3) == []


@needs_torch
def test_cuda_calls_run_on_the_cpu_in_the_probe_and_in_golden(tmp_path: Path, torch_restored: Any) -> None:
    torch = torch_restored
    text = HUGE.replace("batch_size = 4096", "batch_size = 4").replace("dim = 393216", "dim = 8").replace(
        "return [x, torch.ones(dim)]", "return [x.cuda(), torch.ones(dim).cuda()]").replace(
        "def forward(self, x):", "def forward(self, x, w):").replace("torch.sigmoid(x)", "torch.sigmoid(x).cuda() * w")
    d = _probe.describe(_task(tmp_path, text))
    assert [i["shape"] for i in d["inputs"]] == [[4, 8], [8]]
    plan = _importer._plan_inputs(d, TaskImport(task="t.py", op_name="t"))
    _importer._value_specs(plan, TaskImport(task="t.py", op_name="t"))
    golden = _importer._golden_text(Path("t.py"), text, plan, [], 2)
    assert golden.index(_probe.CPU_ONLY) < golden.index("class Model")
    scope: dict[str, Any] = {}
    exec(compile(golden, "golden.py", "exec"), scope)  # noqa: S102 - our own synthetic task
    np = pytest.importorskip("numpy")
    out = scope["golden"](np.zeros((4, 8), np.float32), np.ones(8, np.float32))
    assert torch.allclose(out, torch.full((4, 8), 0.5))


@needs_torch
def test_matrix_structure_of_an_input_is_said_in_the_spec(torch_restored: Any) -> None:
    """13_Matmul_for_symmetric_matrices: the op dir draws general matrices, so SPEC.md must not let a kernel
    assume symmetry (it would fail every case without knowing why)."""
    torch = torch_restored
    a = torch.randn(6, 6)
    assert _probe._tensor((a + a.T) / 2)["structure"] == "symmetric"
    assert _probe._tensor(torch.triu(a))["structure"] == "upper triangular"
    assert _probe._tensor(torch.diag(torch.randn(6)))["structure"] == "diagonal"
    assert _probe._tensor(a)["structure"] is None and "structure" not in _probe._tensor(torch.ones(6, 6))
    report = TaskImport(task="13_sym.py", op_name="sym")
    _importer._value_spec("input A", _normal([6, 6], structure="symmetric"), report)
    spec = _importer._spec_text(Path("13_sym.py"), report, {"op_name": "sym"}, _desc([], []))
    assert "input A is symmetric in get_inputs(); the op dir draws it without that structure" in spec
    assert report.unmapped == report.unstructured


def test_level1_activations_norms_and_losses_have_routes() -> None:
    for op in ("hardsigmoid", "softsign", "norm", "flip", "diag", "triplet_margin_loss", "hardswish", "relu6"):
        assert classify(op)[0] == "route", op


@needs_torch  # the probe itself needs torch: without it, torch is the package it names
def test_a_missing_package_is_named_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A level4 task imports transformers; the line said only ModuleNotFoundError."""
    task = _task(tmp_path, "import torch\nimport not_a_package_s37\nclass Model:\n    pass\n"
                           "def get_inputs():\n    return []\n")
    r, w = os.pipe()
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps({"mode": "describe", "task": task})))
    _probe.main(["_probe.py", str(w)])
    with os.fdopen(r) as fh:
        answer = json.loads(fh.read())
    assert not answer["ok"]
    assert answer["error"].startswith("it imports not_a_package_s37, which is not installed in the importing Python")
    assert "(line 2: import not_a_package_s37)" in answer["error"]



def test_a_bf16_output_of_an_fp32_case_is_compared_at_bf16_tolerance() -> None:
    """A W8A8 matmul whose float inputs are fp32 scales returns bf16: the case's fp32 1e-4 failed a correct kernel
    one bf16 rounding step away."""
    report = TaskImport(task="18_quant.py", op_name="quant")
    assert _importer._case_tolerance("fp32", ["bf16"], report) == _importer.TOLERANCE["bf16"]
    assert "compared at bf16's tolerance" in report.notes[0]
    quiet = TaskImport(task="t.py", op_name="t")
    assert _importer._case_tolerance("fp32", ["fp32", "int32"], quiet) == _importer.TOLERANCE["fp32"]
    assert _importer._case_tolerance("bf16", ["fp32"], quiet) == _importer.TOLERANCE["bf16"] and not quiet.notes


def test_output_names_follow_the_return_order_not_the_formula_order() -> None:
    """``x = x1 + x2; y = norm(x) * gamma`` with ``return y, x``: SPEC.md called output 0 x."""
    report = TaskImport(task="5_add_rms_norm.py", op_name="add_rms_norm")
    assert _importer._output_names(["x", "y"], ["y", "x"], report) == ["y", "x"]
    assert _importer._output_names(["dx", "db"], ["dx", "db"], report) == ["dx", "db"]
    assert _importer._output_names(["w_new", "m_new"], ["w_new_f32", "m_new"], report) == ["w_new", "m_new"]
    assert _importer._output_names(["a", "b"], None, report) == ["a", "b"]
    assert _importer._output_names(["a", "b", "c"], ["b", "a", None], report) == []  # unsure: out0, out1, ...
    assert "the order is not certain" in report.unmapped[-1]


@needs_torch
def test_return_names_read_variables_not_modules(tmp_path: Path, torch_restored: Any) -> None:
    text = ("import torch\nimport torch.nn.functional as F\nclass Model(torch.nn.Module):\n"
            "    def forward(self, x):\n        y = x * 2\n        return y.to(torch.float16).float(), torch.cat([x]), "
            "F.relu(x), x.T, self.w\n\ndef get_inputs():\n    return [torch.randn(2, 2)]\n")
    mod = _probe._load(_task(tmp_path, text))
    assert _probe._return_names(mod.Model()) == ["y", None, None, "x", None]


@needs_torch
def test_init_inputs_given_as_a_dict_are_keyword_arguments(tmp_path: Path, torch_restored: Any) -> None:
    """``get_init_inputs()`` returning ``{"scale": 3.0}``: ``Model(*dict)`` handed the model the key "scale"."""
    text = ("import torch\nclass Model(torch.nn.Module):\n    def __init__(self, scale=2.0, bias=0.5):\n"
            "        super().__init__()\n        self.scale, self.bias = scale, bias\n"
            "    def forward(self, x):\n        return x * self.scale + self.bias\n\n"
            "def get_inputs():\n    return [torch.randn(4, 8)]\n\n"
            "def get_init_inputs():\n    return {'scale': 3.0, 'bias': 1.0}\n")
    d = _probe.describe(_task(tmp_path, text))
    assert [(v["name"], v["value"]) for v in d["init"]] == [("scale", 3.0), ("bias", 1.0)]
    report = TaskImport(task="t.py", op_name="t")
    plan = _importer._plan_inputs(d, report)
    _importer._value_specs(plan, report)
    assert "with get_init_inputs() = dict(scale=3.0, bias=1.0)" in _importer._spec_text(Path("t.py"), report, {}, d)
    scope: dict[str, Any] = {}
    exec(compile(_importer._golden_text(Path("t.py"), text, plan, [], 1), "golden.py", "exec"), scope)  # noqa: S102
    np = pytest.importorskip("numpy")
    assert float(scope["golden"](np.ones((4, 8), np.float32))[0, 0]) == 4.0


def test_indices_picked_by_topk_or_argmax_leave_ties_unspecified() -> None:
    """MoE gating returns topk ids (int32): tied special cases held a correct kernel to torch's tie-break."""
    topk = [{"op": "softmax"}, {"op": "topk"}, {"op": "to"}]
    assert _importer._picks_among_ties(topk, ["float32", "int32"])
    assert _importer._picks_among_ties([{"op": "argmax"}], ["int64"])
    assert not _importer._picks_among_ties(topk, ["float32"])  # values only: ties give the same values
    assert not _importer._picks_among_ties([{"op": "cumsum"}], ["int64"])


@pytest.mark.slow  # the import runs the task in child processes and intake's golden on every case
@needs_torch
def test_a_messy_task_imports_end_to_end(tmp_path: Path) -> None:
    """.cuda() inputs, a Python eps among them, a dict of init arguments, a bf16 output of fp32 inputs, outputs
    returned in another order than FORMULA's statements: all four were refused or mis-specified before."""
    from orchestrator.adapters.kernelbench import import_task

    task = _task(tmp_path, (
        "import torch\nimport torch.nn as nn\n\nFORMULA = 's[b, d] = x[b, d] * scale; y[b, d] = s[b, d] / (|s| + eps)'\n"
        "DYNAMIC_AXIS = 'B'\n\nclass Model(nn.Module):\n    def __init__(self, scale=1.0):\n        super().__init__()\n"
        "        self.scale = scale\n    def forward(self, x, eps):\n        s = x * self.scale\n"
        "        y = s / (s.abs() + eps)\n        return y.to(torch.bfloat16), s\n\n"
        "def get_inputs():\n    return [torch.randn(96, 40).cuda(), 0.5]\n\n"
        "def get_init_inputs():\n    return {'scale': 2.0}\n"), "5_Scaled_softsign.py")
    report = import_task(task, tmp_path / "op")
    spec = (tmp_path / "op" / "SPEC.md").read_text()
    assert "- {name: x, shape: [B, D], dtype: T" in spec and "eps" not in spec.split("---")[1]
    assert "- {name: y, shape: [B, 40], dtype: bf16}\n  - {name: s, shape: [B, 40], dtype: T}" in spec
    assert "fp32: {atol: 0.01, rtol: 0.01}" in spec and report.dynamic_axes == ["B"]


def test_the_cuda_shim_goes_after_the_future_imports() -> None:
    source = ('#!/usr/bin/env python3\n"""A task."""\n\nfrom __future__ import annotations\n\nimport torch\n\n'
              "class Model(torch.nn.Module):\n    pass\n")
    text = _importer._with_cpu_only(source)
    compile(text, "golden.py", "exec")  # a statement before `from __future__` is a SyntaxError
    assert text.index("from __future__") < text.index(_probe.CPU_ONLY) < text.index("import torch\n\nclass")
    assert _importer._with_cpu_only("import torch\n").startswith(_probe.CPU_ONLY)
