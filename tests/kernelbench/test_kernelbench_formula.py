"""The FORMULA / DYNAMIC_AXIS reading and the torch -> PyPTO route table of the KernelBench task import."""

from __future__ import annotations

from pathlib import Path

from orchestrator.adapters.kernelbench import is_task_file, task_op_name
from orchestrator.adapters.kernelbench._formula import formula_outputs, formula_tensors, match_params
from orchestrator.adapters.kernelbench._ops import classify


def test_formula_tensors_name_the_axes_and_undo_a_transpose() -> None:
    t = formula_tensors("z[b, n] = x[b, k] @ W^T[k, n] + bias[n]; out[b, 0] = sum_n(z[b, n])")
    assert t["x"] == [["B", "K"]]
    assert t["W"] == [["N", "K"]]  # stored [n, k]: the formula reads it transposed
    assert t["out"] == [["B", None]]  # a literal index names nothing
    assert t["bias"] == [["N"]]


def test_formula_outputs() -> None:
    assert formula_outputs("w_new, m_new, v_new = adamw_step(weight, grad)") == ["w_new", "m_new", "v_new"]
    assert formula_outputs("out[b, d] = max(x[b, d], 0)") == ["out"]
    assert formula_outputs("scores=Q@K^T*scale; O,L,M = online_softmax(scores)") == ["scores", "O", "L", "M"]
    assert formula_outputs("no assignment here") == []


def test_match_params_by_name_suffix_and_first_letter() -> None:
    t = formula_tensors("out[b, h, sq, d] = Softmax((Q[b, h, sq, d] @ K[b, h, skv, d]^T) * mask[sq, skv]) "
                        "@ V[b, h, skv, d]")
    m = match_params(["query", "key", "value", "atten_mask"], [4, 4, 4, 2], t)
    assert m == {"query": ["B", "H", "SQ", "D"], "key": ["B", "H", "SKV", "D"], "value": ["B", "H", "SKV", "D"],
                 "atten_mask": ["SQ", "SKV"]}
    # exact names win; a rank that does not fit is no match
    assert match_params(["A", "B"], [2, 2], formula_tensors("out[n, m] = A[n, k] @ B[k, m]")) == {
        "A": ["N", "K"], "B": ["K", "M"]}
    assert match_params(["x"], [3], formula_tensors("out[b, d] = x[b, d]")) == {}
    # ambiguous first letters match nothing
    assert match_params(["kq", "kv"], [2, 2], formula_tensors("o[a, b] = K[a, b]")) == {}


def test_routes_and_refusals() -> None:
    assert classify("linear")[0] == "route"
    assert classify("add_") == ("route", "pypto.add (in place)")
    assert classify("view")[0] == "route"
    assert classify("size")[0] == "plumbing"
    kind, why = classify("lstm")
    assert kind == "none" and "recurrent cell" in why
    assert classify("some_new_torch_op")[0] == "unknown"


def test_task_file_detection_and_names(tmp_path: Path) -> None:
    task = tmp_path / "30_Gemm_GroupNorm_Hardtanh.py"
    task.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\n")
    other = tmp_path / "helper.py"
    other.write_text("def get_inputs():\n    return []\n")
    assert is_task_file(task) and not is_task_file(other) and not is_task_file(tmp_path)
    assert task_op_name(task) == "gemm_groupnorm_hardtanh"
    assert task_op_name("1_Square_matrix_multiplication_.py") == "square_matrix_multiplication"
    assert task_op_name("7_3d.py") == "op_3d"


# ---- structured inputs: which inputs a written make_inputs keeps (no child process: the fast tier) ----------


def _fwd(name: str, shape: list[int], dtype: str, **desc: object) -> dict[str, object]:
    return {"name": name, "source": "forward", "shape": shape,
            "desc": {"kind": "tensor", "shape": shape, "dtype": dtype, **desc}}


def test_structured_reasons_name_sorted_vectors_and_lengths_tied_to_a_shape() -> None:
    from orchestrator.adapters.kernelbench._importer import _kept, _Plan, _structured_reasons

    plan = _Plan(inputs=[
        _fwd("x", [24, 8], "float32", min=-3.0, max=3.0),
        _fwd("offsets", [5], "int32", integer=True, sorted=True, min=0, max=24),
        _fwd("n", [1], "int64", integer=True, min=24, max=24),
        _fwd("k", [1], "int64", integer=True, min=7, max=7),  # a size no other input has: not a length
        _fwd("mask", [24], "bool", integer=True, min=0, max=1),
    ])
    reasons = _structured_reasons(plan)
    assert reasons == ["offsets is a sorted integer vector (offsets, lengths or block ids)",
                       "n holds 24 = x.shape[0] (a length or offset tied to that shape)"]
    assert [_kept(t["desc"]) for t in plan.inputs] == [False, True, True, True, True]
    assert _structured_reasons(_Plan(inputs=[_fwd("x", [24, 8], "float32", min=-3.0, max=3.0)])) == []
