"""KernelBench task import, twelfth round (session 46): sliding windows of every kind have a route, and a hintless
task whose one-dim-per-size plan cannot name a window's output size is planned with its batch axis.

Round 11's 53 task files of our own (KernelBench's format at its public repository's sizes) imported 29 of 53. Of
the 24 refused, 11 called a window op: convolutions (1D, 3D, depthwise, transposed, a Conv2d chain, a ResNet basic
block) and overlapping or padded pooling (max 1D-3D, avg 3D), refused by name ("pypto.conv is experimental and not
emulated", "pooling windows: no PyPTO op"), or, for avg 2D, as too large. Convolutions and pooling are the largest
family of the public benchmark (level1 50-87 and 41-46, most of level2, the CNNs of level3).

- **Windows that do not tile had no route.** A convolution is a sum over its kernel's taps of a matmul: per tap a
  view of the input at the tap's offset (a stride: a reshape of the view and a view of its first column; dilation:
  the offset times it; padding: a concat with zeros), a permute / reshape to ``[positions, C_in / groups]`` and a
  matmul with the weight's tap, per group; a transposed one spreads each tap's matmul to every stride-th position
  (a concat with zeros and a reshape) and adds it at the tap's offset; a max / avg pool is a maximum / sum over the
  window's taps (padding with -inf / zeros); an adaptive pool a view per output position; ``unfold`` a concat of
  the taps. Every piece is an op the emulator implements (``pypto.view`` with offsets, ``reshape``, ``permute``,
  ``concat``, ``matmul``, ``add``, ``maximum``), so these are routes (``_ops.WINDOW_ROUTES``); windows that tile
  keep round 4 / 11's shorter ones. Recurrent cells, resampling and FFTs are still refused.
- **One dim per size could not name a window's output.** Without a hint, when a task's inputs fit but what it
  builds does not, round 8 makes every input axis longer than 64 dynamic, one dim per size. A convolution without
  padding maps 224 to 222 and a strided pooling 128 to 62: the output axis follows no dim, a SPEC shape cannot
  say ``D0 - 2``, and the op dir fell back to the task's sizes, too large, and was refused. Such a plan (and one
  that does not run resized, the mirror of round 11's second plan) is now planned again with round 5's leading
  batch axis alone (``_second_plan``, ``_leading_batch(batch=True)``); and when no axis is longer than 64
  (``conv_standard_3D``: 16 x 3 x 64^3 in, 16 x 64 x 62^3 out), the batch axis is taken at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kb_tasks import needs_torch, spec_of, write_task

from orchestrator.adapters.kernelbench import TaskImport, TaskImportError, _importer, _probe, import_task
from orchestrator.adapters.kernelbench._ops import NO_EQUIVALENT, WINDOW_ROUTES, classify


def _desc(inputs: list[list[int]], params: list[str], peak: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"formula": None, "dynamic_axis": [], "forward_params": [
        {"name": n, "kind": "POSITIONAL_OR_KEYWORD"} for n in params], "init": [],
        "inputs": [{"kind": "tensor", "shape": s, "dtype": "float32", "integer": False, "min": 0.0, "max": 1.0,
                    "mean": 0.5, "std": 0.29, "finite": True, "within_1sd": 0.58, "distinct": None} for s in inputs],
        "parameters": [], "buffers": [], "dropout": [], "constants": {}, "peak": peak}


def _report() -> TaskImport:
    return TaskImport(task="t.py", op_name="t")


WINDOW_OPS = [*(f"conv{n}d" for n in (1, 2, 3)), *(f"conv_transpose{n}d" for n in (1, 2, 3)),
              *(f"{k}_pool{n}d" for k in ("max", "avg") for n in (1, 2, 3)), "max_pool2d_with_indices",
              *(f"adaptive_{k}_pool{n}d" for k in ("max", "avg") for n in (1, 2, 3)), "unfold"]


def test_every_sliding_window_call_has_a_route_and_the_rest_stay_refused() -> None:
    for op in WINDOW_OPS:
        kind, route = classify(op)
        assert kind == "route" and op not in NO_EQUIVALENT, op
        assert "pypto." in route and ("taps" in route or "window" in route), op
    assert "pypto.matmul" in classify("conv2d")[1] and "groups" in classify("conv2d")[1]
    assert "every stride-th output position" in classify("conv_transpose3d")[1]
    assert "pypto.maximum" in classify("max_pool3d")[1] and "-inf" in classify("max_pool3d")[1]
    assert "count_include_pad" in classify("avg_pool2d")[1]
    assert "floor(i * L / out)" in classify("adaptive_avg_pool2d")[1]
    for op, why in [("lstm", "recurrent cell"), ("gru", "recurrent cell"), ("interpolate", "resampling"),
                    ("fft_fft", "FFT"), ("col2im", "sliding windows (F.fold)"), ("randn", "random")]:
        assert classify(op) == ("none", NO_EQUIVALENT[op]) and why in NO_EQUIVALENT[op], op
    # every route a window op names is an op the emulator implements
    from runtime.emulator import OPS

    for _, route in WINDOW_ROUTES:
        named = {w.split("(")[0].rstrip(",;:)") for w in route.replace("/", " ").split() if w.startswith("pypto.")}
        assert named and all(n.removeprefix("pypto.") in OPS or n == "pypto.conv" for n in named), named


def test_overlapping_windows_are_not_refused_and_name_their_route() -> None:
    _importer._refuse_no_route({"elements": 1, "op": "", "outputs": [[1]],
                                "ops": {"conv3d": False, "max_pool1d": False, "conv_transpose2d": False}})
    with pytest.raises(TaskImportError, match="^forward calls torch lstm: recurrent cell"):
        _importer._refuse_no_route({"elements": 1, "op": "", "outputs": [], "ops": {"conv2d": False, "lstm": False},
                                    "stopped": "lstm"})
    calls = [{"op": "conv2d", "in": [[1, 3, 224, 224]], "out": [[1, 64, 224, 224]], "tiled": False},
             {"op": "max_pool2d", "in": [[1, 64, 224, 224]], "out": [[1, 64, 112, 112]], "tiled": False},
             {"op": "conv2d", "in": [[1, 3, 224, 224]], "out": [[1, 64, 56, 56]], "tiled": True}]
    rows = [row for row, _ in _importer._inventory(calls, _report())]
    assert rows[0].startswith("conv2d (PyPTO: a sum over the kernel's taps")
    assert rows[1].startswith("max_pool2d (PyPTO: a running pypto.maximum over the window's taps")
    assert rows[2].startswith("conv2d (PyPTO: pypto.reshape of the input into its windows")  # round 11's, kept


@needs_torch
def test_the_meta_run_does_not_stop_at_a_convolution(torch_restored: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The importer's meta run stops at a call of ``NO_EQUIVALENT`` (round 8); a ResNet stem now runs through."""
    del torch_restored
    monkeypatch.setattr(_probe, "STOP", set(NO_EQUIVALENT))
    task = write_task(tmp_path, STEM, "stem.py")
    peak = _probe.meta_peak(_probe._load(str(task)), [{"kind": "tensor", "shape": [10, 3, 224, 224],
                                                       "dtype": "float32"}])
    assert peak is not None and "stopped" not in peak and peak["outputs"] == [[10, 64, 56, 56]]
    assert peak["ops"]["conv2d"] is False and peak["ops"]["max_pool2d"] is False  # not tiled: the taps' route
    assert peak["macs"] == 10 * 64 * 112 * 112 * 3 * 7 * 7


STEM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

    def forward(self, x):
        return self.maxpool(torch.relu(self.bn1(self.conv1(x))))


def get_inputs():
    return [torch.rand(10, 3, 224, 224)]


def get_init_inputs():
    return []
"""


CONV3D_OUT = {"elements": 16 * 64 * 62 ** 3, "op": "conv3d", "outputs": [[16, 64, 62, 62, 62]],
              "ops": {"conv3d": False}, "macs": 16 * 64 * 62 ** 3 * 81}
"""``conv_standard_3D__square_input__square_kernel``: 16 x 3 x 64^3 in, no axis over 64, 244 M elements out."""
CONV2D_OUT = {"elements": 10 * 64 * 222 * 222, "op": "conv2d", "outputs": [[10, 64, 222, 222]],
              "ops": {"conv2d": False}, "macs": 10 * 64 * 222 * 222 * 27}
"""A 3 x 3 convolution without padding over 10 x 3 x 224 x 224: 31.5 M elements out, over the 2^24 output bound."""


def test_no_axis_over_64_and_too_large_a_build_takes_the_batch_axis() -> None:
    report = _report()
    plan = _importer._plan_inputs(_desc([[16, 3, 64, 64, 64]], ["x"], CONV3D_OUT), report)
    assert plan.guess == "leading" and plan.dynamic == ["B"] and plan.inputs[0]["shape"] == ["B", 3, 64, 64, 64]
    assert "forward would build an output of 244,047,872 elements" in report.unmapped[-1]
    assert _importer._p0(plan) == [{"B": 1}]  # one batch row builds 15.7 M elements, under the 2^24 bound
    # a build that fits stays at the task's sizes, as before
    small = {**CONV3D_OUT, "elements": 1 << 20, "outputs": [[16, 64, 4, 4, 4]], "macs": 1 << 20}
    assert _importer._plan_inputs(_desc([[16, 3, 6, 6, 6]], ["x"], small), _report()).dynamic == []


def test_batch_only_plans_the_leading_axis_where_one_dim_per_size_would_be_first() -> None:
    plan = _importer._plan_inputs(_desc([[10, 3, 224, 224]], ["x"], CONV2D_OUT), _report())
    assert plan.guess == "sized" and plan.dynamic == ["D0"] and plan.inputs[0]["shape"] == [10, 3, "D0", "D0"]
    plan = _importer._plan_inputs(_desc([[10, 3, 224, 224]], ["x"], CONV2D_OUT), _report(), batch_only=True)
    assert plan.guess == "leading" and plan.dynamic == ["B"] and plan.inputs[0]["shape"] == ["B", 3, 224, 224]
    # a batch row over the input bound alone: no batch plan (one dim per size or nothing)
    huge = _desc([[16, 32, 128, 128, 128]], ["x"], {**CONV3D_OUT, "outputs": [[16, 32, 62, 62, 62]]})
    assert _importer._plan_inputs(huge, _report(), batch_only=True).dynamic == []


def test_an_output_axis_that_follows_no_dim_is_planned_again_with_the_batch(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """One dim per size gave D0 = 64 / 77 and outputs of 62 / 75 (a 3 x 3 convolution without padding): before,
    the op dir fell back to 10 x 3 x 224 x 224 and was refused as too large. No child process runs here."""
    requests: list[dict[str, Any]] = []

    def child(request: dict[str, Any], *_: Any, **__: Any) -> dict[str, Any]:
        requests.append(request)
        if len(requests) == 1:
            outs = [[{"kind": "tensor", "shape": [10, 64, s - 2, s - 2], "dtype": "float32"}]
                    for s in (c["inputs"][0]["shape"][2] for c in request["cases"])]
            return {"cases": [{"outputs": o, "calls": []} for o in outs]}
        raise AssertionError("second trace")

    monkeypatch.setattr(_importer, "_probe", child)
    desc = _desc([[10, 3, 224, 224]], ["x"], CONV2D_OUT)
    report = _report()
    plan = _importer._plan_inputs(desc, report)
    with pytest.raises(AssertionError, match="second trace"):
        _importer._random_path(tmp_path / "t.py", "", desc, plan, report, tmp_path / "out", [], 5.0, 5.0)
    first = [[i["shape"] for i in case["inputs"]] for case in requests[0]["cases"]]
    second = [[i["shape"] for i in case["inputs"]] for case in requests[1]["cases"]]
    assert first == [[[10, 3, 64, 64]], [[10, 3, 77, 77]]]
    assert all(s[0][1:] == [3, 224, 224] for s in second) and second[0][0][0] < 10


def test_a_sized_plan_that_does_not_run_is_planned_again_with_the_batch(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The mirror of round 11's second plan (HingeLoss): one dim per size first, the batch axis when it fails."""
    requests: list[dict[str, Any]] = []

    def child(request: dict[str, Any], *_: Any, **__: Any) -> dict[str, Any]:
        requests.append(request)
        if len(requests) == 1:
            raise TaskImportError("the task fails when run: RuntimeError: Given input size: (3x64x64). "
                                  "Calculated output size: (3x0x0). Output size is too small")
        raise AssertionError("second trace")

    monkeypatch.setattr(_importer, "_probe", child)
    desc = _desc([[10, 3, 224, 224]], ["x"], CONV2D_OUT)
    report = _report()
    plan = _importer._plan_inputs(desc, report)
    with pytest.raises(AssertionError, match="second trace"):
        _importer._random_path(tmp_path / "t.py", "", desc, plan, report, tmp_path / "out", [], 5.0, 5.0)
    assert requests[1]["cases"][0]["inputs"][0]["shape"][1:] == [3, 224, 224]


CONV3D = """import torch
import torch.nn as nn

class Model(nn.Module):
    \"\"\"
    Performs a standard 3D convolution operation with square input and square kernel.
    \"\"\"
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, (kernel_size, kernel_size, kernel_size), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv3d(x)

# Test code
batch_size = 16
in_channels = 3
out_channels = 64
kernel_size = 3
depth = 64
width = 64
height = 64

def get_inputs():
    x = torch.rand(batch_size, in_channels, depth, width, height)
    return [x]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size]  # Provide in_channels, out_channels, kernel_size for initialization
"""

MAX_POOL_2D = """import torch
import torch.nn as nn

class Model(nn.Module):
    \"\"\"
    Simple model that performs Max Pooling 2D.
    \"\"\"
    def __init__(self, kernel_size: int, stride: int, padding: int, dilation: int):
        super(Model, self).__init__()
        self.maxpool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool(x)

batch_size = 32
channels = 32
height = 256
width = 256
kernel_size = 4
stride = 1
padding = 1
dilation = 1

def get_inputs():
    x = torch.rand(batch_size, channels, height, width)
    return [x]

def get_init_inputs():
    return [kernel_size, stride, padding, dilation]
"""


def _golden_equals_the_model(dest: Path, text: str, tmp_path: Path) -> None:
    """Every case's golden output is the task's own model run on the case's inputs (golden.py runs it unchanged)."""
    import numpy as np
    import torch

    from runtime.opdir import load_op_dir, run_golden

    op = load_op_dir(dest)
    task = write_task(tmp_path, text, "again.py")
    mod = _probe._load(str(task))
    for case in op.cases():
        run = run_golden(op, case)
        torch.manual_seed(0)
        model = mod.Model(*mod.get_init_inputs())
        names = [p["name"] for p in op.spec.model_dump()["inputs"]]
        state = {n.replace(".", "_"): n for n in model.state_dict()}
        with torch.no_grad():
            for i, name in enumerate(names[1:], start=1):
                model.get_parameter(state[name]).copy_(torch.from_numpy(run.inputs[i].copy()))
            want = model(torch.from_numpy(run.inputs[0].copy())).numpy()
        got = next(iter(run.outputs.values()))
        assert got.shape == want.shape and np.allclose(got, want, atol=1e-5, rtol=1e-5), case.name


@pytest.mark.slow  # each import runs the task in child processes and intake's golden on every case (40-60 s)
@needs_torch
@pytest.mark.parametrize(("text", "name", "shape", "route"), [
    (CONV3D, "54_conv_standard_3D__square_input__square_kernel.py", ["B", 3, 64, 64, 64],
     "conv3d (PyPTO: a sum over the kernel's taps"),
    (MAX_POOL_2D, "42_Max_Pooling_2D.py", ["B", 32, 256, 256], "max_pool2d (PyPTO: a running pypto.maximum"),
])
def test_overlapping_windows_import_with_the_batch_dynamic(tmp_path: Path, text: str, name: str, shape: list[Any],
                                                           route: str) -> None:
    dest = tmp_path / "op"
    rep = import_task(write_task(tmp_path, text, name), dest)
    assert rep.dynamic_axes == ["B"] and spec_of(dest)["inputs"][0]["shape"] == shape
    assert route in (dest / "golden.py").read_text(encoding="utf-8")
    _golden_equals_the_model(dest, text, tmp_path)


CONV2D_NO_PADDING = """import torch
import torch.nn as nn


class Model(nn.Module):
    \"\"\"A 3 x 3 convolution without padding, then a ReLU: 224 -> 222, no dim of a SPEC follows it.\"\"\"
    def __init__(self, in_channels, out_channels, kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.relu(self.conv(x))


batch_size = 10
in_channels = 3
out_channels = 64
height = width = 224
kernel_size = 3


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
"""


@pytest.mark.slow
@needs_torch
def test_a_convolution_without_padding_is_planned_again_with_its_batch(tmp_path: Path) -> None:
    """10 x 3 x 224 x 224 in, 10 x 64 x 222 x 222 out (31.5 M elements): one dim per size gave D0 = 64 / 77 and
    outputs of 62 / 75, which no dim follows; the batch axis runs (before: refused as too large)."""
    dest = tmp_path / "op"
    rep = import_task(write_task(tmp_path, CONV2D_NO_PADDING, "3_Conv2d_no_padding.py"), dest)
    assert rep.dynamic_axes == ["B"] and spec_of(dest)["inputs"][0]["shape"] == ["B", 3, 224, 224]
    assert rep.unmapped[0].startswith("one dim per size (D0) gave output 0 axis 2 is 62, 75 over the cases")
    assert rep.unmapped[0].endswith("planned with the leading axis alone")
    _golden_equals_the_model(dest, CONV2D_NO_PADDING, tmp_path)
