"""golden.py in its own process: outputs, captured intermediates, make_inputs, and every failure mode."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from opdir_helpers import BASE_GOLDEN, BASE_SPEC, SILU, copy_silu, snapshot, write_op

from runtime.opdir import GoldenError, OpDirError, load_op_dir, run_golden, run_golden_cases


def failing(tmp_path: Path, golden: str, **kw) -> GoldenError:
    op = load_op_dir(write_op(tmp_path / "op", golden=golden))
    with pytest.raises(GoldenError) as info:
        run_golden(op, op.cases()[0], **kw)
    return info.value


def test_silu_golden_outputs_and_intermediates(tmp_path: Path) -> None:
    root = copy_silu(tmp_path / "silu")
    op = load_op_dir(root)
    before = snapshot(root)
    c = op.cases(case="B77_D256-bf16-s1-normal")[0]
    run = run_golden(op, c)
    x = run.inputs[0]
    assert x.dtype == ml_dtypes.bfloat16 and x.shape == (77, 256)
    assert x.tobytes() == op.make_inputs(c)[0].tobytes()
    y = run.outputs["y"]
    assert run.output_names == ["y"] and y.dtype == ml_dtypes.bfloat16 and y.shape == (77, 256)
    xf = x.astype(np.float32)
    np.testing.assert_allclose(y.astype(np.float32), (xf / (1 + np.exp(-xf))).astype(ml_dtypes.bfloat16)
                               .astype(np.float32), rtol=0, atol=0)
    # every named local of golden at return, captured without cooperation
    assert set(run.intermediates) == {"x", "xf", "sig", "yf"}
    np.testing.assert_array_equal(run.intermediates["xf"], xf)
    assert run.intermediates["sig"].dtype == np.float32
    assert run.duration_s >= 0
    assert snapshot(root) == before  # nothing written next to golden.py (no __pycache__)


def test_attrs_become_keywords_and_tuple_and_dict_outputs(tmp_path: Path) -> None:
    spec = BASE_SPEC.replace("  - {name: y, shape: [B, D], dtype: T}",
                             "  - {name: y, shape: [B, D], dtype: T}\n  - {name: s, shape: [B], dtype: fp32}")
    golden = BASE_GOLDEN.replace("    return y.astype(x.dtype)",
                                 "    s = y.sum(axis=-1)\n    return {'s': s, 'y': y.astype(x.dtype)}")
    op = load_op_dir(write_op(tmp_path / "op", spec=spec, golden=golden))
    run = run_golden(op, op.cases()[0])
    x, b = run.inputs
    np.testing.assert_allclose(run.outputs["y"], x * 2.0 + b, rtol=1e-6)  # alpha: 2.0 from SPEC attrs
    assert list(run.outputs) == ["y", "s"]  # SPEC order, not dict order
    assert set(run.intermediates) >= {"scaled", "y", "s"}


def test_batch_of_cases_in_one_process() -> None:
    op = load_op_dir(SILU)
    runs = run_golden_cases(op, op.cases()[:3])
    assert list(runs) == [c.name for c in op.cases()[:3]]
    assert len({r.outputs["y"].tobytes() for r in runs.values()}) == 3


def test_syntax_error(tmp_path: Path) -> None:
    root = write_op(tmp_path / "op", golden="import numpy as np\n\ndef golden(x, b):\n    return x +\n")
    with pytest.raises(OpDirError) as info:
        load_op_dir(root)  # caught statically, golden never runs
    (p,) = info.value.problems
    assert (p.file, p.line) == ("golden.py", 4) and p.message.startswith("syntax error")


def test_missing_function(tmp_path: Path) -> None:
    with pytest.raises(OpDirError) as info:
        load_op_dir(write_op(tmp_path / "op", golden="def reference(x, b):\n    return x\n"))
    assert "defines no top-level function 'golden(*inputs)'" in str(info.value)


def test_too_few_parameters(tmp_path: Path) -> None:
    with pytest.raises(OpDirError, match=r"golden takes 1 positional parameter\(s\) but SPEC.md declares 2 inputs"):
        load_op_dir(write_op(tmp_path / "op", golden="def golden(x):\n    return x\n"))


def test_missing_function_at_runtime(tmp_path: Path) -> None:
    # defined only conditionally: the static check passes, the child finds nothing callable
    err = failing(tmp_path, "if False:\n    def golden(x, b):\n        return x\ngolden = None\n")
    assert err.kind == "missing_function"


def test_exception_inside_golden_names_golden_line(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("    y = scaled + b\n", "    y = scaled + b\n    raise ValueError('boom')\n")
    err = failing(tmp_path, golden)
    assert err.kind == "exception"
    (p,) = err.problems
    assert p.file == "golden.py" and p.line == 12
    assert p.message == "golden raised ValueError: boom"
    assert "raise ValueError('boom')" in err.traceback and "golden_child" not in err.traceback


def test_exception_at_import(tmp_path: Path) -> None:
    err = failing(tmp_path, BASE_GOLDEN + "\nimport not_a_real_module_xyz\n")
    assert err.kind == "import" and err.problems[0].line == 14
    assert "ModuleNotFoundError" in err.problems[0].message


def test_timeout(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("    y = scaled + b\n", "    import time\n    time.sleep(30)\n    y = scaled + b\n")
    err = failing(tmp_path, golden, timeout=1.0)
    assert err.kind == "timeout"
    assert "within 1 s (the limit per case)" in err.problems[0].message


def test_a_hanging_golden_stops_at_the_first_cases_limit(tmp_path: Path) -> None:
    """Issue #28 finding 5: a golden that hangs cost every case's limit (6 x 60 s) before intake said so; now
    the first case over its limit stops the batch and is named (an endless loop, caught in pure Python)."""
    golden = BASE_GOLDEN.replace("    y = scaled + b\n", "    while True:\n        pass\n    y = scaled + b\n")
    op = load_op_dir(write_op(tmp_path / "op", golden=golden))
    cases = op.cases()
    assert len(cases) > 1
    with pytest.raises(GoldenError) as info:
        run_golden_cases(op, cases, timeout=1.0)
    message = info.value.problems[0].message
    assert info.value.kind == "timeout" and f"did not finish case {cases[0].name} within 1 s" in message
    assert "case(s) x" not in message  # not the whole batch's budget


def test_wrong_output_count(tmp_path: Path) -> None:
    err = failing(tmp_path, BASE_GOLDEN.replace("return y.astype(x.dtype)", "return y, y"))
    assert err.kind == "bad_output" and "returned 2 values; SPEC.md declares 1 output(s) ['y']" in str(err)


def test_non_array_output(tmp_path: Path) -> None:
    err = failing(tmp_path, BASE_GOLDEN.replace("return y.astype(x.dtype)", "return 'hello'"))
    assert err.kind == "bad_output" and "output 'y' is a str" in str(err)


def test_make_inputs_overrides_generation(tmp_path: Path) -> None:
    golden = BASE_GOLDEN + (
        "\n\ndef make_inputs(case, rng):\n"
        "    B, D = case['dims']['B'], case['dims']['D']\n"
        "    x = np.full((B, D), float(case['seed']), dtype=np.float32)\n"
        "    return [x, rng.standard_normal(D).astype(np.float32)]\n"
    )
    op = load_op_dir(write_op(tmp_path / "op", golden=golden))
    assert op.has_make_inputs
    c = op.cases()[1]
    run = run_golden(op, c)
    assert run.inputs[0].shape == (16, 32) and np.all(run.inputs[0] == c.seed)
    again = op.make_inputs(c)  # same arrays through the public path
    assert [a.tobytes() for a in again] == [a.tobytes() for a in run.inputs]
    np.testing.assert_allclose(run.outputs["y"], run.inputs[0] * 2.0 + run.inputs[1], rtol=1e-6)


def test_without_intermediates_the_same_inputs_and_outputs_and_no_locals(tmp_path: Path) -> None:
    """intake's check asks for no intermediates: golden runs untraced, and what it returns is bit for bit the same
    (both input paths: generated here and written by make_inputs in the child)."""
    plain = load_op_dir(copy_silu(tmp_path / "silu"))
    made = load_op_dir(write_op(tmp_path / "op", golden=BASE_GOLDEN + (
        "\n\ndef make_inputs(case, rng):\n"
        "    B, D = case['dims']['B'], case['dims']['D']\n"
        "    return [rng.standard_normal((B, D)).astype(np.float32), rng.standard_normal(D).astype(np.float32)]\n")))
    for op in (plain, made):
        cases = op.cases()
        full = run_golden_cases(op, cases)
        bare = run_golden_cases(op, cases, intermediates=False)
        assert list(bare) == [c.name for c in cases]
        for c in cases:
            assert all(r.intermediates for r in full.values()) and bare[c.name].intermediates == {}
            assert [a.tobytes() for a in bare[c.name].inputs] == [a.tobytes() for a in full[c.name].inputs]
            assert {k: (v.dtype, v.tobytes()) for k, v in bare[c.name].outputs.items()} == \
                {k: (v.dtype, v.tobytes()) for k, v in full[c.name].outputs.items()}


def test_make_inputs_failure(tmp_path: Path) -> None:
    golden = BASE_GOLDEN + "\n\ndef make_inputs(case, rng):\n    return [1]\n"
    err = failing(tmp_path, golden)
    assert err.kind == "make_inputs" and "must return a list of 2 arrays" in str(err)


def test_golden_that_mutates_its_input_does_not_change_reported_inputs(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("    y = scaled + b\n", "    y = scaled + b\n    x[...] = 0\n")
    op = load_op_dir(write_op(tmp_path / "op", golden=golden))
    c = op.cases()[0]
    run = run_golden(op, c)
    assert run.inputs[0].tobytes() == op.make_inputs(c)[0].tobytes()


def test_golden_as_callable_object_runs_without_intermediates(tmp_path: Path) -> None:
    golden = ("import numpy as np\n\nclass _G:\n    def __call__(self, x, b):\n        return x * 2 + b\n\n"
              "golden = _G()\n")
    op = load_op_dir(write_op(tmp_path / "op", golden=golden))
    run = run_golden(op, op.cases()[0])
    x, b = run.inputs
    np.testing.assert_allclose(run.outputs["y"], x * 2 + b)
    assert run.intermediates == {}


def test_a_golden_computing_with_torch_npu_gets_the_cpu_stand_in(tmp_path: Path) -> None:
    """A gym golden computes with torch_npu's fused operators; there is no NPU here, so ``import torch_npu`` in
    golden.py loads the emulator's CPU stand-in (as the gym runner does) instead of failing the import."""
    pytest.importorskip("torch", reason="the golden computes with torch (pip install -e '.[toolchain]')")
    golden = BASE_GOLDEN.replace("import numpy as np\n", "import numpy as np\nimport torch\nimport torch_npu\n").replace(
        "    y = scaled + b\n", "    y = torch_npu.npu_silu(torch.from_numpy(scaled + b)).numpy()\n")
    op = load_op_dir(write_op(tmp_path / "op", golden=golden))
    run = run_golden(op, op.cases()[0])
    x, b = run.inputs
    pre = x.astype(np.float32) * 2.0 + b
    np.testing.assert_allclose(run.outputs["y"], pre / (1 + np.exp(-pre)), rtol=1e-6, atol=1e-6)


def test_torch_intermediates_in_bf16_and_fp8_are_captured_by_their_bytes(tmp_path: Path) -> None:
    """torch has no numpy dtype for bf16 or FP8, and ``Tensor.numpy()`` refuses them: the deep capture of an FP8
    golden (the gym's quant_batch_matmul, session 22) ended the golden process. They cross by a view of their bytes,
    exactly."""
    torch = pytest.importorskip("torch", reason="the golden computes with torch (pip install -e '.[toolchain]')")
    golden = BASE_GOLDEN.replace("import numpy as np\n", "import numpy as np\nimport torch\n").replace(
        "    y = scaled + b\n", "    t = torch.from_numpy(scaled)\n    q8 = t.to(torch.float8_e4m3fn)\n"
                             "    h = t.to(torch.bfloat16)\n    y = q8.float().numpy() + b\n")
    op = load_op_dir(write_op(tmp_path / "op", golden=golden))
    run = run_golden(op, op.cases()[0], deep=True)
    scaled = torch.from_numpy(run.intermediates["scaled"])
    assert run.intermediates["q8"].dtype == ml_dtypes.float8_e4m3fn
    assert run.intermediates["q8"].tobytes() == scaled.to(torch.float8_e4m3fn).view(torch.uint8).numpy().tobytes()
    assert run.intermediates["h"].dtype == ml_dtypes.bfloat16
    assert run.intermediates["h"].tobytes() == scaled.to(torch.bfloat16).view(torch.int16).numpy().tobytes()


@pytest.mark.parametrize("target", ["scale_add_impl", "modules"])
def test_golden_py_never_imports_a_kernel_file_the_agents_write(tmp_path: Path, target: str) -> None:
    """golden.py runs outside the sandbox: importing ``<op>_impl.py`` or a stage file from ``modules/`` would run
    model-written code in a trusted process. Other modules of the op dir's folder stay importable."""
    root = write_op(tmp_path / "op", golden=BASE_GOLDEN.replace("import numpy as np\n",
                                                                f"import numpy as np\nimport helper\nimport {target}\n"))
    (root / "helper.py").write_text("SCALE = 1.0\n")
    (root / "scale_add_impl.py").write_text("raise SystemExit('model code ran in the golden process')\n")
    (root / "modules").mkdir()
    (root / "modules" / "scale_add_module1_impl.py").write_text("raise SystemExit('model code ran')\n")
    err = failing(tmp_path, golden=(root / "golden.py").read_text())
    assert "golden.py may not import" in str(err) and "kernel file the agents write" in str(err), str(err)
