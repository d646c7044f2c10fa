"""KernelBench task import, second audit round (session 37): fixed axes too large for the tail case, a model that
keeps random or changing tensor state, FORMULA / DYNAMIC_AXIS in other forms (a list of statements, a dict, a
multi-line text with comments), recurrent and attention calls, dropout inside attention. Task texts are inline."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters.kernelbench import _importer, _probe
from orchestrator.adapters.kernelbench._formula import formula_outputs
from orchestrator.adapters.kernelbench._importer import TaskImport, TaskImportError
from orchestrator.adapters.kernelbench._ops import classify

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def _plan(shape: list[int | str], dims: dict[str, int], dynamic: list[str]) -> _importer._Plan:
    return _importer._Plan(inputs=[{"name": "x", "source": "forward", "shape": shape}], dims=dims, dynamic=dynamic)


def test_the_tail_case_stays_bounded_when_the_fixed_axes_are_large() -> None:
    """LayerNorm over 64 x 256 x 256 per row: the first case stopped at 8 rows (33 M elements) and the tail took 21
    (88 M, 6 GB in intake); 128 x 4096 x 4095 failed intake with a MemoryError."""
    p0 = _importer._p0(_plan(["B", 64, 256, 256], {"B": 16}, ["B"]))
    assert p0 == [{"B": 1}, {"B": 2}]
    p0 = _importer._p0(_plan(["B", "I", 512, 256], {"B": 8, "I": 256}, ["B", "I"]))
    assert all(max(c.values()) < 64 for c in p0) and p0[0] != p0[1]
    assert max(c["B"] * c["I"] * 512 * 256 for c in p0) <= _importer.MAX_FIXED_ELEMENTS
    assert any(c["B"] % 16 for c in p0)  # a partial tile
    p0 = _importer._p0(_plan(["B", 4096, 4095], {"B": 128}, ["B"]))
    assert p0 == [{"B": 1}]  # no room for a second case: B=1 is itself a partial tile
    _importer._check_fixed_size(_plan(["B", 4096, 4095], {"B": 128}, ["B"]), p0, structured=False)


def test_a_case_too_large_even_at_one_row_is_refused_before_any_child_builds_it() -> None:
    plan = _plan(["B", 8192, 4096], {"B": 128}, ["B"])
    with pytest.raises(TaskImportError, match=r"even with the dynamic axes at their smallest \(B=1\).*33,554,432"):
        _importer._check_fixed_size(plan, _importer._p0(plan), structured=False)


def test_small_tasks_keep_their_p0_shapes() -> None:
    assert _importer._p0(_plan(["B", 16384], {"B": 4096}, ["B"])) == [{"B": 64}, {"B": 77}]
    assert _importer._p0(_plan(["B", 64, 32, 32], {"B": 16}, ["B"])) == [{"B": 16}, {"B": 29}]


def test_formula_and_dynamic_axis_in_other_forms() -> None:
    assert _probe._dynamic_axis({"T": "tokens"}) == ["T"]
    assert _probe._formula(["scale[t] = amax(x[t, :])", "y[t, h] = x[t, h] / scale[t]"]) == \
        "scale[t] = amax(x[t, :]); y[t, h] = x[t, h] / scale[t]"
    assert _probe._formula(3) is None
    text = """
    # q, k: [B, S, N, D]; cos, sin: [S, D]
    q_out[b, s, n, d] = q[b, s, n, d] * cos[s, d]
    k_out[b, s, n, d] = k[b, s, n, d] * cos[s, d]
    """
    assert formula_outputs(text) == ["q_out", "k_out"]
    assert formula_outputs("out[b, j] = prod_{i<=j} x[b, i]") == ["out"]


def test_outputs_are_the_returned_names_when_formula_names_intermediates_too() -> None:
    report = TaskImport(task="t.py", op_name="t")
    assert _importer._output_names(["probs", "weights", "ids"], ["weights", "ids"], report) == ["weights", "ids"]
    assert _importer._output_names(["probs", "weights", "ids"], ["weights", None], report) == \
        ["probs", "weights", "ids"]  # not all named: _write falls back to out0, out1


def test_recurrent_and_attention_calls() -> None:
    assert classify("rnn_tanh")[0] == "none" and "recurrent" in classify("rnn_tanh")[1]
    assert classify("is_nested")[0] == "plumbing"
    assert classify("multi_head_attention_forward")[0] == "route"
    assert _probe._dropout_p("scaled_dot_product_attention", [1, 2, 3], {"dropout_p": 0.1}) == (0.1, True)
    assert _probe._dropout_p("multi_head_attention_forward", list(range(10)) + [0.2, 0, 0, False], {}) == \
        (0.2, False)
    assert _probe._dropout_p("dropout", [1], {"p": 0.5, "training": True}) == (0.5, True)
    report = TaskImport(task="t.py", op_name="t")
    call = {"op": "scaled_dot_product_attention", "in": [], "out": [], "p": 0.1, "training": True}
    with pytest.raises(TaskImportError, match="scaled_dot_product_attention with dropout_p=0.1 in training mode"):
        _importer._inventory([call], report)


STATEFUL = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.hidden = torch.{init}(4, n)
        self.fc = nn.Linear(2 * n, n)

    def forward(self, x):
        self.hidden = torch.tanh(self.fc(torch.cat((x, self.hidden), dim=1)))
        return self.hidden

def get_inputs():
    return [torch.randn(4, 8)]

def get_init_inputs():
    return [8]
"""


@needs_torch
def test_a_model_with_random_or_changing_tensor_state_is_refused(tmp_path: Path, torch_restored: Any) -> None:
    """KernelBench's VanillaRNN keeps ``self.hidden = torch.randn(...)`` (not a parameter: a kernel never sees it)
    and reassigns it in forward: it was imported, and the golden gave another output on every call."""
    random_task = tmp_path / "33_VanillaRNN.py"
    random_task.write_text(STATEFUL.format(init="randn"), encoding="utf-8")
    desc = _probe.describe(str(random_task))
    assert desc["random_attributes"] == ["hidden"]
    zero_task = tmp_path / "34_ZeroStateRNN.py"
    zero_task.write_text(STATEFUL.format(init="zeros"), encoding="utf-8")
    assert _probe.describe(str(zero_task))["random_attributes"] == []
    answer = {"ok": True, **_probe.trace(str(zero_task), [{"seed": 0}])}
    assert answer["state_changed"] == ["hidden"]
    with pytest.raises(TaskImportError, match=r"forward changes self.hidden and reads it on the next call"):
        _importer._checked(answer)
    plain = tmp_path / "35_Plain.py"
    plain.write_text(STATEFUL.replace("self.hidden = torch.tanh", "h = torch.tanh").replace(
        "return self.hidden", "return h").format(init="zeros"), encoding="utf-8")
    assert "state_changed" not in _probe.trace(str(plain), [{"seed": 0}])


SOFTMAX_OVER_CUT_AXIS = """import torch
import torch.nn as nn

FORMULA = "out[n] = p[n] * 2"
DYNAMIC_AXIS = ["N"]

class Model(nn.Module):
    def forward(self, p, x):
        return p * 2 + x.sum()

def get_inputs():
    return [torch.randn(1 << 28).softmax(dim=0), torch.randn(1 << 28)]

def get_init_inputs():
    return []
"""


@needs_torch
def test_statistics_that_depend_on_the_cut_size_are_flagged(tmp_path: Path, torch_restored: Any,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A softmax over the axis the cut shortens: the cut run's values are 2^28 / 2^22 = 64x the task's; the import
    now says the ranges are the cut run's. A plain randn input is not flagged."""
    monkeypatch.setattr(_probe, "SAMPLE_ELEMENTS", 1 << 16)
    task = tmp_path / "98_KLDiv.py"
    task.write_text(SOFTMAX_OVER_CUT_AXIS, encoding="utf-8")
    p, x = _probe.describe(str(task))["inputs"]
    assert p["sampled"] and p.get("size_dependent") is True
    assert x["sampled"] and "size_dependent" not in x


def test_a_first_case_alone_is_traced_at_one_more_size_to_name_its_output_axes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Mean over 4096 x 4095 per row: only B=1 fits, so there is no tail case; the output [1, 1, 4095] was written
    with a fixed 1 where B belongs, and a correct kernel failed any other B."""
    plan = _plan(["B", 4096, 4095], {"B": 128}, ["B"])
    plan.inputs[0].update(pos=0, scalar=False, desc={"kind": "tensor", "shape": [128, 4096, 4095],
                                                     "dtype": "float32", "mean": 0.0, "std": 1.0, "min": -5.0,
                                                     "max": 5.0, "within_1sd": 0.68})
    seen: dict[str, Any] = {}

    def probe(request: dict[str, Any], timeout: float) -> dict[str, Any]:
        seen["shapes"] = [c["inputs"][0]["shape"] for c in request["cases"]]
        return {"cases": [{"outputs": [{"kind": "tensor", "dtype": "float32", "shape": [s[0], 1, 4095]}],
                           "calls": []} for s in seen["shapes"]]}

    def write(*args: Any, runs: list[dict[str, int]] | None = None, **kwargs: Any) -> Any:
        return args[4], _importer._output_shapes(args[5], plan, runs or args[4])

    monkeypatch.setattr(_importer, "_probe", probe)
    monkeypatch.setattr(_importer, "_write", write)
    report = TaskImport(task="t.py", op_name="t")
    p0, shapes = _importer._random_path(Path("t.py"), "", {}, plan, report, Path("d"), [], 1.0, 1.0)
    assert p0 == [{"B": 1}] and seen["shapes"] == [[1, 4096, 4095], [2, 4096, 4095]]
    assert shapes == [["B", 1, 4095]]
