"""Real-gym-style test scripts of round s41 around the gym's *real* operators, run unmodified under
``python -m runtime.emulator`` as a gym user runs them (``cd <dir> && TILE_FWK_DEVICE_ID=0 PYTHONPATH=<op>/src
python -m runtime.emulator <command>``).

Earlier rounds (s36-s40) wrote their scripts around small kernels of their own; these thirteen import the vendor's
kernels from ``shared/gym/ops/<op>/src`` (``PYTHONPATH=<op>/src``, nothing of the vendor's is copied here; the
scripts are written to a temporary folder) in the styles people write around them: pytest parametrize with
session fixtures on ``torch.npu.current_device()`` (sigmoid, interleave_rope bf16/fp16), a ``unittest`` main with
``subTest`` and an Event benchmark (rms_norm), ``torch.compile`` of a module around a kernel (sigmoid: a graph
break) and of the gym's ``allow_in_graph`` router (llada2_gate_select) and registered custom op
(gated_delta_rule), ``torch.vmap`` / ``functorch.vmap`` goldens beside kernels called from a thread pool
(mhc_sinkhorn), spawned ``Pool`` / ``Process`` + ``Queue`` workers (attn_softmax, gather_pa_kv_cache), a
``torch.autograd.Function`` whose backward is the gym's grad kernel (flash_attention_score_grad), checkpoints
saved with ``torch.save`` and read back with ``map_location`` functions (apply_adam_w_v2, interleave_rope), a
decode loop feeding state back on ``"npu:0"`` with ``time.perf_counter`` and script-configured logging
(sum_lstm), and an environment variable the gym's impl reads at import (gqa_decode_attn's
``GEMMA4_PTO_BUILD_DIR``).

What failed (or said something a device host does not) before this round's fixes, each pinned below:

- ``torch.load(f, map_location=lambda storage, loc: storage.npu())`` died: "'UntypedStorage' object has no
  attribute 'npu'" (torch_npu gives every storage ``npu()``); the tensors now come back on the NPU, those of
  ``lambda storage, loc: storage`` on the host (adamw_ckpt.py, test_rope_dtypes.py);
- ``torch.vmap(golden)(x_npu).device`` / ``functorch.vmap`` / ``torch.func.grad`` / ``jacrev`` results said
  ``cpu`` (s40's review had only stopped them counting as host tensors in a mixed operation): the script's check
  that its golden ran on the NPU failed (threads_vmap.py, exit 3 / FAIL);
- a custom operator registered for the NPU (``torch.library.impl(lib, "op", "NPU")``: gated_delta_rule's
  ``torch.ops.pypto.gated_delta_rule_qwen3_5``, its ``gated_delta_rule_pypto`` entry for torch.compile /
  aclgraph) died on NPU tensors with "Could not run 'pypto::gated_delta_rule_qwen3_5' with arguments from the
  'CPU' backend" (compile_prefill.py); with host tensors it still raises that, as a device host does.

Not changed (no evidence of what the device does): ``torch.compile`` of the gym's ``attn_softmax_wrapper``
(``allow_in_graph``, no FakeTensor guard unlike llada2's) calls the kernel with FakeTensors while Dynamo traces;
the emulator refuses (".numpy() is not supported for tensor subclasses"), what pypto 0.2.0 does then is unknown.
A ``torch.jit.script`` function's result still says ``cpu`` (it is a C++ ``ScriptFunction``; wrapping it would
change its type).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from test_scripts import needs_torch
from test_scripts_s38 import _ok, _run, _write  # the runner as a gym user types it

ROOT = Path(__file__).resolve().parents[2]
GYM = (Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared") / "gym").resolve()
needs_gym = pytest.mark.skipif(not (GYM / "ops").is_dir(), reason=f"the gym corpus is not here ({GYM}; set "
                               "FORGE_SHARED)")


def _gym(op: str, tmp_path: Path, name: str, body: str, *args: str, timeout: float = 600):
    """Write the script to ``tmp/<op>/`` and run it there with ``PYTHONPATH=<gym>/ops/<op>/src``."""
    where = tmp_path / op
    _write(where / name, body)
    return _run([*args] if args and args[0] == "-m" else [name, *args], where, src=GYM / "ops" / op / "src",
                timeout=timeout)


# ---- the three fixes on tiny tensors (no gym operator: fast tier) -------------------------------------------------

MAP_LOCATION_TEST = r"""
'''torch.load with the map_location forms scripts use, on a file of NPU tensors saved with torch.save.'''
import os
import sys
import tempfile

import torch
import torch_npu  # noqa: F401

x = torch.arange(6.0).npu()
path = os.path.join(tempfile.mkdtemp(), "state.pt")
torch.save({"out": x, "nested": [x * 2], "step": 3}, path)
forms = {
    "lambda host": lambda storage, loc: storage,
    "lambda npu": lambda storage, loc: storage.npu(),
    "lambda npu(0)": lambda s, l: s.npu(0),
    "def": None,
    "dict": {"npu:0": "cpu"},
}


def to_npu(storage, location):
    return storage.npu() if not storage.is_npu else storage


forms["def"] = to_npu
seen = {}
for name, ml in forms.items():
    state = torch.load(path, map_location=ml)
    seen[name] = (state["out"].device.type, state["nested"][0].device.type, state["step"])
    print(name, seen[name])
host = torch.load(path, map_location=lambda storage, loc: storage)
print("numpy of host copy:", host["out"].numpy().tolist())
back = torch.load(path, map_location=lambda storage, loc: storage.npu())
try:
    back["out"].numpy()
    print("numpy of npu copy: allowed")
except TypeError as e:
    print("numpy of npu copy:", str(e).split(",")[0])
ok = seen == {"lambda host": ("cpu", "cpu", 3), "lambda npu": ("npu", "npu", 3), "lambda npu(0)": ("npu", "npu", 3),
              "def": ("npu", "npu", 3), "dict": ("cpu", "cpu", 3)}
ok &= torch.equal(back["out"].cpu(), host["out"]) and torch.equal(back["nested"][0], x * 2)
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
"""

TRANSFORMS_TEST = r"""
'''Function transforms of a golden on NPU tensors: their results are on the NPU (a host input stays on the host).'''
import sys

import functorch
import torch
import torch_npu  # noqa: F401

x = torch.randn(4, 8, device="npu")
f = lambda r: (r * r).sum()  # noqa: E731
res = {
    "torch.vmap": torch.vmap(lambda r: torch.softmax(r, -1))(x).device.type,
    "func.vmap in_dims": torch.func.vmap(lambda a, b: a + b, in_dims=(0, None))(x, x[0]).device.type,
    "functorch.vmap": functorch.vmap(lambda r: r * 2)(x).device.type,
    "func.grad": torch.func.grad(f)(x[0]).device.type,
    "vmap(grad)": torch.vmap(torch.func.grad(f))(x).device.type,
    "grad_and_value": [t.device.type for t in torch.func.grad_and_value(f)(x[0])],
    "jacrev": torch.func.jacrev(lambda r: r * 2)(x[0]).device.type,
    "host vmap": torch.vmap(lambda r: r * 2)(torch.randn(3, 2)).device.type,
}
for k, v in res.items():
    print(f"{k}: {v}")
torch.testing.assert_close(torch.vmap(lambda r: r * 1)(x), x)  # same device attribute
expected = {"torch.vmap": "npu", "func.vmap in_dims": "npu", "functorch.vmap": "npu", "func.grad": "npu",
            "vmap(grad)": "npu", "grad_and_value": ["npu", "npu"], "jacrev": "npu", "host vmap": "cpu"}
print("PASS" if res == expected else "FAIL")
sys.exit(0 if res == expected else 1)
"""

CUSTOM_OP_TEST = r"""
'''A custom operator registered for the NPU (and Meta, for torch.compile), as the gym registers its kernels.'''
import sys

import torch
import torch_npu  # noqa: F401

lib = torch.library.Library("mygym", "FRAGMENT")
lib.define("scale_add(Tensor x, float a) -> Tensor")
lib.define("twice(Tensor x) -> Tensor")


@torch.library.impl(lib, "scale_add", "Meta")
def _meta(x, a):
    return torch.empty_like(x)


@torch.library.impl(lib, "scale_add", "NPU")
def _npu(x, a):
    return x * a + 1


lib.impl("twice", lambda x: x * 2, "PrivateUse1")
lib.impl("twice", lambda x: x * 2 + 100, "CPU")  # a host implementation of its own


@torch.library.custom_op("mygym::cube", mutates_args=(), device_types="npu")
def cube(x: torch.Tensor) -> torch.Tensor:
    return x * x * x


@cube.register_fake
def _(x):
    return torch.empty_like(x)

x = torch.ones(3, device="npu:0")
y = torch.ops.mygym.scale_add(x, 2.0)
print("npu call:", y.tolist(), y.device)
z = torch.compile(lambda t: torch.ops.mygym.scale_add(t, 3.0) * 2, backend="eager", fullgraph=True)(x)
print("compiled:", z.tolist(), z.device)
print("twice npu / host:", torch.ops.mygym.twice(x).tolist(), torch.ops.mygym.twice(torch.ones(3)).tolist())
c = cube(x * 2)
print("custom_op:", c.tolist(), c.device)
try:
    torch.ops.mygym.scale_add(torch.ones(3), 2.0)
    print("host call: ran")
except NotImplementedError as e:
    print("host call:", str(e).split(".")[0])
ok = y.tolist() == [3.0] * 3 and y.device.type == "npu" and z.tolist() == [8.0] * 3 and z.is_npu and c.is_npu
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
"""


@pytest.mark.slow
@needs_torch
def test_torch_load_map_location_functions_place_tensors(tmp_path: Path) -> None:
    """Before: "'UntypedStorage' object has no attribute 'npu'" (exit 3) at the first ``storage.npu()``."""
    _write(tmp_path / "t_load.py", MAP_LOCATION_TEST)
    _ok(_run(["t_load.py"], tmp_path), "lambda npu(0) ('npu', 'npu', 3)", "lambda host ('cpu', 'cpu', 3)",
        "numpy of host copy: [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]", "numpy of npu copy: can't convert npu:0", "PASS")


@pytest.mark.slow
@needs_torch
def test_function_transform_results_are_on_the_npu(tmp_path: Path) -> None:
    """Before: every transform's result said ``cpu`` (FAIL, exit 1)."""
    _write(tmp_path / "t_transforms.py", TRANSFORMS_TEST)
    _ok(_run(["t_transforms.py"], tmp_path), "torch.vmap: npu", "functorch.vmap: npu", "host vmap: cpu", "PASS")


@needs_torch
def test_custom_operator_registered_for_the_npu(tmp_path: Path) -> None:
    """Before: "Could not run 'mygym::scale_add' with arguments from the 'CPU' backend" on NPU tensors (exit 3).
    Host tensors still get that error (a device host's), or the operator's own CPU implementation."""
    _write(tmp_path / "t_custom_op.py", CUSTOM_OP_TEST)
    _ok(_run(["t_custom_op.py"], tmp_path), "npu call: [3.0, 3.0, 3.0] npu:0", "compiled: [8.0, 8.0, 8.0] npu:0",
        "twice npu / host: [2.0, 2.0, 2.0] [102.0, 102.0, 102.0]", "custom_op: [8.0, 8.0, 8.0] npu:0",
        "host call: Could not run 'mygym::scale_add' with arguments from the 'CPU' backend", "PASS")


def test_transformed_functions_mark_their_results_in_process() -> None:
    """`wrap_transform` without the stand-in installed: NPU inputs give NPU results, host inputs stay unmarked."""
    torch = pytest.importorskip("torch")
    from runtime.emulator._torch_npu_device import wrap_transform
    from runtime.emulator._torch_npu_placement import is_on_npu, mark

    x = torch.randn(3, 4)
    mark(x, True)
    vmap = wrap_transform(torch, torch.func.vmap)
    assert wrap_transform(torch, vmap) is vmap  # idempotent
    assert is_on_npu(vmap(lambda r: r * 2)(x))
    assert not is_on_npu(vmap(lambda r: r * 2)(torch.randn(3, 4)))
    row = torch.randn(4)  # (no placement mode in this process: x[0] would be unmarked)
    mark(row, True)
    value, grad = wrap_transform(torch, torch.func.grad_and_value)(lambda r: (r * r).sum())(row)
    assert is_on_npu(value) and is_on_npu(grad)


def test_map_location_function_places_each_tensor_in_process(tmp_path: Path) -> None:
    """`_load_with_function`: the tensors whose storage the function put on the NPU are NPU tensors, the others
    host tensors; a storage ``npu()`` outside a load changes nothing."""
    torch = pytest.importorskip("torch")
    from runtime.emulator._torch_npu import _load_with_function, _storage_is_npu, _storage_npu
    from runtime.emulator._torch_npu_placement import is_on_host, is_on_npu

    path = tmp_path / "t.pt"
    torch.save({"a": torch.ones(2), "b": torch.zeros(3)}, path)
    s = torch.ones(1).untyped_storage()
    assert _storage_npu(s) is s and not _storage_is_npu(s)

    def some(storage: object, loc: str) -> object:
        return _storage_npu(storage) if storage.nbytes() == 8 else storage  # type: ignore[attr-defined]

    state = _load_with_function(torch.load, (path,), {"map_location": some})
    assert is_on_npu(state["a"]) and is_on_host(state["b"])
    state = _load_with_function(torch.load, (path,), {"map_location": lambda storage, loc: storage})
    assert is_on_host(state["a"]) and is_on_host(state["b"])


# ---- the scripts around the gym's operators -----------------------------------------------------------------------

SIGMOID_PYTEST = r"""
'''Sigmoid: pytest parametrized over shapes, inputs from a fixture on the current NPU, assert_close after .cpu().'''
import os

import pytest
import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tile.experimental.vector.sigmoid.sigmoid_impl import Sigmoid_wrapper


@pytest.fixture(scope="module")
def device():
    dev_id = int(os.environ.get("TILE_FWK_DEVICE_ID", 0))
    torch.npu.set_device(dev_id)
    return torch.device("npu", torch.npu.current_device())


@pytest.fixture
def make_input(device):
    def _make(shape, seed=0):
        torch.npu.manual_seed(seed)
        torch.manual_seed(seed)
        return torch.randn(*shape, dtype=torch.float32, device=device)
    return _make


@pytest.mark.parametrize("shape", [(1, 512), (16, 1024), (33, 700), (64, 2048)], ids=lambda s: "x".join(map(str, s)))
def test_sigmoid_matches_torch(make_input, shape):
    x = make_input(shape, seed=shape[0])
    y = Sigmoid_wrapper(x)
    torch.npu.synchronize()
    assert y.device.type == "npu" and y.shape == x.shape and y.dtype == torch.float32
    torch.testing.assert_close(y.cpu(), torch.sigmoid(x.cpu()), rtol=1e-3, atol=1e-3)


def test_sigmoid_on_npu_golden(make_input):
    x = make_input((8, 2048), seed=5)
    golden = torch.sigmoid(x)            # the golden on the NPU too
    torch.testing.assert_close(Sigmoid_wrapper(x), golden, rtol=1e-3, atol=1e-3)


def test_sigmoid_extremes(device):
    x = torch.tensor([[100.0, -100.0, 0.0, 1e10] * 128], device=device)
    y = Sigmoid_wrapper(x).cpu()
    assert torch.isfinite(y).all()
    assert y[0, 0].item() == pytest.approx(1.0, abs=1e-4) and y[0, 1].item() == pytest.approx(0.0, abs=1e-4)
    assert y[0, 2].item() == pytest.approx(0.5, abs=1e-6)
"""


SIGMOID_COMPILE = r"""
'''A gated MLP block whose gate uses the gym's Sigmoid kernel, wrapped in torch.compile (the kernel call is a graph
break), run in bf16 autocast-free fp32 on the NPU and compared with the eager module after .cpu().'''
import sys

import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tile.experimental.vector.sigmoid.sigmoid_impl import Sigmoid_wrapper


class GatedBlock(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = torch.nn.Linear(d, 2 * d)

    def forward(self, x, use_kernel=True):
        a, b = self.proj(x).chunk(2, dim=-1)
        gate = Sigmoid_wrapper(b) if use_kernel else torch.sigmoid(b)
        return a * gate


torch.manual_seed(0)
torch.npu.manual_seed(0)
block = GatedBlock(256).npu().eval()
x = torch.randn(24, 256).npu()
compiled = torch.compile(block, backend="eager")
with torch.no_grad():
    y = compiled(x)
    y2 = compiled(torch.randn(40, 256, device="npu"))  # a second shape: recompiles / reuses the graph
    ref = block(x, use_kernel=False)
torch.npu.synchronize()
print("compiled out", tuple(y.shape), y.device, "second", tuple(y2.shape), y2.device)
ok = y.device.type == "npu" and y2.is_npu and torch.allclose(y.cpu(), ref.cpu(), rtol=1e-3, atol=1e-3)
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
"""


ATTN_SOFTMAX_POOL = r"""
'''Attention softmax cases over a spawn Pool: each worker sets its device in the initializer, seeds with
torch.npu.manual_seed, runs the bf16 wrapper and returns numpy arrays; the parent checks rows sum to 1, compares
with a float32 golden, and checks a repeated seed gives the same bits. fp16 input is refused by the wrapper.'''
import multiprocessing as mp
import os
import sys

import numpy as np

SRC = "pypto_gym.ops.pypto_tile.gemma4_31b_it.attn_softmax.attn_softmax_impl"


def init_worker():
    import torch
    import torch_npu  # noqa: F401
    torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", "0")))


def run(case):
    import importlib

    import torch
    wrapper = importlib.import_module(SRC).attn_softmax_wrapper
    rows, cols, scale, seed = case
    torch.npu.manual_seed(seed)
    scores = torch.randn(rows, cols, dtype=torch.bfloat16, device=torch.npu.current_device())
    out = wrapper(scores, scale=scale)
    golden = torch.softmax(scores.float() * scale, dim=-1)
    return (case, str(out.device), out.float().cpu().numpy(), golden.cpu().numpy(),
            scores.float().cpu().numpy())


def main():
    cases = [(4, 64, 1.0, 1), (7, 200, 0.125, 2), (9, 130, 0.0625, 3), (7, 200, 0.125, 2)]
    with mp.get_context("spawn").Pool(2, initializer=init_worker) as pool:
        results = pool.map(run, cases)
    ok = True
    for case, dev, out, golden, _ in results:
        np.testing.assert_allclose(out, golden, rtol=7.8125e-3, atol=1e-4)
        rowsum = np.abs(out.sum(-1) - 1).max()
        print(f"rows={case[0]} cols={case[1]} scale={case[2]} on {dev}: max |rowsum-1| {rowsum:.2e}")
        ok &= dev == "npu:0" and rowsum < 2e-2
    same = np.array_equal(results[1][4], results[3][4]) and np.array_equal(results[1][2], results[3][2])
    print("same seed, same bits:", same)
    import torch
    import torch_npu  # noqa: F401
    import importlib
    wrapper = importlib.import_module(SRC).attn_softmax_wrapper
    try:
        wrapper(torch.randn(2, 64, dtype=torch.float16).npu())
        refused = False
    except AssertionError:
        refused = True
    print("fp16 refused:", refused)
    ok &= same and refused
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"""


LLADA2_ROUTER = r"""
'''LLaDA2 router: a torch.compile'd MoE gate module that calls the fused kernel (allow_in_graph, FakeTensor guard),
timed with torch_npu.npu.Event after a warm-up, ids checked as sets against a torch reference.'''
import os
import sys

import torch
import torch_npu

from pypto_gym.ops.pypto_tile.llada2_moe.llada2_gate_select_impl import llada2_gate_select

H, E, K, GROUPS, TOPK_GROUP, SCALE = 2048, 256, 8, 8, 4, 2.5


class Router(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(E, H) * 0.05)
        self.bias = torch.nn.Parameter(torch.randn(E) * 0.01, requires_grad=False)

    def forward(self, hidden):
        n = hidden.shape[0]
        tw = torch.empty(n, K, dtype=torch.float32, device=hidden.device)
        ids = torch.empty(n, K, dtype=torch.int32, device=hidden.device)
        llada2_gate_select(hidden, self.weight, self.bias, tw, ids, top_k=K, topk_group=TOPK_GROUP,
                           num_expert_group=GROUPS, routed_scaling_factor=SCALE)
        return tw, ids


def reference(hidden, w, b):
    scores = torch.sigmoid(hidden.float() @ w.float().T)
    aug = scores + b
    n = aug.shape[0]
    gscore = aug.view(n, GROUPS, -1).amax(-1)
    gidx = torch.topk(gscore, TOPK_GROUP, dim=-1, sorted=False)[1]
    gmask = torch.zeros_like(gscore).scatter_(1, gidx, 1)
    smask = gmask.unsqueeze(-1).expand(n, GROUPS, E // GROUPS).reshape(n, -1)
    ids = torch.topk(aug.masked_fill(~smask.bool(), float("-inf")), K, dim=-1)[1]
    tw = torch.gather(scores, 1, ids)
    return ids, tw / (tw.sum(-1, keepdim=True) + 1e-20) * SCALE


def main():
    dev_id = int(os.environ.get("TILE_FWK_DEVICE_ID", "0"))
    torch_npu.npu.set_device(dev_id)
    torch.manual_seed(0)
    torch.npu.manual_seed(0)
    router = Router().to(f"npu:{dev_id}").eval()
    compiled = torch.compile(router, backend="eager", dynamic=False)
    hidden = (torch.randn(16, H, dtype=torch.bfloat16) * 0.02).to(f"npu:{dev_id}")
    with torch.no_grad():
        for _ in range(2):  # warm-up: the first call compiles (dynamo) and builds the kernel
            tw, ids = compiled(hidden)
        torch.npu.synchronize()
        start = torch_npu.npu.Event(enable_timing=True)
        end = torch_npu.npu.Event(enable_timing=True)
        start.record()
        for _ in range(3):
            tw, ids = compiled(hidden)
        end.record()
        end.synchronize()
        print(f"avg {start.elapsed_time(end) / 3:.3f} ms per call; outputs on {tw.device}, {ids.dtype}")
        ref_ids, ref_tw = reference(hidden, router.weight, router.bias)
    bad = 0
    for i in range(hidden.shape[0]):
        got, exp = ids[i].cpu().tolist(), ref_ids[i].cpu().tolist()
        if sorted(got) != sorted(exp):
            bad += 1
            continue
        for eid in got:
            if abs(tw[i, got.index(eid)].item() - ref_tw[i, exp.index(eid)].item()) > 1e-3:
                bad += 1
                break
    print(f"rows bad: {bad}/{hidden.shape[0]}")
    print("PASS" if bad == 0 and tw.device.type == "npu" else "FAIL")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
"""


RMS_NORM_UNITTEST = r"""
'''RMSNorm as a unittest main (no pytest): setUpClass picks the device from TILE_FWK_DEVICE_ID, seeds with
torch.npu.manual_seed, compares with np.testing after .cpu(), and a benchmark test with warm-up and Event timing.'''
import os
import sys
import unittest

import numpy as np
import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tile.experimental.vector.rms_norm.rms_norm_impl import RMSNorm_wrapper


def golden(x, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(dim=1, keepdim=True) + eps)


class TestRMSNorm(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.device_id = int(os.getenv("TILE_FWK_DEVICE_ID", "0"))
        torch.npu.set_device(cls.device_id)
        cls.device = f"npu:{cls.device_id}"

    def setUp(self):
        torch.manual_seed(1234)
        torch.npu.manual_seed(1234)

    def test_batch_sizes(self):
        for batch in (1, 2):
            with self.subTest(batch=batch):
                x = torch.randn(batch, 64, 256, 256, device=self.device)
                y = RMSNorm_wrapper(x, eps=1e-5)
                self.assertEqual(y.device, x.device)
                np.testing.assert_allclose(y.cpu().numpy(), golden(x, 1e-5).cpu().numpy(), rtol=1e-4, atol=1e-4)

    def test_seed_is_reproducible(self):
        torch.npu.manual_seed(7)
        a = torch.randn(1, 64, 256, 256, device=self.device)
        torch.npu.manual_seed(7)
        b = torch.randn(1, 64, 256, 256, device=self.device)
        self.assertTrue(torch.equal(a, b))
        self.assertTrue(torch.equal(RMSNorm_wrapper(a), RMSNorm_wrapper(b)))

    def test_benchmark(self):
        x = torch.randn(1, 64, 256, 256, device=self.device)
        for _ in range(2):
            RMSNorm_wrapper(x)
        torch.npu.synchronize()
        start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
        start.record()
        for _ in range(3):
            y = RMSNorm_wrapper(x)
        end.record()
        torch.npu.synchronize()
        ms = start.elapsed_time(end) / 3
        print(f"rms_norm 1x64x256x256: {ms:.3f} ms/iter")
        self.assertGreater(ms, 0.0)
        self.assertTrue(torch.allclose(y.cpu(), golden(x.cpu(), 1e-5), rtol=1e-4, atol=1e-4))


if __name__ == "__main__":
    unittest.main(verbosity=2)
"""


ADAMW_CKPT = r"""
'''AdamW steps with the fused kernel, state checkpointed with torch.save and resumed with torch.load under the
map_location forms scripts use (a lambda to the host, a lambda to the NPU, a dict, a device string).'''
import os
import sys
import tempfile

import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tile.experimental.vector.ApplyAdamWV2.apply_adam_w_v2_impl import apply_adam_w_v2_wrapper

HP = dict(beta1=0.9, beta2=0.999, lr=1e-3, weight_decay=0.01, eps=1e-8)


def golden(w, g, m, v, step):
    b1, b2 = HP["beta1"], HP["beta2"]
    m = b1 * m + (1 - b1) * g.float()
    v = b2 * v + (1 - b2) * g.float() * g.float()
    upd = (m / (1 - b1 ** step)) / ((v / (1 - b2 ** step)).sqrt() + HP["eps"]) + HP["weight_decay"] * w.float()
    return (w.float() - HP["lr"] * upd).to(w.dtype), m, v


def main():
    dev = torch.device("npu", int(os.environ.get("TILE_FWK_DEVICE_ID", 0)))
    torch.npu.set_device(dev)
    torch.manual_seed(0)
    w = torch.randn(7168, 64, device=dev)
    m = torch.zeros_like(w)
    v = torch.zeros_like(w)
    ref = (w.cpu(), m.cpu(), v.cpu())
    ckpt = os.path.join(tempfile.mkdtemp(), "adamw.pt")
    for step in (1, 2):
        g = torch.randn_like(w)
        w, m, v = apply_adam_w_v2_wrapper(w, g, m, v, step=step, **HP)
        ref = golden(ref[0], g.cpu(), ref[1], ref[2], step)
    torch.save({"step": 2, "weight": w, "m": m, "v": v}, ckpt)
    results = {}
    forms = {
        "lambda host": lambda storage, loc: storage,
        "lambda npu": lambda storage, loc: storage.npu(),
        "dict": {"npu:0": "cpu"},
        "str npu": "npu:0",
        "device cpu": torch.device("cpu"),
    }
    for name, ml in forms.items():
        state = torch.load(ckpt, map_location=ml)
        results[name] = state["weight"].device.type
    print(results)
    expected = {"lambda host": "cpu", "lambda npu": "npu", "dict": "cpu", "str npu": "npu", "device cpu": "cpu"}
    ok = results == expected
    # resume on the NPU from a host copy and take step 3
    state = torch.load(ckpt, map_location=lambda s, l: s)
    w3, m3, v3 = (state[k].npu() for k in ("weight", "m", "v"))
    g = torch.randn_like(w3)
    w3, m3, v3 = apply_adam_w_v2_wrapper(w3, g, m3, v3, step=state["step"] + 1, **HP)
    ref = golden(ref[0], g.cpu(), ref[1], ref[2], 3)
    torch.testing.assert_close(w3.cpu(), ref[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(m3.cpu(), ref[1], rtol=1e-5, atol=1e-6)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"""


SINKHORN_THREADS_VMAP = r"""
'''mhc_sinkhorn: kernels called from a thread pool (one stream per thread), the golden written per matrix and
batched with torch.vmap / functorch.vmap on the NPU, compared on the NPU with torch.allclose and after .cpu().'''
import concurrent.futures as cf
import sys
import threading

import functorch
import numpy as np
import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tile.experimental.vector.mhc_sinkhorn.mhc_sinkhorn_impl import mhc_sinkhorn_wrapper

EPS, ITERS = 1e-6, 20


def sinkhorn_one(m):
    h = torch.softmax(m, dim=-1) + EPS
    h = h / (h.sum(dim=-2, keepdim=True) + EPS)
    for _ in range(ITERS - 1):
        h = h / (h.sum(dim=-1, keepdim=True) + EPS)
        h = h / (h.sum(dim=-2, keepdim=True) + EPS)
    return h


def run_case(tokens):
    torch.npu.set_device(0)
    stream = torch.npu.Stream()
    with torch.npu.stream(stream):
        x = torch.randn(tokens, 4, 4, dtype=torch.float32, device="npu")
        out = mhc_sinkhorn_wrapper(x, EPS, ITERS)
    stream.synchronize()
    return threading.current_thread().name, x, out


def main():
    torch.manual_seed(42)
    torch.npu.manual_seed_all(42)
    with cf.ThreadPoolExecutor(max_workers=3, thread_name_prefix="sinkhorn") as pool:
        results = list(pool.map(run_case, [8, 24, 40]))
    fails = 0
    for name, x, out in results:
        ref = torch.vmap(sinkhorn_one)(x)
        ref2 = functorch.vmap(sinkhorn_one)(x)
        on_npu = ref.device.type == "npu" and ref2.is_npu and out.device == x.device
        close = torch.allclose(out, ref, rtol=7.8125e-3, atol=1e-4) and torch.allclose(ref, ref2)
        np.testing.assert_allclose(out.cpu().numpy(), ref.cpu().numpy(), rtol=7.8125e-3, atol=1e-4)
        rows = out.sum(-1).cpu()
        print(f"{name}: tokens={x.shape[0]} golden on {ref.device} max|row sum-1|={float((rows - 1).abs().max()):.2e}")
        fails += not (on_npu and close)
    print("PASS" if fails == 0 else f"FAIL ({fails})")
    return fails


if __name__ == "__main__":
    sys.exit(main())
"""


GATHER_SPAWN = r"""
'''Paged KV-cache gather: cases spread over spawned worker processes (torch.multiprocessing, spawn), each seeding
with torch.npu.manual_seed and returning its max error through a Queue; the parent checks every case.'''
import os
import sys

import torch
import torch.multiprocessing as mp
import torch_npu  # noqa: F401

BLOCKS, BLOCK, KD, VD = 64, 128, 512, 64
CASES = [{"name": "decode", "seq_lens": [1, 3, 2, 1]}, {"name": "prefill", "seq_lens": [130, 7]},
         {"name": "one", "seq_lens": [256]}]


def golden(cache, tables, seq_lens):
    rows = []
    for q, n in enumerate(seq_lens):
        for t in range(n):
            rows.append(cache[tables[q, t // BLOCK], t % BLOCK])
    return torch.stack(rows)


def worker(rank, case, queue):
    from pypto_gym.ops.pypto_tile.experimental.vector.gather_pa_kv_cache.gather_pa_kv_cache_impl import (
        gather_pa_kv_cache_wrapper)

    device_id = int(os.environ.get("TILE_FWK_DEVICE_ID", "0"))
    torch.npu.set_device(device_id)
    torch.manual_seed(rank)
    torch.npu.manual_seed(rank)
    dev = torch.device(f"npu:{device_id}")
    kc = torch.randn(BLOCKS, BLOCK, 1, KD, dtype=torch.bfloat16, device=dev)
    vc = torch.randn(BLOCKS, BLOCK, 1, VD, dtype=torch.bfloat16, device=dev)
    seq_lens = case["seq_lens"]
    width = max((n + BLOCK - 1) // BLOCK for n in seq_lens)
    tables = torch.randperm(BLOCKS)[: len(seq_lens) * width].view(len(seq_lens), width).int().to(dev)
    lens = torch.tensor(seq_lens, dtype=torch.int32).to(dev)
    k, v = gather_pa_kv_cache_wrapper(kc, vc, tables, lens)
    torch.npu.synchronize()
    gk, gv = golden(kc.cpu(), tables.cpu(), seq_lens), golden(vc.cpu(), tables.cpu(), seq_lens)
    exact = torch.equal(k.cpu(), gk) and torch.equal(v.cpu(), gv)
    queue.put((case["name"], tuple(k.shape), str(k.device), exact))


def main():
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(i, c, queue)) for i, c in enumerate(CASES)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    bad = [p.exitcode for p in procs if p.exitcode != 0]
    for name, shape, dev, exact in sorted(results):
        print(f"{name:8s} key_ref {shape} on {dev}: {'PASS' if exact else 'FAIL'}")
    ok = not bad and all(r[3] and r[2] == "npu:0" for r in results)
    print("ALL PASS" if ok else f"FAILED exitcodes={bad}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"""


SUM_LSTM_DECODE = r"""
'''Arctic sum-LSTM in a speculative decode loop: fp16 state fed back step after step on "npu:0" (inputs moved with
.to("npu:0")), a time.perf_counter benchmark bracketed by torch.npu.synchronize(), and a float32 golden run on the
host, compared per step with torch.allclose after .cpu(); logging configured by the script.'''
import argparse
import logging
import sys
import time

import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tile.arctic.sum_lstm import LstmConfig, sum_lstm

H = 4096
log = logging.getLogger("sum_lstm_decode")


def rms(x, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


def golden(states, z4, prev, wc, bc, ws, bs, cfg):
    fused = states.float() + cfg.alpha * z4.float()
    f, i, o, c = torch.split(fused, H, dim=-1)
    gelu = lambda t: t * torch.sigmoid(1.702 * t)  # noqa: E731
    c_new = prev.float() * torch.sigmoid(f) + gelu(rms(c, cfg.eps_cell) * wc.float() + bc.float()) * torch.sigmoid(i)
    h_new = gelu(rms(c_new, cfg.eps_state) * ws.float() + bs.float()) * torch.sigmoid(o)
    return h_new.half(), c_new.half()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--batch", type=int, default=4)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", force=True)
    torch.npu.set_device("npu:0")
    torch.manual_seed(11)
    cfg = LstmConfig(alpha=0.1, eps_cell=1e-6, eps_state=1e-6)
    kernel = sum_lstm("npu")
    weights = [torch.randn(H, dtype=torch.float16).to("npu:0") for _ in range(4)]
    c = torch.zeros(args.batch, H, dtype=torch.float16).to("npu:0")
    c_ref = c.cpu()
    ok = True
    elapsed = 0.0
    for step in range(args.steps):
        states = torch.randn(args.batch, 4 * H, dtype=torch.float16).to("npu:0")
        z4 = torch.randn(args.batch, 4 * H, dtype=torch.float16).to("npu:0")
        h_out = torch.empty(args.batch, H, dtype=torch.float16, device="npu:0")
        c_out = torch.empty_like(h_out)
        torch.npu.synchronize()
        t0 = time.perf_counter()
        kernel(states, z4, c, *weights, h_out, c_out, cfg)
        torch.npu.synchronize()
        elapsed += time.perf_counter() - t0
        h_ref, c_ref = golden(states.cpu(), z4.cpu(), c_ref, *(w.cpu() for w in weights), cfg)
        good = torch.allclose(h_out.cpu().float(), h_ref.float(), rtol=1e-3, atol=5e-3) and \
            torch.allclose(c_out.cpu().float(), c_ref.float(), rtol=5e-3, atol=5e-3)
        log.info("step %d: h max diff %.3e %s", step, (h_out.cpu().float() - h_ref.float()).abs().max().item(),
                 "ok" if good else "MISMATCH")
        ok &= good
        c = c_out  # the cell state is fed back on the device
    log.info("mean %.2f ms/step over %d steps", elapsed * 1e3 / args.steps, args.steps)
    print("PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"""


ROPE_PYTEST = r"""
'''Interleave RoPE under pytest: bf16 and fp16 variants x head counts x sequence lengths, inputs built with
.to(device) from a session fixture, the golden in float32 on the NPU, outputs saved with torch.save and reloaded
with torch.load(map_location=...) for a bit-exact replay check.'''
import os

import pytest
import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tensor.experimental.vector.InterleaveRope.interleave_rope_impl import interleave_rope_wrapper

TOL = {torch.bfloat16: dict(rtol=7.8125e-3, atol=7.8125e-3), torch.float16: dict(rtol=9.765625e-4, atol=9.765625e-4)}


@pytest.fixture(scope="session")
def device():
    idx = int(os.environ.get("TILE_FWK_DEVICE_ID", "0"))
    torch.npu.set_device(idx)
    return torch.device(f"npu:{idx}")


def rope_golden(x, cos, sin):
    xf, cf, sf = x.float(), cos.float(), sin.float()
    xe, xo = xf[..., 0::2], xf[..., 1::2]
    ye = xe * cf[..., 0::2] - xo * sf[..., 0::2]
    yo = xe * sf[..., 1::2] + xo * cf[..., 1::2]
    return torch.cat([ye, yo], dim=-1).to(x.dtype)


def make(b, n, s, dtype, device, s_cs=None):
    g = torch.Generator().manual_seed(b * 1000 + n * 10 + s)
    x = torch.randn(b, n, s, 64, generator=g).to(dtype)
    ang = torch.rand(b, 1, s if s_cs is None else s_cs, 64, generator=g) * 6.28
    return x.to(device), ang.cos().to(dtype).to(device), ang.sin().to(dtype).to(device)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("n,s", [(1, 2), (1, 70), (128, 3), (128, 17)])
def test_interleave_rope(device, dtype, n, s):
    x, cos, sin = make(2, n, s, dtype, device)
    out = interleave_rope_wrapper(x, cos, sin)
    ref = rope_golden(x, cos, sin)
    assert out.dtype == dtype and out.device == device and ref.device == device
    torch.testing.assert_close(out, ref, **TOL[dtype])


@pytest.mark.parametrize("n", [1, 128])
def test_broadcast_cos_sin_bf16(device, n):
    x, cos, sin = make(1, n, 5, torch.bfloat16, device, s_cs=1)
    out = interleave_rope_wrapper(x, cos, sin)
    torch.testing.assert_close(out.cpu(), rope_golden(x, cos, sin).cpu(), **TOL[torch.bfloat16])


def test_broadcast_fp16_is_refused(device):
    x, cos, sin = make(1, 1, 5, torch.float16, device, s_cs=1)
    with pytest.raises(AssertionError, match="only supported in BF16"):
        interleave_rope_wrapper(x, cos, sin)


def test_saved_output_replays(device, tmp_path):
    x, cos, sin = make(1, 128, 4, torch.bfloat16, device)
    out = interleave_rope_wrapper(x, cos, sin)
    path = tmp_path / "rope_out.pt"
    torch.save({"x": x, "cos": cos, "sin": sin, "out": out}, path)
    host = torch.load(path, map_location="cpu")
    back = torch.load(path, map_location=lambda storage, loc: storage.npu())
    assert host["out"].device.type == "cpu" and back["out"].device == device
    again = interleave_rope_wrapper(back["x"], back["cos"], back["sin"])
    assert torch.equal(again.cpu(), host["out"])
    assert torch.equal(again, back["out"])
"""


GQA_DECODE_BENCH = r"""
'''Gemma-4 GQA decode attention: the build folder chosen with GEMMA4_PTO_BUILD_DIR before the import (as the gym's
impl reads it), a KV cache grown token by token on the NPU, global and sliding-window (local) layers, an Event
timing loop with warm-up, and a float32 golden compared with torch.allclose after .cpu().'''
import os
import sys
import tempfile

BUILD = os.path.join(tempfile.mkdtemp(prefix="gqa_"), "build")
os.environ["GEMMA4_PTO_BUILD_DIR"] = BUILD

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_npu  # noqa: E402,F401

from pypto_gym.ops.pypto_tile.gemma4_31b_it.gqa_decode_attn.gqa_decode_attn_impl import (  # noqa: E402
    W, gqa_decode_attn_wrapper)


def golden(q, k, v, mask, layer_kind):
    if layer_kind == "local" and k.shape[2] > W:
        k, v, mask = k[:, :, -W:], v[:, :, -W:], mask[..., -W:]
    kr = sum(k[:, i::4] for i in range(4)).float() / 4
    vr = sum(v[:, i::4] for i in range(4)).float() / 4
    kr, vr = kr.bfloat16().float(), vr.bfloat16().float()
    kq = kr.repeat_interleave(8, dim=1)
    vq = vr.repeat_interleave(8, dim=1)
    p = F.softmax(q.float() @ kq.transpose(-1, -2) + mask, dim=-1)
    return (p @ vq).transpose(1, 2).bfloat16()


def main():
    dev = torch.device("npu", torch.npu.current_device())
    torch.manual_seed(3)
    torch.npu.manual_seed(3)
    k_cache = torch.randn(1, 16, 60, 256, dtype=torch.bfloat16, device=dev) * 0.3
    v_cache = torch.randn(1, 16, 60, 256, dtype=torch.bfloat16, device=dev) * 0.3
    ok = os.path.isdir(BUILD)
    print("build dir from env:", ok)
    for step in range(3):  # decode: one new token a step
        q = torch.randn(1, 32, 1, 256, dtype=torch.bfloat16, device=dev) * 0.3
        k_cache = torch.cat([k_cache, torch.randn(1, 16, 1, 256, dtype=torch.bfloat16, device=dev) * 0.3], dim=2)
        v_cache = torch.cat([v_cache, torch.randn(1, 16, 1, 256, dtype=torch.bfloat16, device=dev) * 0.3], dim=2)
        mask = torch.zeros(1, 1, 1, k_cache.shape[2], device=dev)
        out = gqa_decode_attn_wrapper(q, k_cache, v_cache, mask, 1.0, "global")
        ref = golden(q, k_cache, v_cache, mask, "global")
        good = out.shape == (1, 1, 32, 256) and torch.allclose(out.cpu().float(), ref.cpu().float(), atol=5e-3,
                                                                 rtol=5e-3)
        print(f"step {step}: skv={k_cache.shape[2]} out on {out.device} {'ok' if good else 'MISMATCH'}")
        ok &= good
    # a local (sliding-window) layer past the window
    k_long = torch.randn(1, 16, W + 70, 256, dtype=torch.bfloat16, device=dev) * 0.3
    v_long = torch.randn_like(k_long) * 0.3
    q = torch.randn(1, 32, 1, 256, dtype=torch.bfloat16, device=dev) * 0.3
    mask = torch.zeros(1, 1, 1, W + 70, device=dev)
    for _ in range(2):  # warm-up
        out = gqa_decode_attn_wrapper(q, k_long, v_long, mask, 1.0, "local")
    torch.npu.synchronize()
    start, end = torch_npu.npu.Event(enable_timing=True), torch_npu.npu.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        out = gqa_decode_attn_wrapper(q, k_long, v_long, mask, 1.0, "local")
    end.record()
    torch.npu.synchronize()
    print(f"local layer skv={W + 70}: {start.elapsed_time(end) / 3:.2f} ms/call")
    good = torch.allclose(out.cpu().float(), golden(q, k_long, v_long, mask, "local").cpu().float(), atol=5e-3, rtol=5e-3)
    print("local:", "ok" if good else "MISMATCH")
    ok &= good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"""


GDR_COMPILE = r"""
'''Qwen3.5 gated delta rule through its registered custom op (torch.ops.pypto.gated_delta_rule_qwen3_5) inside a
torch.compile'd prefill block, against a token-by-token recurrent golden in float32; the modeling-layer switch
USE_PTO_GATED_DELTA_RULE read from the environment as the model code does.'''
import os
import sys

import torch
import torch.nn.functional as F
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tensor.qwen3_5_9b.gated_delta_rule.gated_delta_rule_impl import gated_delta_rule_pypto

NV, D = 32, 128
USE_PTO = os.environ.get("USE_PTO_GATED_DELTA_RULE", "1") == "1"


def recurrent_golden(q, k, v, g, beta):
    q = F.normalize(q.float(), dim=-1) * D ** -0.5
    k = F.normalize(k.float(), dim=-1)
    v, g, beta = v.float(), g.float(), beta.float()
    state = torch.zeros(q.shape[0], NV, D, D, device=q.device)
    outs = []
    for t in range(q.shape[1]):
        state = state * g[:, t, :, None, None].exp()
        kv = (state * k[:, t, :, :, None]).sum(-2)
        delta = (v[:, t] - kv) * beta[:, t, :, None]
        state = state + k[:, t, :, :, None] * delta[:, :, None, :]
        outs.append((state * q[:, t, :, :, None]).sum(-2))
    return torch.stack(outs, dim=1), state


def prefill(q, k, v, g, beta):
    if USE_PTO:
        out, state = gated_delta_rule_pypto(q, k, v, g=g, beta=beta)
    else:
        out, state = recurrent_golden(q, k, v, g, beta)
    return out.float() * 1.0, state


def main():
    torch.npu.set_device(int(os.environ["TILE_FWK_DEVICE_ID"]))
    dev = f"npu:{torch.npu.current_device()}"
    torch.manual_seed(42)
    S = 150
    q, k, v = (torch.randn(1, S, NV, D, dtype=torch.bfloat16, device=dev) * 0.1 for _ in range(3))
    g = -torch.rand(1, S, NV, device=dev) * 0.1
    beta = torch.rand(1, S, NV, dtype=torch.bfloat16, device=dev)
    compiled = torch.compile(prefill, backend="eager", fullgraph=True)
    out, state = compiled(q, k, v, g, beta)
    eager_out, eager_state = gated_delta_rule_pypto(q, k, v, g=g, beta=beta)
    ref_out, ref_state = recurrent_golden(q.cpu(), k.cpu(), v.cpu(), g.cpu(), beta.cpu())
    print("out", tuple(out.shape), out.device, "state", tuple(state.shape), state.dtype, state.device)
    d_out = (out.cpu() - ref_out).abs().max().item()
    d_state = (state.cpu() - ref_state).abs().max().item()
    print(f"max diff out {d_out:.3e} state {d_state:.3e}")
    ok = out.device.type == "npu" and torch.equal(out, eager_out.float()) and torch.equal(state, eager_state)
    ok &= torch.allclose(out.cpu(), ref_out, rtol=1e-2, atol=5e-2) and torch.allclose(state.cpu(), ref_state,
                                                                                       rtol=1e-2, atol=5e-2)
    print("1 passed" if ok else "1 failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"""


FA_GRAD_AUTOGRAD = r"""
'''Flash attention as a torch.autograd.Function: the forward in torch on the NPU (saving the softmax max / sum the
way the fused kernel wants them), the backward through the gym's grad kernel; loss.backward() gradients compared
with plain torch autograd in float32 on the host (np.testing after .cpu().float().numpy()).'''
import sys

import numpy as np
import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tile.experimental.ops_transformer.flash_attention_score_grad.flash_attention_score_grad_impl \
    import flash_attention_score_grad_wrapper

B, N, S, D = 1, 8, 128, 64


class FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, scale):
        scores = (q.float() @ k.float().transpose(-1, -2)) * scale
        row_max = scores.amax(-1, keepdim=True)
        p = torch.exp(scores - row_max)
        row_sum = p.sum(-1, keepdim=True)
        out = ((p / row_sum) @ v.float()).to(q.dtype)
        smax = torch.zeros(*q.shape[:3], 8, device=q.device)
        ssum = torch.zeros(*q.shape[:3], 8, device=q.device)
        smax[..., :1] = row_max
        ssum[..., :1] = row_sum
        ctx.save_for_backward(q, k, v, out, smax, ssum)
        ctx.scale = scale
        return out

    @staticmethod
    def backward(ctx, dy):
        q, k, v, out, smax, ssum = ctx.saved_tensors
        dq, dk, dv = flash_attention_score_grad_wrapper(q, k, v, dy.contiguous(), smax, ssum, out, ctx.scale)
        return dq, dk, dv, None


def main():
    torch.npu.set_device(0)
    torch.manual_seed(42)
    scale = D ** -0.5
    base = [torch.randn(B, N, S, D, dtype=torch.bfloat16) for _ in range(4)]
    q, k, v = (t.npu().requires_grad_() for t in base[:3])
    dy = base[3].npu()
    out = FlashAttention.apply(q, k, v, scale)
    out.backward(dy)
    torch.npu.synchronize()
    print("grads on", q.grad.device, k.grad.dtype, tuple(v.grad.shape))
    rq, rk, rv = (t.float().requires_grad_() for t in base[:3])
    ref = torch.softmax(rq @ rk.transpose(-1, -2) * scale, dim=-1) @ rv
    ref.backward(base[3].float())
    ok = q.grad.device.type == "npu"
    for name, got, exp in (("dq", q.grad, rq.grad), ("dk", k.grad, rk.grad), ("dv", v.grad, rv.grad)):
        try:
            np.testing.assert_allclose(got.cpu().float().numpy(), exp.numpy(), rtol=1e-2, atol=2e-2)
            print(f"{name}: PASS")
        except AssertionError as e:
            ok = False
            print(f"{name}: FAIL {str(e).splitlines()[3:5]}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
"""


@pytest.mark.slow
@needs_torch
@needs_gym
def test_apply_adam_w_v2_checkpoint_with_map_location_functions(tmp_path: Path) -> None:
    """Before: "'UntypedStorage' object has no attribute 'npu'" at ``map_location=lambda storage, loc:
    storage.npu()`` (exit 3)."""
    _ok(_gym("apply_adam_w_v2", tmp_path, "adamw_ckpt.py", ADAMW_CKPT),
        "{'lambda host': 'cpu', 'lambda npu': 'npu', 'dict': 'cpu', 'str npu': 'npu', 'device cpu': 'cpu'}", "PASS")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_mhc_sinkhorn_threads_and_vmap_golden(tmp_path: Path) -> None:
    """Before: the vmap golden said ``golden on cpu`` in every case ("FAIL (3)", exit 3)."""
    out = _ok(_gym("mhc_sinkhorn", tmp_path, "threads_vmap.py", SINKHORN_THREADS_VMAP), "PASS")
    assert out.count("golden on npu:0") == 3 and "sinkhorn_" in out, out[-3000:]


@pytest.mark.slow
@needs_torch
@needs_gym
def test_gated_delta_rule_custom_op_under_torch_compile(tmp_path: Path) -> None:
    """Before: "Could not run 'pypto::gated_delta_rule_qwen3_5' with arguments from the 'CPU' backend" (exit 3)."""
    _ok(_gym("gated_delta_rule", tmp_path, "compile_prefill.py", GDR_COMPILE),
        "out (1, 150, 32, 128) npu:0 state (1, 32, 128, 128) torch.float32 npu:0", "1 passed")


GDR_HOST_TEST = r"""
'''The gym's custom-op entry called with host tensors: refused, as on a device host (no CPU kernel).'''
import torch
import torch_npu  # noqa: F401

from pypto_gym.ops.pypto_tensor.qwen3_5_9b.gated_delta_rule.gated_delta_rule_impl import gated_delta_rule_pypto

q = torch.randn(1, 128, 32, 128, dtype=torch.bfloat16)
gated_delta_rule_pypto(q, q, q, g=torch.zeros(1, 128, 32), beta=torch.ones(1, 128, 32, dtype=torch.bfloat16))
"""


@pytest.mark.slow
@needs_torch
@needs_gym
def test_gated_delta_rule_custom_op_refuses_host_tensors_as_a_device_does(tmp_path: Path) -> None:
    proc = _gym("gated_delta_rule", tmp_path, "t_host.py", GDR_HOST_TEST)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "NotImplementedError: Could not run 'pypto::gated_delta_rule_qwen3_5' with arguments from the 'CPU' " \
        "backend" in out, out[-3000:]


@pytest.mark.slow
@needs_torch
@needs_gym
def test_sigmoid_pytest_fixtures_on_the_current_device(tmp_path: Path) -> None:
    proc = _gym("sigmoid", tmp_path, "test_sigmoid_pytest.py", SIGMOID_PYTEST, "-m", "pytest", "-q", "-p",
                "no:cacheprovider", "test_sigmoid_pytest.py")
    _ok(proc, "6 passed")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_sigmoid_kernel_inside_a_compiled_module(tmp_path: Path) -> None:
    _ok(_gym("sigmoid", tmp_path, "compile_gate.py", SIGMOID_COMPILE),
        "compiled out (24, 256) npu:0 second (40, 256) npu:0", "PASS")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_attn_softmax_spawn_pool_workers(tmp_path: Path) -> None:
    out = _ok(_gym("attn_softmax", tmp_path, "pool_softmax.py", ATTN_SOFTMAX_POOL), "same seed, same bits: True",
              "fp16 refused: True", "PASS")
    assert out.count("on npu:0: max |rowsum-1|") == 4, out[-3000:]


@pytest.mark.slow
@needs_torch
@needs_gym
def test_llada2_router_compiled_and_timed(tmp_path: Path) -> None:
    _ok(_gym("llada2_gate_select", tmp_path, "run_router.py", LLADA2_ROUTER), "outputs on npu:0, torch.int32",
        "rows bad: 0/16", "PASS")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_rms_norm_unittest_main(tmp_path: Path) -> None:
    _ok(_gym("rms_norm", tmp_path, "test_rms_norm_unittest.py", RMS_NORM_UNITTEST), "Ran 3 tests", "OK",
        "ms/iter")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_gather_pa_kv_cache_spawned_processes(tmp_path: Path) -> None:
    _ok(_gym("gather_pa_kv_cache", tmp_path, "spawn_cases.py", GATHER_SPAWN),
        "decode   key_ref (7, 1, 512) on npu:0: PASS", "prefill  key_ref (137, 1, 512) on npu:0: PASS", "ALL PASS")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_sum_lstm_decode_loop(tmp_path: Path) -> None:
    out = _ok(_gym("sum_lstm", tmp_path, "decode_loop.py", SUM_LSTM_DECODE, "--steps", "2"), "PASSED")
    assert out.count(" ok\n") == 2 and "over 2 steps" in out, out[-3000:]


@pytest.mark.slow
@needs_torch
@needs_gym
def test_interleave_rope_pytest_dtypes_and_saved_outputs(tmp_path: Path) -> None:
    proc = _gym("interleave_rope", tmp_path, "test_rope_dtypes.py", ROPE_PYTEST, "-m", "pytest", "-q", "-p",
                "no:cacheprovider", "test_rope_dtypes.py")
    _ok(proc, "12 passed")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_gqa_decode_attn_env_build_dir_and_event_timing(tmp_path: Path) -> None:
    _ok(_gym("gqa_decode_attn", tmp_path, "bench_decode.py", GQA_DECODE_BENCH), "build dir from env: True",
        "step 2: skv=63 out on npu:0 ok", "local: ok", "PASS")


@pytest.mark.slow
@needs_torch
@needs_gym
def test_flash_attention_grad_kernel_as_autograd_backward(tmp_path: Path) -> None:
    _ok(_gym("flash_attention_score_grad", tmp_path, "autograd_fa.py", FA_GRAD_AUTOGRAD),
        "grads on npu:0 torch.bfloat16 (1, 8, 128, 64)", "dq: PASS", "dk: PASS", "dv: PASS")


def test_scripts_are_valid_python() -> None:
    for name, body in globals().items():
        if name.isupper() and isinstance(body, str) and body.lstrip().startswith(("'''", "import")):
            compile(body, name, "exec")
