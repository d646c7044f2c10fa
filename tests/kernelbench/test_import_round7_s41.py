"""KernelBench task import, seventh round (session 41): 23 more task files of our own in KernelBench's styles
(level1 ``scaled_dot_product_attention`` in fp16 built with ``device='cuda'``, Huber / cosine losses over
``*input_shape``, a masked cumsum with a bool mask, ``min(dim)`` with ``__init__`` defaults, ``gather`` of
``randint`` ids; level2 chains with ``nn.Parameter(torch.randn(shape) * 0.02)``, module-level ``torch.manual_seed``,
in-place ``mul_`` / ``clamp_``, fp16 inputs cast to fp32 and back, ``register_buffer`` constants, a residual ``+=``,
a router's ``(scores, int32 experts)`` tuple with an int ``k`` and a bool flag among ``get_inputs()``; level3 an MLP
built from a list argument, a minGPT block whose causal mask is made on the first call, squeeze-excite, an unrolled
vanilla RNN; ``get_inputs()`` / ``get_init_inputs()`` returning tuples with a ``torch.dtype``, ``torch.cuda.manual_seed``,
``device = torch.device("cuda")``, ``.to(device="cuda", dtype=...)``, a model cast with ``self.to(torch.bfloat16)``,
a forward that changes its input in place and returns it, and models that keep state). What it found and these
tests hold:

- ``torch.randn(..., device='cuda')`` (KernelBench's ``97_ScaledDotProductAttention`` builds its inputs so),
  ``torch.zeros(..., device='cuda')``, ``.to("cuda")``, ``.to(device="cuda", ...)``, ``nn.Parameter(...,
  device="cuda:0")``: every such task was refused ("Torch not compiled with CUDA enabled"); only ``.cuda()`` was the
  identity. A torch function mode (``_probe.CUDA_DEVICES``) now gives such calls the CPU, in the probe and at the top
  of golden.py, when the task's text names a CUDA device (others' golden.py is unchanged); on the meta device
  (shapes of GPU-sized inputs) the device is left out, so nothing is built at full size;
- a model that makes a mask on its first call (``self.mask = None`` in ``__init__``, ``if self.mask is None:
  self.mask = torch.tril(...)`` in forward; ``register_buffer("bias", None)`` filled on the first call) was refused
  as state; it is deterministic state built from the shapes, as if ``__init__`` had built it. The state check now
  asks whether the state a first call leaves changes a later call's outputs (same inputs, and other inputs of the
  same shapes) against a model as built; it does not, so the task imports and golden.py runs every case on a copy
  of the model as built (a mask made at one case's length must not serve the tail case);
- Python values kept in plain attributes were never looked at: ``self.steps += 1; return x * self.steps`` and
  ``if not self.warm: ...`` imported, with a golden whose output depended on the cases run before. Plain
  attributes (numbers, flags, tensors, lists and dicts of them) are now part of the state check: a running mean in
  ``self.running``, a first-call flag and a scale calibrated on the first batch are refused in one line naming the
  attribute that carries the state.

Task texts are our own, inline."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest
from kb_tasks import needs_torch, spec_of, write_task

from orchestrator.adapters.kernelbench import _importer, _probe
from orchestrator.adapters.kernelbench._importer import TaskImportError


def _carried(model: Any, x: Any, other: Any) -> tuple[list[str], list[str]]:
    """What ``trace`` does around a first run: the names the run changed, and those that carry state."""
    start = _probe._pto_forge_snapshot(model, set())
    before = _probe._model_state(model)
    _probe._call(model, {}, _probe._cloned([x]))
    after = _probe._model_state(model)
    changed = sorted(n for n in before.keys() | after.keys() if before.get(n) != after.get(n))
    return changed, _probe._carried_state(model, {}, [x], [other], changed, start)


# ------------------------------------------------------------------------------------------------ fast rules


@needs_torch
def test_state_built_on_the_first_call_from_the_shapes_is_not_carried(torch_restored: Any) -> None:
    torch = torch_restored

    class LazyMask(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.mask = None

        def forward(self, x: Any) -> Any:
            if self.mask is None:
                self.mask = torch.tril(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool))
            return (x @ x.transpose(1, 2)).masked_fill(~self.mask, 0.0)

    class NoneBuffer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("table", None, persistent=False)

        def forward(self, x: Any) -> Any:
            if self.table is None:
                self.table = torch.cos(torch.arange(x.shape[-1], dtype=torch.float32))
            return x * self.table

    class DictCacheAndDebug(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self._cache: dict[int, Any] = {}
            self.last = None

        def forward(self, x: Any) -> Any:
            n = x.shape[-1]
            if n not in self._cache:
                self._cache[n] = torch.linspace(0.5, 2.0, n)
            y = x * self._cache[n]
            self.last = y.detach()  # kept, never read
            return y

    class LazyDraw(torch.nn.Module):  # the random call is refused by its name (randn), not blamed on the attribute
        def __init__(self) -> None:
            super().__init__()
            self.noise = None

        def forward(self, x: Any) -> Any:
            if self.noise is None:
                self.noise = torch.randn(x.shape[-1])
            return x + self.noise

    class Norm(torch.nn.Module):  # running statistics change, the training-mode output does not read them
        def __init__(self) -> None:
            super().__init__()
            self.bn = torch.nn.BatchNorm1d(4)

        def forward(self, x: Any) -> Any:
            return self.bn(x.reshape(-1, 4)).reshape(x.shape)

    gen = torch.Generator().manual_seed(2)
    x, other = torch.randn(3, 4, 4, generator=gen), torch.randn(3, 4, 4, generator=gen)
    for model, changed in ((LazyMask(), ["mask"]), (NoneBuffer(), ["table"]), (DictCacheAndDebug(), ["_cache", "last"]),
                           (LazyDraw(), ["noise"]), (Norm(), ["bn.num_batches_tracked", "bn.running_mean",
                                                             "bn.running_var"])):
        assert _carried(model, x, other) == (changed, []), type(model).__name__


@needs_torch
def test_state_a_later_call_reads_is_carried_and_named(torch_restored: Any) -> None:
    torch = torch_restored

    class Counter(torch.nn.Module):  # a Python int, invisible to the tensor-only check before
        def __init__(self) -> None:
            super().__init__()
            self.steps = 0

        def forward(self, x: Any) -> Any:
            self.steps += 1
            return x * self.steps

    class RunningMean(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.running = None
            self.calls = 0  # changes, never read: not named

        def forward(self, x: Any) -> Any:
            m = x.mean(0)
            self.running = m if self.running is None else 0.9 * self.running + 0.1 * m
            self.calls += 1
            return x - self.running

    class Calibrated(torch.nn.Module):  # a scale taken from the first batch: the same inputs agree, others do not
        def __init__(self) -> None:
            super().__init__()
            self.scale = None

        def forward(self, x: Any) -> Any:
            if self.scale is None:
                self.scale = x.abs().amax()
            return torch.clamp(x / self.scale, -1.0, 1.0)

    class SwitchesToEval(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bn = torch.nn.BatchNorm1d(4)

        def forward(self, x: Any) -> Any:
            y = self.bn(x.reshape(-1, 4)).reshape(x.shape)
            self.eval()
            return y

    gen = torch.Generator().manual_seed(3)
    x, other = torch.randn(3, 4, 4, generator=gen) + 0.5, torch.randn(3, 4, 4, generator=gen) * 3
    assert _carried(Counter(), x, other) == (["steps"], ["steps"])
    assert _carried(RunningMean(), x, other) == (["calls", "running"], ["running"])
    assert _carried(Calibrated(), x, other)[1] == ["scale"]
    changed, kept = _carried(SwitchesToEval(), x, other)
    assert "bn.training" in changed and kept == ["bn.training"]  # the running statistics alone change nothing


@needs_torch
def test_model_state_and_snapshots_cover_plain_attributes_and_leave_shared_tensors_and_closures(torch_restored: Any) -> None:
    torch = torch_restored

    class M(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.register_buffer("lazy", None)
            self.flag = False
            self.sizes = [1, 2]
            lin = self.lin
            self.mlpf = lambda x: lin(x)  # minGPT's closure over a submodule
            self.bound = self.extra_repr  # a bound method: a deep copy would copy the whole model

    m = M()
    state = _probe._model_state(m)
    assert state["lazy"] == ("buffer", None) and state["flag"][0] == "attr" and state["sizes"][0] == "attr"
    assert state["lin.weight"][0] == "param" and "_modules" not in state and "training" in state
    shared = _probe._model_state(m, {"lin.weight"})
    with torch.no_grad():
        m.lin.weight.add_(1.0)  # the case's override stands in for it: not the model's state
        m.lin.bias.add_(1.0)
    m.sizes.append(3)
    now = _probe._model_state(m, {"lin.weight"})
    assert now["lin.weight"] == shared["lin.weight"]
    assert now["lin.bias"] != shared["lin.bias"] and now["sizes"] != shared["sizes"]
    snap = _probe._pto_forge_snapshot(m, {"lin.weight"})
    with torch.no_grad():
        m.lin.weight.mul_(0.0)  # shared: the case's input, not copied, so not put back
        m.lin.bias.mul_(0.0)
    m.flag, m.extra, m.lazy = True, 1, torch.ones(2)
    _probe._pto_forge_restore(snap)
    assert float(m.lin.weight.detach().abs().sum()) == 0.0 and float(m.lin.bias.detach().abs().sum()) > 0.0
    assert m.flag is False and not hasattr(m, "extra") and m.lazy is None and m.sizes == [1, 2, 3]
    assert m.bound.__self__ is m and m.mlpf(torch.ones(1, 2)).shape == (1, 2)
    assert m.mlpf.__closure__[0].cell_contents is m.lin


@needs_torch
def test_a_lazy_mask_is_traced_on_a_fresh_model_for_each_case(tmp_path: Path, torch_restored: Any) -> None:
    """The trace's cases at T = 64 and T = 77: the mask made at 64 would break the second case (it did: refused)."""
    path = write_task(tmp_path, LAZY_MASK_DYNAMIC, "325_lazy_mask_dynamic.py")
    case = {"kind": "tensor", "dtype": "float32", "min": -4.0, "max": 4.0, "normal": True, "mean": 0.0, "std": 1.0}
    got = _probe.trace(str(path), [{"inputs": [{**case, "shape": [2, 64, 16]}]},
                                   {"inputs": [{**case, "shape": [3, 77, 16]}]}])
    assert got.get("lazy") == ["mask"] and "state_changed" not in got
    assert [c["outputs"][0]["shape"] for c in got["cases"]] == [[2, 64, 16], [3, 77, 16]]


@needs_torch
def test_cuda_devices_are_the_cpu_and_left_out_on_the_meta_device(torch_restored: Any) -> None:
    torch = torch_restored
    assert _probe.names_cuda("x = torch.randn(4, device='cuda')") and _probe.names_cuda('t.to("cuda:0")')
    assert not _probe.names_cuda("x = torch.randn(4).cuda()") and not _probe.names_cuda("# runs on cuda")
    ns: dict[str, Any] = {}
    exec(_probe.CPU_ONLY + _probe.CUDA_DEVICES, ns)  # noqa: S102 - the project's own shim text
    try:
        assert torch.randn(2, device="cuda").device.type == "cpu"
        assert torch.zeros(2, device=torch.device("cuda:0")).device.type == "cpu"
        x = torch.ones(3, dtype=torch.float16)
        assert x.to("cuda").device.type == "cpu" and x.to("cuda", torch.float32).dtype == torch.float32
        assert x.to(device="cuda", dtype=torch.float32).dtype == torch.float32
        assert torch.nn.Linear(2, 2).to(torch.device("cuda")).weight.device.type == "cpu"
        assert torch.einsum("ij->j", torch.ones(2, 2)).tolist() == [2.0, 2.0]  # other strings untouched
        with torch.device("meta"), ns["_PtoForgeCpuDevices"](drop=True):
            assert torch.randn(1 << 20, 1 << 20, device="cuda").device.type == "meta"  # 4 TB: never built
    finally:
        ns["_pto_forge_devices"].__exit__(None, None, None)
    if not torch.backends.cuda.is_built():
        with pytest.raises((AssertionError, RuntimeError)):
            torch.randn(2, device="cuda")  # the mode is gone (a CPU-only torch refuses again)


def test_golden_gets_the_cuda_shim_only_when_the_task_names_a_cuda_device() -> None:
    assert "_PtoForgeCpuDevices" in _importer._with_cpu_only(SDPA_FP16_CUDA)
    assert "_PtoForgeCpuDevices" not in _importer._with_cpu_only(HUBER_LOSS)  # only .cuda(): unchanged
    assert _importer._with_cpu_only(HUBER_LOSS).startswith(_probe.CPU_ONLY)


SDPA_FP16_CUDA = '''import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
num_heads = 8
sequence_length = 256
embedding_dimension = 64


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        out = F.scaled_dot_product_attention(Q, K, V)
        return out


def get_inputs():
    Q = torch.randn(batch_size, num_heads, sequence_length, embedding_dimension, device='cuda', dtype=torch.float16)
    K = torch.randn(batch_size, num_heads, sequence_length, embedding_dimension, device='cuda', dtype=torch.float16)
    V = torch.randn(batch_size, num_heads, sequence_length, embedding_dimension, device='cuda', dtype=torch.float16)
    return [Q, K, V]


def get_init_inputs():
    return []
'''

HUBER_LOSS = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """
    A model that computes Smooth L1 (Huber) Loss for regression tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets)

batch_size = 128
input_shape = (4096,)
dim = 1

def get_inputs():
    return [torch.randn(batch_size, *input_shape).cuda(), torch.randn(batch_size, *input_shape).cuda()]

def get_init_inputs():
    return []
'''

COSINE_LOSS = '''import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    """
    A model that computes Cosine Similarity Loss for comparing vectors.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, predictions, targets):
        cosine_sim = F.cosine_similarity(predictions, targets, dim=1)
        return torch.mean(1 - cosine_sim)

batch_size = 128
input_shape = (4096, )
dim = 1

def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape)]

def get_init_inputs():
    return []
'''

MASKED_CUMSUM = '''import torch
import torch.nn as nn

FORMULA = "y[b, n] = cumsum_n(x[b, n] * mask[b, n])"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    """
    A model that performs a cumulative sum operation only on elements that satisfy a condition.
    """

    def __init__(self, dim: int = 1):
        super(Model, self).__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


batch_size = 128
input_shape = (4000,)
dim = 1


def get_inputs():
    x = torch.randn(batch_size, *input_shape)
    mask = torch.randint(0, 2, x.shape).bool()  # Random boolean mask
    return [x, mask]


def get_init_inputs():
    return [dim]
'''

MIN_DEFAULT_DIM = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs Min reduction over a specific dimension.
    """
    def __init__(self, dim: int = 1, keepdim: bool = False):
        """
        Initializes the model with the dimension to reduce over.
        """
        super(Model, self).__init__()
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.min(x, dim=self.dim, keepdim=self.keepdim)[0]

batch_size = 16
dim1 = 256
dim2 = 256

def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]

def get_init_inputs():
    return [1]  # Example, change to desired dimension
'''

GATHER_CUDA = '''import torch
import torch.nn as nn

FORMULA = "y[b, k] = x[b, idx[b, k]]"
DYNAMIC_AXIS = ["B"]

torch.manual_seed(0)

batch_size = 256
dim = 2048
num_picks = 64


class Model(nn.Module):
    def __init__(self, dim=1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, self.dim, idx)


def get_inputs():
    x = torch.randn(batch_size, dim, device="cuda")
    idx = torch.randint(0, dim, (batch_size, num_picks), device="cuda")
    return [x, idx]


def get_init_inputs():
    return []
'''

GEMM_SCALE_SWISH_CLAMP = '''import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(42)


class Model(nn.Module):
    """
    Model that performs a GEMM, scales by a learned per-feature factor, applies Swish, and clamps, in place.
    """
    def __init__(self, in_features, out_features, scale_shape, clamp_min=-1.0, clamp_max=1.0):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(scale_shape) * 0.02)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.gemm(x)
        x.mul_(self.scale)
        x = x * torch.sigmoid(x)  # Swish
        x.clamp_(self.clamp_min, self.clamp_max)
        return x

batch_size = 128
in_features = 1024
out_features = 512
scale_shape = (out_features,)

def get_inputs():
    return [torch.randn(batch_size, in_features).cuda()]

def get_init_inputs():
    return [in_features, out_features, scale_shape]
'''

MATMUL_LAYERNORM_FP16 = '''import torch
import torch.nn as nn
import torch.nn.functional as F

FORMULA = "y[b, n] = gelu(layer_norm(x[b, k] @ W^T[k, n] + bias[n]))"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape, eps=1e-5):
        super(Model, self).__init__()
        self.matmul = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.norm = nn.LayerNorm(out_features, eps=eps)
        self.eps = eps

    def forward(self, x):
        x = self.matmul(x.float())
        x = x + self.bias
        x = self.norm(x)
        x = F.gelu(x)
        return x.half()


batch_size = 64
in_features = 512
out_features = 256
bias_shape = (out_features,)


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.float16)]


def get_init_inputs():
    return [in_features, out_features, bias_shape, 1e-6]
'''

RESIDUAL_RMSNORM_BUFFER = '''import torch
import torch.nn as nn

FORMULA = "h[b, d] = x[b, k] @ W^T[k, d] + bias[d] + residual[b, d]; y[b, d] = h[b, d] * rsqrt(mean_d(h[b, d]^2) + eps) * scale[d]"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    def __init__(self, in_features, hidden, eps=1e-6, init_scale=0.5):
        super().__init__()
        self.lin = nn.Linear(in_features, hidden)
        self.register_buffer("scale", torch.ones(hidden) * init_scale)
        self.eps = eps

    def forward(self, x, residual):
        h = self.lin(x)
        h += residual
        y = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps) * self.scale
        return y, h


def get_inputs():
    return [torch.randn(128, 256), torch.randn(128, 512)]


def get_init_inputs():
    return [256, 512]
'''

ROUTER_TOPK_FLAG = '''import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
hidden = 1024
num_experts = 64
top_k = 4


class Model(nn.Module):
    """Router: a gate GEMM, top-k experts per token, optionally renormalised with a softmax over the k scores."""

    def __init__(self, hidden, num_experts):
        super().__init__()
        self.gate = nn.Linear(hidden, num_experts, bias=False)

    def forward(self, x, k: int, normalize: bool):
        logits = self.gate(x)
        scores, experts = torch.topk(logits, k, dim=-1)
        if normalize:
            scores = F.softmax(scores, dim=-1, dtype=torch.float32)
        return scores, experts.to(torch.int32)


def get_inputs():
    return [torch.randn(batch_size, hidden), top_k, True]


def get_init_inputs():
    return [hidden, num_experts]
'''

TUPLE_EVERYTHING = '''import torch
import torch.nn as nn

torch.cuda.manual_seed(42)
torch.backends.cuda.matmul.allow_tf32 = True
device = torch.device("cuda")


class Model(nn.Module):
    def __init__(self, in_features, out_features, dtype=torch.float32):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features).to(dtype)

    @torch.no_grad()
    def forward(self, x, y=None):
        out = self.fc(x)
        if y is not None:
            out = out + y
        return out


def get_inputs():
    return (torch.randn(32, 64).to(device), torch.randn(32, 48, device=device))


def get_init_inputs():
    return (64, 48, torch.float32)
'''

BF16_MODEL = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, hidden, negative_slope=0.01):
        super().__init__()
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)
        self.negative_slope = negative_slope
        self.to(torch.bfloat16)

    def forward(self, x):
        h = self.up(x)
        h = torch.where(h > 0, h, h * self.negative_slope)
        y = self.down(h)
        return F.layer_norm(y, y.shape[-1:])


def get_inputs():
    return [torch.rand(64, 256, dtype=torch.bfloat16, device='cuda') * 2 - 1]


def get_init_inputs():
    return [256, 512]
'''

INPLACE_INPUT = '''import torch
import torch.nn as nn

FORMULA = "y[b, d] = relu(x[b, d] + 1) * 2"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    def forward(self, x):
        x.add_(1.0)
        torch.relu_(x)
        x *= 2
        return x


def get_inputs():
    return [torch.randn(512, 1024).cuda().half()]


def get_init_inputs():
    return []
'''

TO_DEVICE_KWARGS = '''import torch
import torch.nn as nn

FORMULA = "y[b, n] = x[b, k] @ w[k, n]"
DYNAMIC_AXIS = ["B"]


class Model(nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.w = nn.Parameter(torch.randn(k, n, device="cuda:0") / k ** 0.5)

    def forward(self, x):
        x = x.to(device="cuda", dtype=torch.float32, non_blocking=True)
        return torch.matmul(x, self.w).to("cuda:0")


def get_inputs():
    return [torch.randn(128, 256, dtype=torch.float16).to("cuda", non_blocking=True)]


def get_init_inputs():
    return [256, 64]
'''

MLP_LAYER_LIST = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size, activation="gelu"):
        """
        :param input_size: The number of input features
        :param layer_sizes: A list of ints containing the sizes of each hidden layer
        :param output_size: The number of output features
        """
        super(Model, self).__init__()

        layers = []
        current_input_size = input_size
        act = nn.GELU() if activation == "gelu" else nn.ReLU()

        for layer_size in layer_sizes:
            layers.append(nn.Linear(current_input_size, layer_size))
            layers.append(act)
            current_input_size = layer_size

        layers.append(nn.Linear(current_input_size, output_size))

        self.network = nn.Sequential(*layers)

    def forward(self, x):
        """
        :param x: The input tensor, shape (batch_size, input_size)
        :return: The output tensor, shape (batch_size, output_size)
        """
        return self.network(x)

# Test code
batch_size = 1
input_size = 1000
layer_sizes = [400, 800]
output_size = 500

def get_inputs():
    return [torch.randn(batch_size, input_size)]

def get_init_inputs():
    return [input_size, layer_sizes, output_size]
'''

CAUSAL_BLOCK_LAZY = '''import math
import torch
import torch.nn as nn
import torch.nn.functional as F


class NewGELU(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class CausalSelfAttention(nn.Module):
    """A causal self-attention whose mask is made on the first call, at the length it sees."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        assert n_embd % n_head == 0
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd
        self.register_buffer("bias", None, persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        if self.bias is None or self.bias.size(-1) < T:
            self.bias = torch.tril(torch.ones(T, T, device=x.device)).view(1, 1, T, T)
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Model(nn.Module):
    """A pre-norm transformer block (minGPT style)."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd),
                                      act=NewGELU()))
        m = self.mlp
        self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlpf(self.ln_2(x))
        return x


batch_size = 8
seq_len = 128
n_embd = 128
n_head = 4


def get_inputs():
    return [torch.randn(batch_size, seq_len, n_embd, device="cuda")]


def get_init_inputs():
    return [n_embd, n_head]
'''

SQUEEZE_EXCITE = '''import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import OrderedDict


class Model(nn.Module):
    def __init__(self, channels, reduction=4):
        super(Model, self).__init__()
        self.fc = nn.Sequential(OrderedDict([
            ("squeeze", nn.Linear(channels, channels // reduction)),
            ("act", nn.ReLU(inplace=True)),
            ("excite", nn.Linear(channels // reduction, channels)),
        ]))

    def forward(self, x):
        s = x.mean(dim=(2, 3))
        s = torch.sigmoid(self.fc(s))
        return x * s[:, :, None, None]


batch_size = 10
channels = 64
height, width = 56, 56


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
'''

VANILLA_RNN = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int, output_size: int):
        """
        Initialize the Vanilla RNN model, unrolled over the sequence with Linear cells.
        """
        super(Model, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> tuple:
        hidden = h0
        outputs = []
        for t in range(x.size(1)):
            combined = torch.cat((x[:, t, :], hidden), dim=1)
            hidden = self.tanh(self.i2h(combined))
            outputs.append(self.h2o(hidden))
        return torch.stack(outputs, dim=1), hidden

batch_size = 8
seq_len = 16
input_size = 1024
hidden_size = 256
output_size = 128

def get_inputs():
    return [torch.randn(batch_size, seq_len, input_size), torch.zeros(batch_size, hidden_size, device='cuda')]

def get_init_inputs():
    return [input_size, hidden_size, output_size]
'''

LAZY_MASK_DYNAMIC = '''import math
import torch
import torch.nn as nn
import torch.nn.functional as F

FORMULA = "y[b, t, d] = softmax_s(causal(x[b, t, d] @ x^T[b, d, s] / sqrt(D))) @ x[b, s, d]"
DYNAMIC_AXIS = ["B", "T"]


class Model(nn.Module):
    """Causal self-attention without projections; the mask is made on the first call, at that call's length."""

    def __init__(self):
        super().__init__()
        self.mask = None

    def forward(self, x):
        T = x.size(1)
        if self.mask is None:
            self.mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
        att = (x @ x.transpose(-2, -1)) / math.sqrt(x.size(-1))
        att = att.masked_fill(~self.mask, float("-inf"))
        return F.softmax(att, dim=-1) @ x


def get_inputs():
    return [torch.randn(4, 128, 64)]


def get_init_inputs():
    return []
'''

RUNNING_NORM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Normalises by a running mean kept in plain attributes (updated every call)."""

    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.running = None
        self.steps = 0

    def forward(self, x):
        m = x.mean(0)
        self.running = m if self.running is None else (1 - self.momentum) * self.running + self.momentum * m
        self.steps += 1
        return x - self.running


def get_inputs():
    return [torch.randn(256, 512)]


def get_init_inputs():
    return [512]
'''

CONV_GELU_POOL = '''import torch
import torch.nn as nn
import torch.nn.functional as F

class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = F.gelu(x)
        x = F.adaptive_avg_pool2d(x, 1)
        x = x.squeeze(-1).squeeze(-1)
        return x

batch_size = 128
in_channels = 3
out_channels = 16
height, width = 32, 32
kernel_size = 3

def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
'''

CALIBRATED_QUANT = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """Fake int8 quantisation whose scale is calibrated on the first batch it sees."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.register_buffer("amax", torch.zeros(()))
        self.calibrated = False

    def forward(self, x):
        y = self.fc(x)
        if not self.calibrated:
            self.amax.copy_(y.abs().max())
            self.calibrated = True
        s = self.amax / 127.0
        return torch.clamp(torch.round(y / s), -128, 127) * s


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return [256, 128]
'''

FIRST_CALL_FLAG = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.warm = False

    def forward(self, x):
        y = self.lin(x)
        if not self.warm:
            self.warm = True
            return y
        return y * 2


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64]
'''


# ------------------------------------------------------------------------------------------------ end to end


def _golden_runs(dest: Path) -> list[Any]:
    from runtime.opdir import load_op_dir, run_golden

    op = load_op_dir(dest)
    return [run_golden(op, case) for case in op.cases()]


def _worst_against_a_model_built_per_case(torch: Any, text: str, dest: Path) -> float:
    """Largest difference between the op dir's golden and the task's Model built anew for each case (this process,
    ``device="cuda"`` taken out of the text), its parameters loaded by name from the case's inputs."""
    from torch.func import functional_call

    golden = (dest / "golden.py").read_text(encoding="utf-8")
    params = re.findall(r"'([\w.]+)': _pto_forge_tensor\((\w+)", golden)
    names = [t["name"] for t in spec_of(dest)["inputs"]]
    ns: dict[str, Any] = {}
    exec(text.replace('device="cuda"', "").replace("device='cuda'", ""), ns)  # noqa: S102 - our own task text
    worst = 0.0
    for run in _golden_runs(dest):
        given = {n: torch.from_numpy(a.copy()) for n, a in zip(names, run.inputs)}
        torch.manual_seed(0)
        model = ns["Model"](*ns["get_init_inputs"]())
        with torch.no_grad():
            out = functional_call(model, {p: given[n] for p, n in params}, (given[names[0]],))
        got = torch.from_numpy(next(iter(run.outputs.values())).copy())
        worst = max(worst, float((got - out).abs().max()))
    return worst


@pytest.mark.slow  # each import runs the task in child processes and intake's golden on every case
@needs_torch
def test_sdpa_built_on_a_cuda_device_imports_and_its_golden_is_attention(tmp_path: Path, torch_restored: Any) -> None:
    torch = torch_restored
    F = torch.nn.functional
    dest = tmp_path / "op"
    _importer.import_task(write_task(tmp_path, SDPA_FP16_CUDA, "301_sdpa_fp16_cuda.py"), dest)
    spec = spec_of(dest)
    assert [(t["name"], t["shape"]) for t in spec["inputs"]] == [(n, [16, 8, 256, 64]) for n in ("Q", "K", "V")]
    assert spec["supported_dtypes"] == ["fp16"]
    assert "_PtoForgeCpuDevices" in (dest / "golden.py").read_text(encoding="utf-8")
    for run in _golden_runs(dest):
        q, k, v = (torch.from_numpy(a.copy()).float() for a in run.inputs)
        want = F.softmax(q @ k.transpose(-2, -1) / 8.0, dim=-1) @ v
        got = torch.from_numpy(run.outputs["out"].astype("float32"))
        assert float((got - want).abs().max()) < 2e-2


@pytest.mark.slow
@needs_torch
def test_cuda_devices_in_get_inputs_init_and_forward_import(tmp_path: Path, torch_restored: Any) -> None:
    """``device="cuda"`` in get_inputs (ids from randint), ``torch.zeros(..., device='cuda')`` as an RNN's h0,
    ``nn.Parameter(..., device="cuda:0")`` and ``.to(device="cuda", dtype=...)`` in forward, a module-level
    ``device = torch.device("cuda")`` with ``torch.cuda.manual_seed``: all refused before ("Torch not compiled with
    CUDA enabled")."""
    np = pytest.importorskip("numpy")
    gather = tmp_path / "gather"
    _importer.import_task(write_task(tmp_path, GATHER_CUDA, "306_gather_rows_int_index.py"), gather)
    x, idx = spec_of(gather)["inputs"]
    assert idx["name"] == "idx" and idx["dtype"] == "int64" and [int(v) for v in idx["range"]] == [0, 2047]
    for run in _golden_runs(gather):  # x keeps its 256 rows (FORMULA's nested x[b, idx[b, k]] names none of its
        # axes, a limit of the formula reader); gather reads the first B of them
        ids = run.inputs[1]
        assert np.array_equal(run.outputs["out"], np.take_along_axis(run.inputs[0][:ids.shape[0]], ids, axis=1))

    rnn = tmp_path / "rnn"
    _importer.import_task(write_task(tmp_path, VANILLA_RNN, "324_VanillaRNN_unrolled.py"), rnn)
    names = [t["name"] for t in spec_of(rnn)["inputs"]]
    assert names[:2] == ["x", "h0"] and "i2h_weight" in names

    mm = tmp_path / "mm"
    report = _importer.import_task(write_task(tmp_path, TO_DEVICE_KWARGS, "345_to_device_kwargs.py"), mm)
    assert report.dynamic_axes == ["B"]
    for run in _golden_runs(mm):
        want = run.inputs[0].astype("float32") @ run.inputs[1]
        assert np.allclose(run.outputs["out"], want, rtol=1e-5, atol=1e-5)

    tup = tmp_path / "tuple"
    _importer.import_task(write_task(tmp_path, TUPLE_EVERYTHING, "341_tuple_everything.py"), tup)
    assert [t["name"] for t in spec_of(tup)["inputs"]] == ["x", "y", "fc_weight", "fc_bias"]


@pytest.mark.slow
@needs_torch
def test_a_mask_made_on_the_first_call_imports_with_dynamic_axes(tmp_path: Path, torch_restored: Any) -> None:
    """The mask is made at the first case's length; the tail case (T + 13) needs its own: every golden() call runs
    from the model's state as built."""
    torch = torch_restored
    F = torch.nn.functional
    dest = tmp_path / "op"
    report = _importer.import_task(write_task(tmp_path, LAZY_MASK_DYNAMIC, "325_lazy_mask_dynamic.py"), dest)
    assert report.dynamic_axes == ["B", "T"] and len({d["T"] for d in report.p0_shapes}) == 2
    assert any("self.mask on its first call" in n for n in report.notes)
    assert "_pto_forge_fresh(model)" in (dest / "golden.py").read_text(encoding="utf-8")
    assert _worst_against_a_model_built_per_case(torch, LAZY_MASK_DYNAMIC, dest) < 1e-5
    seen = set()
    for run in _golden_runs(dest):
        x = torch.from_numpy(run.inputs[0].copy())
        t = x.shape[1]
        seen.add(t)
        att = (x @ x.transpose(1, 2)) / math.sqrt(x.shape[-1])
        att = att.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool)), float("-inf"))
        want = F.softmax(att, dim=-1) @ x
        assert torch.allclose(torch.from_numpy(run.outputs["out"]), want, rtol=1e-5, atol=1e-5)
    assert len(seen) == 2


@pytest.mark.slow
@needs_torch
def test_a_minGPT_block_with_a_buffer_filled_on_the_first_call_imports(tmp_path: Path, torch_restored: Any) -> None:
    """Its ``self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))`` is bound to the model's own submodules: a golden
    that ran each case on a deep copy of the model (this round's first cut) ran the MLP with the init weights, not
    the case's (3.5 off); golden.py restores the built state in place instead."""
    dest = tmp_path / "op"
    report = _importer.import_task(write_task(tmp_path, CAUSAL_BLOCK_LAZY, "322_CausalBlock_lazy_mask.py"), dest)
    assert any("self.attn.bias on its first call" in n for n in report.notes)
    names = [t["name"] for t in spec_of(dest)["inputs"]]
    assert names[0] == "x" and "attn_c_attn_weight" in names and "attn_bias" not in names  # the mask stays inside
    assert _worst_against_a_model_built_per_case(torch_restored, CAUSAL_BLOCK_LAZY, dest) < 1e-5


@pytest.mark.slow
@needs_torch
@pytest.mark.parametrize(("text", "name", "why"), [
    (RUNNING_NORM, "331_RunningNorm_python_state.py", "forward changes self.running and reads it"),
    (CALIBRATED_QUANT, "333_Gemm_Calibrated_Quant.py", "forward changes self.calibrated and reads it"),
    (FIRST_CALL_FLAG, "334_FirstCallFlag.py", "forward changes self.warm and reads it"),
])
def test_state_and_no_route_tasks_are_refused_in_one_line(tmp_path: Path, text: str, name: str, why: str) -> None:
    with pytest.raises(TaskImportError) as err:
        _importer.import_task(write_task(tmp_path, text, name), tmp_path / "op")
    message = str(err.value)
    assert why in message and "\n" not in message and "Traceback" not in message
    assert "self.steps" not in message  # RunningNorm's counter changes but is never read
    assert not (tmp_path / "op").exists()


def _io(spec: dict[str, Any]) -> tuple[list[tuple[str, str, list[Any]]], list[tuple[str, str, list[Any]]]]:
    return ([(t["name"], t["dtype"], t["shape"]) for t in spec["inputs"]],
            [(t["name"], t["dtype"], t["shape"]) for t in spec["outputs"]])


@pytest.mark.slow
@needs_torch
@pytest.mark.parametrize(("text", "name", "want"), [
    (HUBER_LOSS, "302_huber_loss.py", {"outputs": [("out", "T", [])]}),
    (COSINE_LOSS, "303_cosine_similarity_loss.py", {"outputs": [("out", "T", [])]}),
    (MASKED_CUMSUM, "304_masked_cumsum.py", {"inputs": [("x", "T", ["B", "N"]), ("mask", "bool", ["B", "N"])]}),
    (MIN_DEFAULT_DIM, "305_min_reduction_default_dim.py", {"outputs": [("out", "T", [16, 256])]}),
    (GEMM_SCALE_SWISH_CLAMP, "311_Gemm_Scale_Swish_Clamp.py",
     {"names": ["x", "scale", "gemm_weight", "gemm_bias"]}),
    (MATMUL_LAYERNORM_FP16, "312_Matmul_BiasAdd_LayerNorm_GELU_fp16.py",
     {"inputs": [("x", "T", ["B", "K"]), ("bias", "fp32", [256]), ("matmul_weight", "fp32", [256, 512]),
                 ("norm_weight", "fp32", [256]), ("norm_bias", "fp32", [256])], "dtype": "fp16"}),
    (RESIDUAL_RMSNORM_BUFFER, "313_Linear_Residual_RMSNorm_buffer.py",
     {"names": ["x", "residual", "lin_weight", "lin_bias"], "outputs": [("y", "T", ["B", 512]), ("h", "T", ["B", 512])]}),
    (ROUTER_TOPK_FLAG, "314_Gemm_TopK_Softmax_flag.py",
     {"outputs": [("scores", "T", [64, 4]), ("experts", "int32", [64, 4])], "ties": "unspecified"}),
    (MLP_LAYER_LIST, "321_MLP_layer_list_default_act.py",
     {"names": ["x"] + [f"network_{i}_{p}" for i in (0, 2, 4) for p in ("weight", "bias")]}),
    (SQUEEZE_EXCITE, "323_SqueezeExcite_MLP.py", {"outputs": [("out", "T", [10, 64, 56, 56])]}),
    (BF16_MODEL, "342_half_model_bf16.py",
     {"inputs": [("x", "T", [64, 256]), ("up_weight", "T", [512, 256]), ("down_weight", "T", [256, 512])],
      "dtype": "bf16"}),
    (INPLACE_INPUT, "343_inplace_input_return.py", {"outputs": [("out", "T", ["B", 1024])], "dtype": "fp16"}),
])
def test_messy_level1_to_level3_tasks_import_as_a_user_expects(tmp_path: Path, text: str, name: str,
                                                                 want: dict[str, Any]) -> None:
    _importer.import_task(write_task(tmp_path, text, name), tmp_path / "op")
    spec = spec_of(tmp_path / "op")
    inputs, outputs = _io(spec)
    if "inputs" in want:
        assert inputs == want["inputs"]
    if "names" in want:
        assert [n for n, _, _ in inputs] == want["names"]
    if "outputs" in want:
        assert outputs == want["outputs"]
    assert spec["supported_dtypes"] == [want.get("dtype", "fp32")]
    if "ties" in want:
        assert spec.get("ties") == want["ties"]
    golden = (tmp_path / "op" / "golden.py").read_text(encoding="utf-8")
    assert ("_PtoForgeCpuDevices" in golden) == bool(re.search(r"""["']cuda""", text))
