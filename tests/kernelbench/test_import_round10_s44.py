"""KernelBench task import, tenth round (session 44): a survey of 41 task files of our own in KernelBench's format
(level1 matrix-vector / scalar / 4D einsum / diagonal / lower-triangular / transposed-A / irregular products,
sigmoid, tanh and softmax at 4096 x 393216, swish, softsign, Frobenius / L1 norms, mean, minGPT's new GELU, KL
divergence, reverse cumsum, padded average pooling; level2 Gemm chains at KernelBench's sizes and at the 2025 ones,
a Conv3d chain; level3 MLPs, LeNet-5, ViT, a bidirectional LSTM, a GRU, a minGPT block, Mamba-2's final state and a
Swin-style shifted-window block). Two of them were refused for no good reason:

- **Pooling that drops a remainder.** KernelBench's ``55_Matmul_MaxPool_Sum_Scale`` pools a Linear's 5 features
  with ``nn.MaxPool1d(2)``: 2 disjoint windows, the fifth feature in none (``ceil_mode`` is off). The probe's
  ``_tiled`` asked for a size that is a multiple of the kernel, so the task was refused as "pooling windows: no PyPTO
  op", though it is a view of the first 4 features, a reshape and a max. Without ``ceil_mode`` a size at least one
  kernel long now tiles too; with ``ceil_mode`` the last window runs past the end and there is still no route.
- **torch.roll had no route.** Swin's cyclic window shift (``torch.roll(x, shifts=(-3, -3), dims=(1, 2))``) was
  "a call the importer knows no PyPTO route for"; it is a concat of two views per rolled axis (``_ops.ROUTES``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from kb_tasks import needs_torch, spec_of, write_task

from orchestrator.adapters.kernelbench import _importer, _probe
from orchestrator.adapters.kernelbench._ops import classify

# ------------------------------------------------------------------------------------------------ unit


@needs_torch
def test_disjoint_pooling_windows_that_leave_a_remainder_have_a_route(torch_restored: Any) -> None:
    torch = torch_restored
    feats = torch.zeros(4, 1, 5)  # Matmul_MaxPool_Sum_Scale: 5 features, windows of 2
    assert _probe._tiled("max_pool1d", [feats, 2], {})
    assert _probe._tiled("max_pool1d", [feats, 2, None, 0, 1], {"ceil_mode": False, "return_indices": False})
    assert _probe._tiled("avg_pool1d", [torch.zeros(2, 1, 10), 4], {})
    assert _probe._tiled("max_pool2d", [torch.zeros(2, 3, 9, 7), 2], {})  # both axes drop their last row/column
    # what still has no route: the last window running past the end, overlap, padding, a kernel longer than the axis
    assert not _probe._tiled("max_pool1d", [feats, 2], {"ceil_mode": True})
    assert not _probe._tiled("avg_pool1d", [feats, 2, 2, 0, True], {})  # avg_pool1d's 5th argument is ceil_mode
    assert not _probe._tiled("max_pool1d", [feats, 2, 1], {})
    assert not _probe._tiled("max_pool1d", [feats, 2], {"padding": 1})
    assert not _probe._tiled("max_pool1d", [torch.zeros(4, 1, 3), 4], {})
    # with ceil_mode, sizes that are a multiple of the kernel still tile (no window runs past the end)
    assert _probe._tiled("max_pool1d", [torch.zeros(4, 1, 6), 2], {"ceil_mode": True})


def test_roll_is_a_route() -> None:
    kind, route = classify("roll")
    assert kind == "route" and "concat" in route


# ------------------------------------------------------------------------------------------------ end to end

MATMUL_MAXPOOL = '''
import torch
import torch.nn as nn

FORMULA = "z[b, n] = x[b, k] @ W^T[k, n] + bias[n]; out[b] = scale * sum_j max(z[b, 2j], z[b, 2j + 1])"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    def __init__(self, in_features, out_features, kernel_size, scale):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.pool = nn.MaxPool1d(kernel_size)
        self.scale = scale

    def forward(self, x):
        x = self.pool(self.fc(x).unsqueeze(1)).squeeze(1)
        return torch.sum(x, dim=1) * self.scale


batch_size = 32
in_features = 12
out_features = 7
kernel_size = 2
scale = 0.5


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, kernel_size, scale]
'''

ROLL = '''
import torch
import torch.nn as nn

FORMULA = "y[B, H, W, C] = roll(x, (-s, -s), (1, 2))[B, H, W, C] @ W^T"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    def __init__(self, dim, shift):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.shift = shift

    def forward(self, x):
        x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        return torch.roll(self.proj(x), shifts=(self.shift, 1), dims=(1, 2))


batch_size = 4
res = 8
dim = 16
shift = 3


def get_inputs():
    return [torch.randn(batch_size, res, res, dim)]


def get_init_inputs():
    return [dim, shift]
'''


def _worst_against_the_model(torch: Any, text: str, dest: Path) -> float:
    """Largest difference, over every SPEC case, between the op dir's golden and the task's Model (built seeded, its
    parameters loaded by name from the case's inputs) on the same inputs."""
    from torch.func import functional_call

    from runtime.opdir import load_op_dir, run_golden

    params = re.findall(r"'([\w.]+)': _pto_forge_tensor\((\w+)", (dest / "golden.py").read_text(encoding="utf-8"))
    names = [t["name"] for t in spec_of(dest)["inputs"]]
    ns: dict[str, Any] = {}
    exec(text, ns)  # noqa: S102 - our own task text
    op = load_op_dir(dest)
    worst = 0.0
    for case in op.cases():
        run = run_golden(op, case)
        given = {n: torch.from_numpy(a.copy()) for n, a in zip(names, run.inputs)}
        torch.manual_seed(0)
        model = ns["Model"](*ns["get_init_inputs"]())
        with torch.no_grad():
            out = functional_call(model, {p: given[n] for p, n in params}, (given[names[0]],))
        got = torch.from_numpy(next(iter(run.outputs.values())).copy())
        assert got.shape == out.shape
        worst = max(worst, float((got - out).abs().max()))
    return worst


@pytest.mark.slow  # each import runs the task in child processes and intake's golden on every case
@needs_torch
def test_a_max_pool_dropping_the_last_feature_imports(tmp_path: Path, torch_restored: Any) -> None:
    dest = tmp_path / "op"
    report = _importer.import_task(write_task(tmp_path, MATMUL_MAXPOOL, "55_matmul_maxpool.py"), dest)
    assert report.dynamic_axes == ["B"]
    assert "max_pool1d (PyPTO: pypto.reshape into the windows" in (dest / "golden.py").read_text(encoding="utf-8")
    assert spec_of(dest)["outputs"][0]["shape"] == ["B"]
    assert _worst_against_the_model(torch_restored, MATMUL_MAXPOOL, dest) == 0.0


@pytest.mark.slow
@needs_torch
def test_a_cyclic_shift_with_roll_imports(tmp_path: Path, torch_restored: Any) -> None:
    dest = tmp_path / "op"
    _importer.import_task(write_task(tmp_path, ROLL, "30_roll.py"), dest)
    assert "roll (PyPTO: pypto.concat of two pypto.view slices" in (dest / "golden.py").read_text(encoding="utf-8")
    assert _worst_against_the_model(torch_restored, ROLL, dest) == 0.0
