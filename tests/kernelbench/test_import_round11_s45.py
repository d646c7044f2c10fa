"""KernelBench task import, eleventh round (session 45): the hint letter FORMULA does not use, a compute budget, and
a second plan when the leading-axis guess does not run.

- **A DYNAMIC_AXIS letter that FORMULA does not use was dropped.** ``DYNAMIC_AXIS = ["N"]`` beside ``C[i, j] = sum_k
  A[i, k] * B[k, j]`` (lower / upper triangular and symmetric products): the import kept 4096 x 4096 x 4096 in
  every case (130 s to import, 6.9e10 multiply-adds a case for the emulator). Such a letter is now read as a module
  constant of its name (``N = 4096``: every forward-input axis of that size is the dim ``N``) or, when no hinted
  letter found an axis, as every input axis longer than 64, one dim per size (``_importer._lost_axes``).
- **No compute budget.** Without a hint, a task was "too large" only by elements; a 4096^3 product builds nothing
  over the bounds. ``_probe.meta_peak`` now counts the multiply-adds (torch's ``FlopCounterMode`` on the meta run)
  and more than ``MAX_MACS`` (2^32) is too large too (``_importer._too_large``).
- **The leading-axis guess had no fallback.** KernelBench's ``HingeLoss`` multiplies ``[32768, 32768]`` by
  ``[32768]`` (broadcast over the last axis): ``[B, 32768] * [B]`` does not run and the task was refused; the square
  hintless product ``A[B, 4096] @ B[B, 4096]`` neither. ``_importer._second_plan`` plans again without the guess
  (one dim per size, ``_sized_axes``) before keeping the task's own sizes.
- **Convolutions and ``unfold`` whose windows tile the input had no route.** A 1 x 1 convolution
  (``conv_pointwise_2D``) is a matmul over the channels, a stride = kernel one (a patch embedding) a reshape and a
  matmul, ViT's ``img.unfold(2, p, p).unfold(3, p, p)`` a view; like pooling since round 4, they have a route when
  their windows tile the input (``_probe._windowed``); overlapping, padded, dilated or grouped ones still do not.
- **A huge parameter was built before anything was checked.** A VGG-style classifier (``nn.Linear(128 * 56 * 56,
  4096)``, 1.6 G elements) was allocated in ``describe``; on the loaded machine that failed after 196 s with "can't
  allocate memory". ``describe`` first builds the model on the meta device (``_probe._huge_parameter``) and the
  import refuses, in one line that names the parameter, one over 2^26 elements (the input budget is 2^24).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kb_tasks import needs_torch, spec_of, write_task

from orchestrator.adapters.kernelbench import TaskImport, TaskImportError, _importer, _probe, import_task


def _desc(inputs: list[list[int]], params: list[str], formula: str | None = None, dynamic: list[str] | None = None,
          constants: dict[str, int] | None = None, peak: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"formula": formula, "dynamic_axis": dynamic or [], "forward_params": [
        {"name": n, "kind": "POSITIONAL_OR_KEYWORD"} for n in params], "init": [],
        "inputs": [{"kind": "tensor", "shape": s, "dtype": "float32", "integer": False, "min": -3.0, "max": 3.0,
                    "mean": 0.0, "std": 1.0, "finite": True, "within_1sd": 0.68, "distinct": None} for s in inputs],
        "parameters": [], "buffers": [], "dropout": [], "constants": constants or {}, "peak": peak}


def _report() -> TaskImport:
    return TaskImport(task="t.py", op_name="t")


TRIANGULAR = "C[i, j] = sum_k A[i, k] * B[k, j] for i >= j, else 0"
PRODUCT = {"elements": 1 << 24, "op": "matmul", "outputs": [[4096, 4096]], "ops": {}, "macs": 1 << 36}
"""What the meta run finds for a 4096^3 product: nothing over the element bounds, 6.9e10 multiply-adds."""


def test_a_hint_letter_named_by_a_module_constant_is_every_axis_of_its_size() -> None:
    report = _report()
    plan = _importer._plan_inputs(_desc([[4096, 4096], [4096, 4096]], ["A", "B"], TRIANGULAR, ["N"], {"N": 4096}),
                                  report)
    assert plan.dynamic == ["N"] and plan.dims == {"N": 4096}
    assert [t["shape"] for t in plan.inputs] == [["N", "N"], ["N", "N"]]
    assert "constant N = 4096" in report.unmapped[0] and "FORMULA's I, K, J" in report.unmapped[0]
    assert _importer._p0(plan) == [{"N": 64}, {"N": 77}]
    # lower case in the hint, another size beside it: only the axes of the constant's size follow it
    report = _report()
    plan = _importer._plan_inputs(_desc([[2048, 8192], [8192, 4096]], ["A", "B"], "C[m, n] = A[m, k] @ B[k, n]",
                                        ["n2"], {"N2": 4096, "M": 2048}), report)
    assert plan.dynamic == ["N2"] and [t["shape"] for t in plan.inputs] == [["M", "K"], ["K", "N2"]]
    assert plan.dims == {"M": 2048, "K": 8192, "N2": 4096}


def test_a_hint_letter_without_a_constant_makes_every_long_axis_dynamic() -> None:
    """The 15_Matmul_for_lower_triangular_matrices of session 44: ``M = 4096`` in the file, ``N`` in the hint; too
    many multiply-adds to verify as it is. A task that fits keeps its sizes (the real ``22_scatter_nd_sub``: hint
    ``K``, FORMULA's ``I``, a 10000 x 16 target)."""
    report = _report()
    plan = _importer._plan_inputs(_desc([[4096, 4096], [4096, 4096]], ["A", "B"], TRIANGULAR, ["N"], {"M": 4096},
                                        PRODUCT), report)
    assert plan.dynamic == ["N"] and [t["shape"] for t in plan.inputs] == [["N", "N"], ["N", "N"]]
    assert "no module constant of that name" in report.unmapped[0]
    assert not any("not dynamic in the op dir" in u for u in report.unmapped)
    # two sizes: a FORMULA letter alone on its size keeps its name, the hint letter names none of them
    report = _report()
    plan = _importer._plan_inputs(_desc([[2048, 8192], [8192, 4096]], ["A", "B"], "C[i, j] = A[i, k] @ B[k, j]",
                                        ["N"], peak=PRODUCT), report)
    assert plan.dynamic == ["I", "K", "J"] and [t["shape"] for t in plan.inputs] == [["I", "K"], ["K", "J"]]
    small = {"elements": 256 * 16, "op": "sub", "outputs": [[10000, 16]], "ops": {}, "macs": 0}
    report = _report()
    plan = _importer._plan_inputs(_desc([[10000, 16], [256, 1], [256, 16]], ["target", "indices", "updates"],
                                        "out = scatter_nd_sub(target, indices, updates[i, d])", ["K"], peak=small),
                                  report)
    assert plan.dynamic == [] and any("DYNAMIC_AXIS K" in u and "not dynamic" in u for u in report.unmapped)


def test_a_lost_letter_beside_a_found_one_stays_dropped_and_small_axes_stay_fixed() -> None:
    report = _report()
    plan = _importer._plan_inputs(_desc([[4096, 4096], [4096, 4096]], ["A", "B"], "C[m, n] = A[m, k] @ B[k, n]",
                                        ["M", "Q"]), report)
    assert plan.dynamic == ["M"] and any("DYNAMIC_AXIS Q" in u and "not dynamic" in u for u in report.unmapped)
    report = _report()
    plan = _importer._plan_inputs(_desc([[32, 48], [48, 16]], ["A", "B"], TRIANGULAR, ["N"]), report)
    assert plan.dynamic == [] and "not dynamic in the op dir" in report.unmapped[-1]


def test_too_many_multiply_adds_is_too_large_without_a_hint() -> None:
    square = {"elements": 1 << 24, "op": "matmul", "outputs": [[4096, 4096]], "ops": {}, "macs": 1 << 36}
    report = _report()
    plan = _importer._plan_inputs(_desc([[4096, 4096], [4096, 4096]], ["A", "B"], peak=square), report)
    assert plan.guess == "leading" and plan.dynamic == ["B"]  # tried first; _second_plan when it does not run
    assert "68,719,476,736 multiply-adds" in report.unmapped[-1]
    second = _importer._plan_inputs(_desc([[4096, 4096], [4096, 4096]], ["A", "B"], peak=square), _report(),
                                    leading=False)
    assert second.dynamic == ["D0"] and [t["shape"] for t in second.inputs] == [["D0", "D0"], ["D0", "D0"]]
    small = {**square, "macs": 1 << 30}  # a 1024^3 product stays at its size
    plan = _importer._plan_inputs(_desc([[1024, 1024], [1024, 1024]], ["A", "B"], peak=small), _report())
    assert plan.dynamic == []
    # too large a build (a Gram matrix) keeps round 8's one dim per size, whatever the count
    gram = {"elements": 1 << 28, "op": "matmul", "outputs": [[16384, 16384]], "ops": {}, "macs": (1 << 32) + 1}
    plan = _importer._plan_inputs(_desc([[16, 16384]], ["x"], peak=gram), _report())
    assert plan.guess == "sized" and plan.dynamic == ["D0"]  # round 12 names that plan too


def test_the_leading_guess_that_does_not_run_is_planned_again_without_it(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """HingeLoss: predictions [32768, 32768] times targets [32768], no hint. No child process runs here."""
    requests: list[dict[str, Any]] = []

    def child(request: dict[str, Any], *_: Any, **__: Any) -> dict[str, Any]:
        requests.append(request)
        if len(requests) == 1:
            raise TaskImportError("the task fails when run: RuntimeError: The size of tensor a (32768) must match")
        raise AssertionError("second trace")

    monkeypatch.setattr(_importer, "_probe", child)
    desc = _desc([[32768, 32768], [32768]], ["predictions", "targets"])
    report = _report()
    plan = _importer._plan_inputs(desc, report)
    assert plan.guess == "leading"
    with pytest.raises(AssertionError, match="second trace"):
        _importer._random_path(tmp_path / "t.py", "", desc, plan, report, tmp_path / "out", [], 5.0, 5.0)
    shapes = [[i["shape"] for i in case["inputs"]] for case in requests[1]["cases"]]
    assert shapes == [[[64, 64], [64]], [[77, 77], [77]]]


def test_one_dim_per_size_leaves_out_the_sizes_of_the_weights() -> None:
    """KernelBench's ReLUSelfAttention without a hint: x 16 x 1024 x 768 and a 201 M-element score tensor. 768 is the
    embedding every weight is built for: only the sequence is dynamic (before, 768 was too and the model did not
    run resized, so the task was refused at its own sizes)."""
    scores = {"elements": 16 * 12 * 1024 * 1024, "op": "matmul", "outputs": [[16, 1024, 768]], "ops": {},
              "macs": 1 << 35}
    desc = _desc([[16, 1024, 768]], ["x"], peak=scores)
    desc["parameters"] = [{"name": "c_attn.weight", "shape": [2304, 768], "dtype": "float32"},
                          {"name": "c_attn.bias", "shape": [2304], "dtype": "float32"}]
    report = _report()
    plan = _importer._plan_inputs(desc, report)
    assert plan.dynamic == ["D0"] and plan.inputs[0]["shape"] == [16, "D0", 768]
    alone = _desc([[16, 768, 768]], ["x"], peak=scores)  # every long axis has a weight's size: all of them, as before
    alone["parameters"] = desc["parameters"]
    assert _importer._plan_inputs(alone, _report()).inputs[0]["shape"] == [16, "D0", "D0"]


@needs_torch
def test_the_meta_run_counts_multiply_adds(torch_restored: Any, tmp_path: Path) -> None:
    del torch_restored
    task = write_task(tmp_path, "import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, a, b):\n"
                      "        return torch.relu(a @ b)\n", "mm.py")
    mod = _probe._load(str(task))
    shapes = [{"kind": "tensor", "shape": [512, 256], "dtype": "float32"},
              {"kind": "tensor", "shape": [256, 128], "dtype": "float32"}]
    peak = _probe.meta_peak(mod, shapes)
    assert peak is not None and peak["macs"] == 512 * 256 * 128 and peak["outputs"] == [[512, 128]]


@needs_torch
def test_windows_that_tile_the_input_have_a_route(torch_restored: Any) -> None:
    torch = torch_restored
    nn, functional = torch.nn, torch.nn.functional
    x = torch.zeros(2, 64, 30, 32, device="meta")

    def conv(m: Any, inp: Any = x) -> bool:
        return _probe._windowed("conv2d", functional.conv2d, [inp, m.weight, m.bias, m.stride, m.padding,
                                                              m.dilation, m.groups], {})

    with torch.device("meta"):
        assert conv(nn.Conv2d(64, 128, 1)) and conv(nn.Conv2d(64, 8, 1, padding="same"))
        assert conv(nn.Conv2d(64, 8, 4, stride=4))  # 30 rows: 7 windows, the last 2 rows in none (torch drops them)
        assert not conv(nn.Conv2d(64, 8, 3)) and not conv(nn.Conv2d(64, 8, 4, stride=4, padding=1))
        assert not conv(nn.Conv2d(64, 64, 1, groups=64)) and not conv(nn.Conv2d(64, 8, 1, dilation=2, stride=2))
        assert not conv(nn.Conv2d(64, 8, 40, stride=40))  # a kernel longer than the axis
        assert _probe._windowed("conv1d", functional.conv1d, [torch.zeros(2, 4, 9), torch.zeros(3, 4, 1)], {})
    assert _probe._windowed("unfold", torch.Tensor.unfold, [x, 2, 5, 5], {})
    assert not _probe._windowed("unfold", torch.Tensor.unfold, [x, 2, 5, 2], {})
    assert _probe._windowed("unfold", functional.unfold, [x, 2], {"stride": 2})
    assert not _probe._windowed("unfold", functional.unfold, [x, 2], {})
    assert not _probe._windowed("unfold", functional.unfold, [x, 2], {"stride": 2, "padding": 1})
    calls = [{"op": "conv2d", "in": [[2, 64, 8, 8]], "out": [[2, 128, 8, 8]], "tiled": True},
             {"op": "unfold", "in": [[2, 3, 8, 8]], "out": [[2, 3, 2, 8, 4]], "tiled": True}]
    rows = _importer._inventory(calls, _report())
    assert "matmul over the channels" in rows[0][0] and "step = size" in rows[1][0]
    # round 12: other windows have the route over the kernel's taps (test_import_round12_s46.py)
    assert "sum over the kernel's taps" in _importer._inventory([{**calls[0], "tiled": False}], _report())[0][0]


HUGE_CLASSIFIER = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super(Model, self).__init__()
        self.features = nn.Sequential(nn.Flatten(1))
        self.classifier = nn.Sequential(nn.Linear(128 * 56 * 56, 4096), nn.ReLU(inplace=True),
                                        nn.Linear(4096, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def get_inputs():
    return [torch.rand(10, 128, 56, 56)]


def get_init_inputs():
    return [1000]
"""


@needs_torch
def test_a_huge_parameter_is_named_before_the_model_is_built(torch_restored: Any, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    del torch_restored
    mod = _probe._load(str(write_task(tmp_path, HUGE_CLASSIFIER, "11_VGG16.py")))
    found = _probe._huge_parameter(mod)
    assert found == {"name": "classifier.0.weight", "shape": [4096, 401408], "elements": 4096 * 401408}
    small = _probe._load(str(write_task(tmp_path, HUGE_CLASSIFIER.replace("128 * 56 * 56", "128"), "small.py")))
    assert _probe._huge_parameter(small) is None
    monkeypatch.setattr(_importer, "_probe", lambda request, *_: {"huge_parameter": found})
    with pytest.raises(TaskImportError, match=r"^the model's parameter classifier.0.weight \(a kernel must be given "
                                              r"it as an input\) holds 1,644,167,168 elements \(4096 x 401408\)"):
        import_task(tmp_path / "11_VGG16.py", tmp_path / "op")


# ------------------------------------------------------------------------------------------------ end to end

LOWER_TRIANGULAR = '''import torch
import torch.nn as nn

FORMULA = "C[i, j] = sum_k A[i, k] * B[k, j] for i >= j, else 0"
DYNAMIC_AXIS = ["N"]


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))


M = 4096


def get_inputs():
    A = torch.tril(torch.randn(M, M))
    B = torch.tril(torch.randn(M, M))
    return [A, B]


def get_init_inputs():
    return []
'''


@pytest.mark.slow
@needs_torch
def test_lower_triangular_product_imports_with_its_hint_letter(tmp_path: Path) -> None:
    dest = tmp_path / "op"
    rep = import_task(write_task(tmp_path, LOWER_TRIANGULAR, "15_Matmul_for_lower_triangular_matrices.py"), dest)
    assert rep.dynamic_axes == ["N"] and rep.p0_shapes == [{"N": 64}, {"N": 77}]
    spec = spec_of(dest)
    assert [i["shape"] for i in spec["inputs"]] == [["N", "N"], ["N", "N"]]
    assert spec["outputs"][0]["shape"] == ["N", "N"]


SQUARE_NO_HINT = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)

N = 2048 * 2

def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]

def get_init_inputs():
    return []
'''


@pytest.mark.slow
@needs_torch
def test_hintless_square_product_is_shrunk_by_its_multiply_adds(tmp_path: Path) -> None:
    dest = tmp_path / "op"
    rep = import_task(write_task(tmp_path, SQUARE_NO_HINT, "1_Square_matrix_multiplication_.py"), dest)
    assert rep.dynamic_axes == ["D0"] and rep.p0_shapes == [{"D0": 64}, {"D0": 77}]
    assert any("planned without it" in u for u in rep.unmapped)
    assert [i["shape"] for i in spec_of(dest)["inputs"]] == [["D0", "D0"], ["D0", "D0"]]


POINTWISE = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super(Model, self).__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv1d(x)

batch_size = 16
in_channels = 64
out_channels = 128
width = 1024
height = 1024

def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]

def get_init_inputs():
    return [in_channels, out_channels]
"""


@pytest.mark.slow
@needs_torch
def test_pointwise_convolution_imports(tmp_path: Path) -> None:
    dest = tmp_path / "op"
    rep = import_task(write_task(tmp_path, POINTWISE, "87_conv_pointwise_2D.py"), dest)
    assert rep.dynamic_axes == ["D0"]
    assert "matmul over the channels" in (dest / "golden.py").read_text(encoding="utf-8")
