"""KernelBench task import, third round (session 38): task files written the way the repository's unseen ~140 are
(level1 convolutions / pooling / norms / losses / matmul variants, level2 fused chains, level3 MLPs and recurrent
nets, level4 HuggingFace wrappers, pto_case production ops). What the round found and these tests hold:

- an output computed from the shapes alone (MoE gating's ``row_idx``) made intake refuse the whole task as a golden
  that ignores its inputs; now it is ``constant: true`` beside the outputs that carry the check, and a task whose
  every output is input-independent (``Gemm_Max_Subtract_GELU``: zeros) is refused in one plain sentence;
- an integer input of distinct values (``torch.randperm`` KV-cache slots) was drawn independently, so two tokens
  wrote one slot and the golden kept torch's pick; it now goes the ``make_inputs`` way;
- a float input holding two values (hinge-loss targets -1 / 1) was declared ``normal`` over [-1, 1] without a word;
  it is drawn uniformly and SPEC.md says the task's two values are not the contract;
- a parameter was tied to a FORMULA *output* by its suffix (``smooth_scale`` -> ``scale[m]``);
- ``einsum`` (KernelBench's 4D tensor-matrix task) has a route; ``unfold`` (ViT patches) and ``bincount`` are
  classified instead of "no route known";
- a buffer drawn at random in ``__init__`` (int8 weights registered as buffers, as ``11_ds_v32_mla_prolog_quant``
  does) stayed inside the golden, where no kernel could know it; it is an input now, like a parameter;
- every output all zeros for the task's own input distribution (``50_Product_reduction``: 256 randn factors
  underflow) passed intake because the large band overflowed to inf; it is refused;
- an output axis that is a product of dynamic dims (``T * k`` rows) failed intake on the tail case; the op dir keeps
  the task's sizes instead;
- a rounded int8 quantisation output was compared exactly, failing a correct kernel one step off at a half;
- outputs FORMULA cannot name get the variable names ``forward`` returns instead of out0, out1, ...

Task texts are our own, inline."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from orchestrator.adapters.kernelbench import _importer, _probe
from orchestrator.adapters.kernelbench._formula import formula_tensors, match_params
from orchestrator.adapters.kernelbench._importer import TaskImport, TaskImportError
from orchestrator.adapters.kernelbench._ops import classify
from runtime.opdir._problems import Problem

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch is not installed")


def _problem(field: str, message: str) -> Problem:
    return Problem(file="golden.py", line=1, field=field, message=message)


def _outs(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "shape": ["T", 8], "dtype": "T"} for n in names]


def test_an_output_computed_from_shapes_alone_is_constant_beside_real_outputs() -> None:
    """MoE gating's row_idx = arange(k) * T + arange(T): intake refused the task (identical for two seeds)."""
    same = _problem("outputs.row_idx", "golden output is identical for seeds 0 and 1 (cases a, b): it does not "
                                       "depend on the inputs")
    assert _importer._input_independent([same], _outs("weights", "ids", "row_idx")) == \
        {"row_idx": "the same for two seeds"}
    zeros = _problem("outputs.out", "golden output is all zeros in every case (e.g. B64); a kernel writing zeros "
                                    "would pass")
    with pytest.raises(TaskImportError, match=r"every output of forward is independent of the input values "
                                              r"\(out: all zeros in every case\)"):
        _importer._input_independent([zeros], _outs("out"))
    nan = _problem("outputs.weights", "case a: golden output contains NaN")
    assert _importer._input_independent([same, nan], _outs("weights", "ids", "row_idx")) is None
    assert _importer._input_independent([_problem("inputs[0].range", "holds no value")], _outs("a", "b")) is None


def _int(shape: list[int], lo: int, hi: int, **extra: Any) -> dict[str, Any]:
    return {"kind": "tensor", "shape": shape, "dtype": "int32", "integer": True, "min": lo, "max": hi,
            "mean": (lo + hi) / 2, "std": 1.0, "finite": True, "distinct": None, **extra}


def test_distinct_integer_values_that_draws_would_repeat_are_structure() -> None:
    """randperm(64 * 128)[:256] slots: 256 independent draws over 8192 values repeat (4 expected); the golden's
    index_put then kept one of two tokens at torch's choice. randint ids that repeat anyway are not structure."""
    slots = _int([256], 0, 8191, unique=True)
    assert _importer._distinct_by_design(slots)
    assert not _importer._distinct_by_design(_int([256], 0, 8191, unique=False))
    assert not _importer._distinct_by_design(_int([16], 0, 1 << 20, unique=True))  # draws would not repeat either
    plan = _importer._Plan(inputs=[{"name": "key", "source": "forward", "desc": {"dtype": "float16"}},
                                   {"name": "slot_mapping", "source": "forward", "desc": slots}])
    (reason,) = _importer._structured_reasons(plan)
    assert reason.startswith("slot_mapping holds 256 distinct values (a permutation or unique slots)")


@needs_torch
def test_the_probe_says_whether_integer_values_repeat(torch_restored: Any) -> None:
    torch = torch_restored
    torch.manual_seed(0)
    assert _probe._tensor(torch.randperm(4096)[:300])["unique"] is True
    assert _probe._tensor(torch.randint(0, 64, (300,)))["unique"] is False
    assert "unique" not in _probe._tensor(torch.randn(300))
    # round 4: from 3 values on (a randperm(8) scatter index was drawn with repeats); two values say nothing
    assert _probe._tensor(torch.arange(8))["unique"] is True and "unique" not in _probe._tensor(torch.arange(2))


def test_a_two_valued_float_input_is_drawn_uniformly_and_said() -> None:
    """Hinge loss: targets = randint(0, 2) * 2 - 1. It was declared normal over [-1, 1] and nothing said that the
    task's targets are signs."""
    report = TaskImport(task="100_HingeLoss.py", op_name="hingeloss")
    d = {"kind": "tensor", "shape": [128], "dtype": "float32", "integer": False, "min": -1.0, "max": 1.0,
         "mean": 0.03, "std": 1.0, "finite": True, "within_1sd": 1.0, "distinct": [-1.0, 1.0]}
    assert _importer._value_spec("input targets", d, report) == {"dtype": "fp32", "range": [-1.0, 1.0]}
    assert report.unstructured == ["input targets holds only the values -1 and 1 in get_inputs() (labels or signs); "
                                   "the op dir draws it uniformly from [-1, 1], so a kernel must compute the general "
                                   "operation and not rely on two values"]
    mask = dict(d, min=0.0, max=1.0, distinct=[0.0, 1.0])
    assert _importer._value_spec("input mask", mask, report)["dtype"] == "bool"  # a 0/1 mask stays a mask


def test_a_parameter_is_never_guessed_onto_a_formula_output() -> None:
    formula = "y[m, n] = silu(a) * b; scale[m] = max|y| / 127; y_q[m, n] = round(y / scale)"
    tensors = formula_tensors(formula)
    assert match_params(["x", "smooth_scale"], [2, 1], tensors) == {"smooth_scale": ["M"]}  # the old guess
    assert match_params(["x", "smooth_scale"], [2, 1], tensors, ["y", "scale", "y_q"]) == {}
    # an input that is also written (scatter_nd_sub's target) keeps its exact-name match
    assert match_params(["target"], [2], formula_tensors("target[i, :] = target[i, :] - u[i, :]"), []) == \
        {"target": ["I", None]}


def test_einsum_unfold_and_bincount_are_classified() -> None:
    assert classify("einsum")[0] == "route" and "pypto.matmul" in classify("einsum")[1]
    assert classify("bincount")[0] == "route"
    assert classify("unfold")[0] == "route" and "taps" in classify("unfold")[1]  # round 12: views at offsets


MOE_GATING = '''import torch
import torch.nn as nn

FORMULA = "probs[t, e] = softmax(logits[t, e]); weights, ids = topk(probs, k); row_idx[t, k] = k * T + t"
DYNAMIC_AXIS = ["T"]


class Model(nn.Module):
    def __init__(self, top_k: int = 4):
        super().__init__()
        self.top_k = top_k

    def forward(self, logits: torch.Tensor):
        probs = torch.softmax(logits.float(), dim=-1)
        weights, ids = torch.topk(probs, self.top_k, dim=-1)
        t = logits.shape[0]
        row_idx = (torch.arange(self.top_k, dtype=torch.int32).unsqueeze(0) * t
                   + torch.arange(t, dtype=torch.int32).unsqueeze(1))
        return weights, ids.to(torch.int32), row_idx


def get_inputs():
    return [torch.randn(96, 16).cuda()]


def get_init_inputs():
    return [4]
'''

ZERO_CHAIN = '''import torch
import torch.nn as nn

FORMULA = "z[b, n] = x[b, k] @ W^T[k, n] + bias[n]; m[b, 0] = max_n z; out[b, 0] = GELU(m - mean(m))"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    def __init__(self, in_features, out_features, max_dim):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)

batch_size = 32
in_features = 16
out_features = 24

def get_inputs():
    return [torch.randn(batch_size, in_features)]

def get_init_inputs():
    return [in_features, out_features, 1]
'''

KV_CACHE = '''import torch
import torch.nn as nn

FORMULA = "key_cache[slot[t] // bs, slot[t] % bs, h, d] = key[t, h, d]"
DYNAMIC_AXIS = ["T"]


class Model(nn.Module):
    def forward(self, key, key_cache, slot_mapping):
        kc = key_cache.clone()
        nb, bs, h, d = kc.shape
        kc.view(nb * bs, h, d)[slot_mapping.long()] = key
        return kc


def get_inputs():
    key = torch.randn(64, 2, 16, dtype=torch.float16)
    key_cache = torch.randn(16, 32, 2, 16, dtype=torch.float16)
    slot_mapping = torch.randperm(16 * 32)[:64].to(torch.int32)
    return [key, key_cache, slot_mapping]


def get_init_inputs():
    return []
'''


def _task(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.slow  # each import runs the task in child processes and intake's golden on every case
@needs_torch
def test_moe_gating_with_a_shape_only_output_imports(tmp_path: Path) -> None:
    from orchestrator.adapters.kernelbench import import_task

    report = import_task(_task(tmp_path, MOE_GATING, "12_moe_gating_topk_softmax.py"), tmp_path / "op")
    spec = (tmp_path / "op" / "SPEC.md").read_text()
    assert "- {name: row_idx, shape: [T, 4], dtype: int32, constant: true}" in spec
    assert "- {name: weights, shape: [T, 4], dtype: T}" in spec and "ties: unspecified" in spec
    assert "Output row_idx does not depend on the input values" in spec
    assert any(u.startswith("output(s) row_idx do not depend on the input values") for u in report.unmapped)


@pytest.mark.slow
@needs_torch
def test_a_task_whose_every_output_is_constant_is_refused_plainly(tmp_path: Path) -> None:
    from orchestrator.adapters.kernelbench import import_task

    with pytest.raises(TaskImportError, match=r"^every output of forward is all zeros for inputs drawn as "
                                              r"get_inputs\(\) draws them, in every traced case"):
        import_task(_task(tmp_path, ZERO_CHAIN, "80_Gemm_Max_Subtract_GELU.py"), tmp_path / "op")
    assert not (tmp_path / "op").exists()


def test_outputs_all_zero_for_the_tasks_own_inputs_are_refused() -> None:
    zero = {"kind": "tensor", "dtype": "float32", "shape": [16, 64], "min": 0.0, "max": 0.0}
    live = dict(zero, min=-1.0, max=2.0)
    with pytest.raises(TaskImportError, match="a product of many values that underflows in float32"):
        _importer._refuse_zero_outputs([[zero], [zero]])
    _importer._refuse_zero_outputs([[zero], [live]])  # zero in one case only: a legitimate output
    _importer._refuse_zero_outputs([[zero, live], [zero, live]])  # another output carries the check


@pytest.mark.slow
@needs_torch
def test_unique_cache_slots_come_from_get_inputs(tmp_path: Path) -> None:
    from orchestrator.adapters.kernelbench import import_task
    from runtime.opdir import load_op_dir, run_golden

    report = import_task(_task(tmp_path, KV_CACHE, "14_reshape_and_cache.py"), tmp_path / "op")
    assert any("slot_mapping holds 64 distinct values" in u for u in report.unmapped)
    op = load_op_dir(tmp_path / "op")
    for case in op.cases()[:2]:
        run = run_golden(op, case)
        slots = run.inputs[2]
        assert len(set(slots.tolist())) == 64  # never two tokens into one slot


RANDOM_BUFFER = '''import torch
import torch.nn as nn

FORMULA = "out[m, n] = (x[m, k] @ w_q[k, n]) * w_scale[n]"
DYNAMIC_AXIS = ["M"]


class Model(nn.Module):
    def __init__(self, k: int = 8, n: int = 16):
        super().__init__()
        self.register_buffer("w_q", torch.randint(-127, 128, (k, n), dtype=torch.int8))
        self.register_buffer("causal", torch.tril(torch.ones(4, 4)))
        self.w_scale = nn.Parameter(torch.rand(n) * 0.01)

    def forward(self, x):
        return (x @ self.w_q.float()) * self.w_scale + self.causal.sum() * 0


def get_inputs():
    return [torch.randn(32, 8)]


def get_init_inputs():
    return [8, 16]
'''


@needs_torch
def test_a_buffer_drawn_at_random_is_a_kernel_input_like_a_parameter(tmp_path: Path, torch_restored: Any) -> None:
    """11_ds_v32_mla_prolog_quant registers its int8 weights w_dq / w_uq_qr as buffers: they were left inside the
    golden, and no kernel could compute q_nope without them. A causal mask buffer is the same under every seed and
    stays inside."""
    np = pytest.importorskip("numpy")
    d = _probe.describe(str(_task(tmp_path, RANDOM_BUFFER, "9_w8_matmul.py")))
    assert [(b["name"], b["dtype"], b["shape"]) for b in d["random_buffers"]] == [("w_q", "int8", [8, 16])]
    report = TaskImport(task="9_w8_matmul.py", op_name="w8_matmul")
    plan = _importer._plan_inputs(d, report)
    assert [(t["name"], t["shape"]) for t in plan.inputs] == [("x", ["M", "K"]), ("w_scale", [16]), ("w_q", [8, 16])]
    assert any(n.startswith("buffer(s) w_q are drawn at random in __init__") for n in report.notes)
    _importer._value_specs(plan, report)
    assert plan.inputs[2]["value"]["dtype"] == "int8"
    scope: dict[str, Any] = {}
    exec(compile(_importer._golden_text(Path("t.py"), RANDOM_BUFFER, plan, [], 1), "golden.py", "exec"), scope)  # noqa: S102
    x, scale, w = np.ones((3, 8), np.float32), np.ones(16, np.float32), np.full((8, 16), 2, np.int8)
    assert np.allclose(scope["golden"](x, scale, w).numpy(), 16.0)  # the handed-in buffer, not the drawn one


def test_a_rounded_quantised_output_is_compared_within_one_step() -> None:
    """RMSNorm + dynamic int8 quant: round(y / scale) was compared exactly, and a correct kernel whose y / scale sits
    within rounding error of a half lands one step away (several elements of every 64 x 4096 case)."""
    report = TaskImport(task="13_rms_norm_dynamic_quant.py", op_name="q")
    calls = [{"op": "rsqrt"}, {"op": "round"}, {"op": "to"}]
    assert _importer._rounded_tolerance(calls, ["int8", "fp32"], report) == {"int8": {"atol": 1, "rtol": 0}}
    assert "rounded quantisations" in report.notes[0]
    assert _importer._rounded_tolerance([{"op": "topk"}], ["fp32", "int32"], report) == {}  # ids stay exact
    assert _importer._rounded_tolerance(calls, ["fp32", "int64"], report) == {}


def test_an_underflow_remainder_counts_as_zero_and_a_product_axis_is_found() -> None:
    """50_Product_reduction: 256 randn factors leave float32 subnormals (1e-45) beside the zeros, and the refusal
    never came. MoE init routing's T * k rows (512, 616 over the cases) follow no dynamic dim."""
    rest = {"kind": "tensor", "dtype": "float32", "shape": [16, 64], "min": -1.4e-45, "max": 2.8e-45}
    with pytest.raises(TaskImportError, match="all zeros"):
        _importer._refuse_zero_outputs([[rest], [rest]])
    _importer._refuse_zero_outputs([[dict(rest, dtype="float16", max=1e-3)], [rest]])
    plan = _importer._Plan(dims={"T": 256, "H": 32}, dynamic=["T"])
    runs = [{"T": 64, "H": 32}, {"T": 77, "H": 32}]
    outs = [[{"shape": [64 * 8, 32]}, {"shape": [64, 8]}], [{"shape": [77 * 8, 32]}, {"shape": [77, 8]}]]
    assert _importer._unnamed_axes(outs, plan, runs) == ["output 0 axis 0 is 512, 616 over the cases"]
    assert _importer._unnamed_axes(outs[:1], plan, runs[:1]) == []


def test_outputs_take_the_returned_variable_names_when_formula_cannot_name_them() -> None:
    report = TaskImport(task="15_add_rms_norm.py", op_name="add_rms_norm")
    assert _importer._returned_names(["y", "x", "rstd"], {"x1", "x2", "gamma"}, 3, report) == ["y", "x", "rstd"]
    assert _importer._returned_names(["y", None, "rstd"], set(), 3, report) == []
    assert _importer._returned_names(["y", "x1"], {"x1"}, 2, report) == []  # an input's name: ambiguous
    assert _importer._returned_names(["y", "y"], set(), 2, report) == []
