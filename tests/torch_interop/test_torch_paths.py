"""The torch paths: kernels fed torch CPU tensors, comparison of torch tensors, torch goldens.

torch is an optional extra (`pip install -e '.[torch]'`); `make test` does not install it (the CPU build is
~900 MB in a venv and plain `torch` resolves to a multi-GB CUDA build on most machines), so this module
needs torch present and is skipped as a whole without it.
"""

# no `from __future__ import annotations`: it would turn the kernel's pypto.Tensor annotations into strings
import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import runtime.emulator as emu  # noqa: E402
from runtime.compare import detailed_tensor_compare  # noqa: E402
from runtime.opdir import load_op_dir, run_golden  # noqa: E402

pypto = emu.install()

TILE = 16


@pypto.frontend.jit
def scale_rows(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16),
               out: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_BF16)):
    pypto.set_vec_tile_shapes(TILE, 64)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, TILE)):
        valid = (n - i * TILE).min(TILE)
        t = pypto.view(x, [TILE, 64], [i * TILE, 0], valid_shape=[valid, 64])
        f = pypto.cast(t, pypto.DT_FP32)
        pypto.assemble(pypto.cast(f * 2.0 + 1.0, pypto.DT_BF16), [i * TILE, 0], out)


def test_kernel_writes_results_into_torch_tensors_in_place() -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(37, 64, generator=gen).to(torch.bfloat16)  # 37 rows: a 5-row tail
    out = torch.zeros(37, 64, dtype=torch.bfloat16)
    with emu.session() as s:
        scale_rows(x, out)
    assert not [d for d in s.diagnostics if d.severity == "error"]
    expected = (x.float() * 2.0 + 1.0).to(torch.bfloat16)
    assert torch.equal(out, expected)  # bf16 rounding per op, like the device
    assert out.dtype == torch.bfloat16 and x.dtype == torch.bfloat16


def test_kernel_rejects_a_torch_dtype_that_differs_from_the_annotation() -> None:
    x = torch.zeros(16, 64, dtype=torch.float32)
    out = torch.zeros(16, 64, dtype=torch.bfloat16)
    with pytest.raises(emu.EmulatorError, match="dtype"):
        scale_rows(x, out)


def test_compare_accepts_torch_and_numpy_alike() -> None:
    a = torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16)
    b = np.array([1.0, 2.0, 3.01], dtype=ml_dtypes.bfloat16)
    same = detailed_tensor_compare(a, torch.tensor([1.0, 2.0, 3.0], dtype=torch.bfloat16))
    assert same["all_close"] and same["max_diff"] == 0
    off = detailed_tensor_compare(a, b, atol=1e-4, rtol=0.0)
    assert not off["all_close"] and off["out_of_tolerance_count"] == 1
    nan = detailed_tensor_compare(torch.tensor([float("nan")]), torch.tensor([float("nan")]))
    assert not nan["all_close"]  # NaN never matches, not even NaN


def test_a_torch_golden_runs_and_returns_numpy(tmp_path: Path) -> None:
    op_dir = tmp_path / "silu_torch"
    shutil.copytree(Path(__file__).resolve().parents[2] / "workspace" / "silu", op_dir,
                    ignore=shutil.ignore_patterns("traces", "authoring"))
    (op_dir / "golden.py").write_text(
        "import torch\n\n"
        "def golden(x):\n"
        "    xf = torch.as_tensor(x.astype('float32'))\n"
        "    y = xf * torch.sigmoid(xf)\n"
        "    return y.numpy().astype(x.dtype)\n", encoding="utf-8")
    op = load_op_dir(op_dir)
    case = next(c for c in op.cases() if c.dtype == "fp32")
    run = run_golden(op, case)
    x = run.inputs[0]
    expected = x * (1.0 / (1.0 + np.exp(-x)))
    np.testing.assert_allclose(run.outputs["y"], expected, rtol=1e-6, atol=1e-6)
    assert "xf" in run.intermediates and run.intermediates["xf"].shape == x.shape  # torch locals captured too
