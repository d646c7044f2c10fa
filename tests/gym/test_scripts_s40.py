"""Real-gym-style test scripts of round s40, run unmodified under ``python -m runtime.emulator`` as a gym user runs
them (``cd <op>/tests && TILE_FWK_DEVICE_ID=0 PYTHONPATH=<op>/src python -m runtime.emulator <command>``).

Sixteen files (fifteen scripts and a ``conftest.py``) around one fp16/bf16/fp32 axpy kernel (``src/axpy_impl.py``)
with habits s36-s39 did not cover: ``torch.npu.is_available()`` gating and the device checks a script makes
(``x.device.type == "npu"``, ``str(x.device)``, ``x.device.index``, ``x.get_device()``, ``x.is_cpu``, ``x.device ==
torch.device("npu", 0)``, a ``to_numpy`` helper branching on ``device.type == "cpu"``), a golden kept on the host
(a mixed ``torch.allclose`` / subtraction refused, a 0-d host scalar allowed, ``assert_close`` with and without
``check_device``), spawned ``Pool`` workers returning NPU tensors, a workspace grown with ``resize_`` and freed with
``untyped_storage().resize_(0)``, ``unittest`` ``subTest`` + ``skipIf``, a parent re-running itself per case with
the case as JSON and parsing the child's stdout, logging configured by the script (``force=True``, a file handler),
a golden through ``torch.compile`` (torchair, else the eager backend), an event timing loop with warm-up and the
peak memory, bf16 via ``.float()`` with ``np.testing`` and an isclose ratio, ``.contiguous()`` after ``transpose``
with ``data_ptr`` / ``stride`` checks, pytest with a conftest option, a session fixture, stacked ``parametrize``
and ``pytest.approx``, an ``nn.Module`` golden whose device is ``next(model.parameters()).device``, helpers that
build inputs from ``like.device`` (factories, a ``Generator``, autocast, ``torch.npu.device``), and a
seed-everything determinism check.

What failed (or said something a device host does not) before this round's fixes, each pinned below:

- ``x.device.type`` / ``str(x.device)`` / ``x.get_device()`` / ``x.is_cpu`` of an NPU tensor said ``cpu`` / -1 /
  True (t_device.py stopped at its assert, exit 3; ``to_numpy`` took the host branch and ``numpy()`` refused);
  helpers building tensors on ``like.device`` / ``next(model.parameters()).device`` made *host* tensors
  (t_agnostic, t_module: the golden ran on the host);
- ``npu_tensor - host_tensor`` / ``torch.allclose(npu, host)`` ran (a device host: "Expected all tensors to be on the
  same device"), ``torch.testing.assert_close(npu, host)`` passed (a device host: the device attribute differs);
- NPU tensors returned by spawned workers arrived as host tensors (t_workers: ``device.type`` ``cpu``);
- a storage grown with ``resize_`` after its first read kept its old size in ``memory_allocated`` (t_workspace
  read 0 bytes for the workspace);
- every ``torch.compile`` died: the stand-in's stream had no ``device``, ``torch.get_device_module`` no
  ``__wrapped__``, and Dynamo traced into the placement mode and the stand-in's wrappers (a tensor's
  ``__dict__``); the compiled golden's result was then a host tensor;
- the stand-in's fused operators (``npu_incre_flash_attention`` ...) returned host tensors from NPU inputs (found
  by s38's paged-attention test once mixing devices was refused).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_scripts import needs_torch
from test_scripts_s38 import _ok, _run, _write  # the runner as a gym user types it

AXPY_IMPL = r"""
'''PyPTO axpy: out = x * alpha + y (fp16 / bf16 / fp32 kernels, fp32 math).'''
import pypto
import torch

TILE = 16
D = 64


def _body(x, y, out, alpha, dt):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop(0, n, TILE, name="L", idx_name="i"):
        v = (n - i).min(TILE)
        a = pypto.view(x, [TILE, D], [i, 0], valid_shape=[v, D])
        b = pypto.view(y, [TILE, D], [i, 0], valid_shape=[v, D])
        if dt != pypto.DT_FP32:
            a = pypto.cast(a, pypto.DT_FP32)
            b = pypto.cast(b, pypto.DT_FP32)
            out[i:, 0:] = pypto.cast(a * alpha + b, dt)
        else:
            out[i:, 0:] = a * alpha + b


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def axpy_fp16(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
              out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16), alpha: float):
    _body(x, y, out, alpha, pypto.DT_FP16)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def axpy_bf16(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
              out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16), alpha: float):
    _body(x, y, out, alpha, pypto.DT_BF16)


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def axpy_fp32(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
              out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), alpha: float):
    _body(x, y, out, alpha, pypto.DT_FP32)


KERNELS = {torch.float16: axpy_fp16, torch.bfloat16: axpy_bf16, torch.float32: axpy_fp32}


def axpy(x, y, alpha=1.5, out=None):
    out = torch.empty_like(x) if out is None else out
    KERNELS[x.dtype](x, y, out, alpha)
    return out


def axpy_golden(x, y, alpha=1.5):
    return (x.float() * alpha + y.float()).to(x.dtype)
"""

DEVICE_TEST = r"""
'''torch.npu.is_available() gating and the device checks a gym script makes before and after its kernel.'''
import sys

import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

device = torch.device("npu:0" if torch.npu.is_available() else "cpu")
print("running on", device)


def to_numpy(t):
    # host tensors convert directly; device tensors come back first
    return t.numpy() if t.device.type == "cpu" else t.cpu().numpy()


def main():
    torch.manual_seed(1)
    x_cpu, y_cpu = torch.randn(40, 64, dtype=torch.float16), torch.randn(40, 64, dtype=torch.float16)
    x, y = x_cpu.to(device), y_cpu.to(device)
    assert x.device.type == "npu", x.device
    assert str(x.device) == "npu:0" and x.device.index == 0 and x.get_device() == 0 and not x.is_cpu
    assert x.device == torch.device("npu", 0) and torch.device("npu:0") == x.device
    assert x_cpu.device.type == "cpu" and x_cpu.is_cpu and x_cpu.get_device() == -1
    out = axpy(x, y)
    assert out.device == x.device, (out.device, x.device)
    out_host = out.cpu()
    assert out_host.device.type == "cpu"
    ws = torch.zeros(8, device=x.device)
    assert ws.is_npu and ws.device.type == "npu"
    golden = axpy_golden(x_cpu, y_cpu)
    diff = abs(to_numpy(out).astype("float32") - to_numpy(golden).astype("float32")).max()
    print(f"device={out.device} type={out.device.type} max diff {diff:.3e}")
    return 0 if diff < 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
"""

MIXED_TEST = r"""
'''A golden kept on the host: comparing it with the NPU output needs .cpu() (a device host refuses the mix), a
0-d host scalar mixes fine, assert_close wants check_device=False or both on one side.'''
import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

torch.manual_seed(3)
x = torch.randn(33, 64).npu()
y = torch.randn(33, 64).npu()
out = axpy(x, y, 0.25)
golden = axpy_golden(x.cpu(), y.cpu(), 0.25)
try:
    torch.allclose(out, golden)
    print("mixed allclose: no error")
except RuntimeError as e:
    print("mixed allclose:", "same device" in str(e))
try:
    _ = out - golden
    print("mixed sub: no error")
except RuntimeError as e:
    print("mixed sub:", "same device" in str(e))
scaled = out * torch.tensor(2.0)          # a 0-d host tensor is a scalar on a device host
print("0-d scalar:", scaled.device.type)
try:
    torch.testing.assert_close(out, golden)
    print("assert_close mixed: passed")
except AssertionError as e:
    print("assert_close mixed:", str(e).splitlines()[0])
torch.testing.assert_close(out, golden, check_device=False)
torch.testing.assert_close(out.cpu(), golden)
out[0] = golden[0]                        # copying a host row into the NPU tensor is allowed
idx = torch.tensor([1, 2])
print("index with host tensor:", out[idx].shape, out[idx].device.type)
ok = torch.allclose(out.cpu(), golden, atol=1e-5)
print("PASS" if ok else "FAIL")
raise SystemExit(0 if ok else 1)
"""

WORKERS_TEST = r"""
'''Cases split over spawned workers; each returns its NPU output through the pool and the parent compares.'''
import multiprocessing as mp
import sys

import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

CASES = [(16, torch.float16), (40, torch.float32), (23, torch.bfloat16)]


def worker(case):
    rows, dtype = case
    torch.npu.set_device(0)
    torch.manual_seed(rows)
    x = torch.randn(rows, 64, dtype=dtype).npu()
    y = torch.randn(rows, 64, dtype=dtype).npu()
    return axpy(x, y, 0.5), x, y


def main():
    ctx = mp.get_context("spawn")
    with ctx.Pool(2) as pool:
        results = pool.map(worker, CASES)
    bad = 0
    for (rows, dtype), (out, x, y) in zip(CASES, results):
        where = f"{out.device.type}/{out.is_npu}"
        golden = axpy_golden(x, y, 0.5)          # both on the NPU: the golden is computed there too
        ok = torch.allclose(out.float(), golden.float(), atol=1e-2)
        print(f"rows={rows} {dtype} on {where}: {'PASS' if ok else 'FAIL'}")
        bad += not ok or out.device.type != "npu"
    host = results[0][0].cpu()
    print("copy on host:", host.device, host.is_npu)
    return bad


if __name__ == "__main__":
    sys.exit(main())
"""

WORKSPACE_TEST = r"""
'''A workspace grown with resize_ as cases get bigger, with the memory the script reports after each case.'''
import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

MB = 1 << 20
torch.npu.set_device(0)
ws = torch.empty(0, dtype=torch.uint8, device="npu")
torch.npu.synchronize()
base = torch.npu.memory_allocated()
ok = True
for rows in (64, 1024, 4096):
    need = rows * 64 * 4 * 3
    if ws.numel() < need:
        ws.resize_(need)                       # grow the scratch buffer in place
    x = torch.randn(rows, 64, device="npu")
    y = torch.randn(rows, 64, device="npu")
    out = axpy(x, y, 2.0)
    torch.npu.synchronize()
    held = torch.npu.memory_allocated() - base
    print(f"rows={rows}: workspace {ws.untyped_storage().nbytes()} B, allocated {held} B")
    ok &= held >= ws.numel() + 3 * rows * 64 * 4 and torch.allclose(out.cpu(), axpy_golden(x.cpu(), y.cpu(), 2.0))
ws.untyped_storage().resize_(0)                 # free the workspace, keep the tensor object
del x, y, out
torch.npu.synchronize()
left = torch.npu.memory_allocated() - base
print(f"after freeing: {left} B; peak {torch.npu.max_memory_allocated() / MB:.2f} MB")
ok &= left == 0
print("PASS" if ok else "FAIL")
raise SystemExit(0 if ok else 1)
"""

UNITTEST_SUBTEST = r"""
'''unittest with subTest over dtypes and shapes, skipIf gated on the NPU, exit code from the result.'''
import sys
import unittest

import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

TOL = {torch.float16: 1e-3, torch.bfloat16: 8e-3, torch.float32: 1e-5}


@unittest.skipIf(not torch.npu.is_available(), "needs an NPU")
class TestAxpy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.npu.set_device(0)
        cls.device = torch.device("npu", 0)

    def test_dtypes_and_rows(self):
        for dtype in (torch.float16, torch.bfloat16, torch.float32):
            for rows in (1, 17, 48):
                with self.subTest(dtype=dtype, rows=rows):
                    x = torch.randn(rows, 64, dtype=dtype, device=self.device)
                    y = torch.randn(rows, 64, dtype=dtype, device=self.device)
                    out = axpy(x, y, 0.75)
                    self.assertEqual(out.device, self.device)
                    self.assertEqual(out.device.type, "npu")
                    golden = axpy_golden(x.cpu(), y.cpu(), 0.75)
                    self.assertTrue(torch.allclose(out.cpu().float(), golden.float(), rtol=TOL[dtype],
                                                   atol=TOL[dtype]))

    def test_mixed_devices_raise(self):
        x = torch.randn(4, 64, device=self.device)
        with self.assertRaisesRegex(RuntimeError, "same device"):
            axpy(x, x) + torch.randn(4, 64)


if __name__ == "__main__":
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    sys.exit(0 if result.wasSuccessful() else 1)
"""

JSON_WORKER_TEST = r"""
'''The parent re-runs itself per case with the case as JSON and reads the child's last stdout line as JSON.'''
import argparse
import json
import subprocess
import sys

CASES = [{"rows": 16, "dtype": "float16"}, {"rows": 37, "dtype": "bfloat16"}]


def worker(case):
    import torch
    import torch_npu  # noqa: F401
    from axpy_impl import axpy, axpy_golden

    dtype = getattr(torch, case["dtype"])
    x = torch.randn(case["rows"], 64, dtype=dtype, device="npu:0")
    y = torch.randn(case["rows"], 64, dtype=dtype, device="npu:0")
    out = axpy(x, y)
    err = (out.cpu().float() - axpy_golden(x.cpu(), y.cpu()).float()).abs().max().item()
    print("worker done", flush=True)
    print(json.dumps({"rows": case["rows"], "err": err, "device": str(out.device)}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", default=None)
    args = ap.parse_args()
    if args.worker:
        return worker(json.loads(args.worker))
    fails = 0
    for case in CASES:
        raw = subprocess.check_output([sys.executable, __file__, "--worker", json.dumps(case)], text=True)
        res = json.loads(raw.strip().splitlines()[-1])
        ok = res["err"] < 1e-2 and res["device"] == "npu:0"
        print(f"case {res['rows']} on {res['device']}: {'PASS' if ok else 'FAIL'}")
        fails += not ok
    return fails


if __name__ == "__main__":
    sys.exit(main())
"""

LOGGING_TEST = r"""
'''The script configures logging itself (force=True, a file handler and a format) and logs its verdict.'''
import logging
import os
import sys

import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "axpy_test.log")
logging.basicConfig(level=logging.INFO, format="[%(levelname)s] %(name)s: %(message)s", force=True,
                    handlers=[logging.FileHandler(LOG, mode="w"), logging.StreamHandler(sys.stdout)])
logger = logging.getLogger("axpy_test")

x = torch.randn(24, 64, dtype=torch.float16).npu()
y = torch.randn(24, 64, dtype=torch.float16).npu()
out = axpy(x, y)
logger.info("output %s on %s", tuple(out.shape), out.device)
ok = torch.allclose(out.cpu().float(), axpy_golden(x.cpu(), y.cpu()).float(), atol=1e-3)
logger.info("[PRECISION_%s]", "PASS" if ok else "FAIL")
logging.shutdown()
with open(LOG) as f:
    text = f.read()
print("log file has verdict:", "[INFO] axpy_test: [PRECISION_PASS]" in text, "device line:", "on npu:0" in text)
sys.exit(0 if ok else 1)
"""

COMPILE_TEST = r"""
'''The golden compiled with torch.compile: torchair's NPU backend when it imports, else the eager backend.'''
import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy

try:
    import torchair
    backend = torchair.get_npu_backend()
except ImportError:
    backend = "eager"


def golden(x, y, alpha):
    z = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    return (z + x.float() * alpha + y.float()).to(x.dtype)


compiled = torch.compile(golden, backend=backend, dynamic=False)
x = torch.randn(32, 64, dtype=torch.float16, device="npu")
y = torch.randn(32, 64, dtype=torch.float16, device="npu")
out = axpy(x, y, 1.5)
ref = compiled(x, y, 1.5)
print("backend", backend, "ref on", ref.device.type, ref.is_npu)
ok = torch.allclose(out.float(), ref.float(), atol=1e-3)
print("PASS" if ok else "FAIL")
raise SystemExit(0 if ok else 1)
"""

TIMING_TEST = r"""
'''Warm-up, then a timed loop with NPU events and synchronize, the median, and the memory the run held.'''
import statistics

import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

torch.npu.set_device("npu:0")
x = torch.randn(128, 64, dtype=torch.float16, device="npu")
y = torch.randn(128, 64, dtype=torch.float16, device="npu")
out = torch.empty_like(x)
for _ in range(3):
    axpy(x, y, out=out)
torch.npu.synchronize()
torch.npu.reset_peak_memory_stats()
times = []
for _ in range(5):
    start, end = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
    start.record()
    axpy(x, y, out=out)
    end.record()
    end.synchronize()
    times.append(start.elapsed_time(end))
torch.npu.synchronize()
nbytes = sum(t.untyped_storage().nbytes() for t in (x, y, out))
peak = torch.npu.max_memory_allocated()
print(f"median {statistics.median(times):.3f} ms over {len(times)} runs; peak {peak} B for {nbytes} B of tensors")
ok = peak >= nbytes and x.element_size() * x.nelement() == x.untyped_storage().nbytes()
ok &= torch.allclose(out.cpu().float(), axpy_golden(x.cpu(), y.cpu()).float(), atol=1e-3)
print("PASS" if ok else "FAIL")
raise SystemExit(0 if ok else 1)
"""

BF16_NP_TEST = r"""
'''bf16 compared through .float(): np.testing on host copies, an isclose ratio, the golden cast with npu_dtype_cast.'''
import numpy as np
import torch
import torch_npu
from axpy_impl import axpy

torch.manual_seed(7)
torch.npu.manual_seed(7)
x = torch.randn(50, 64).npu()
y = torch.randn(50, 64).npu()
xb, yb = torch_npu.npu_dtype_cast(x, torch.bfloat16), torch_npu.npu_dtype_cast(y, torch.bfloat16)
assert xb.dtype == torch.bfloat16 and xb.is_npu and xb.device.type == "npu"
out = axpy(xb, yb, 0.5)
golden = (xb.float() * 0.5 + yb.float()).to(torch.bfloat16)
np.testing.assert_allclose(out.cpu().float().numpy(), golden.cpu().float().numpy(), rtol=8e-3, atol=8e-3)
ratio = torch.isclose(out.float(), golden.float(), rtol=8e-3, atol=8e-3).float().mean().item()
print(f"isclose ratio {ratio:.4f}")
print("PASS" if ratio > 0.999 else "FAIL")
raise SystemExit(0 if ratio > 0.999 else 1)
"""

TRANSPOSE_TEST = r"""
'''A [64, n] input transposed and made contiguous before the kernel; the output buffer written in place.'''
import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden

xt = torch.randn(64, 40, device="npu:0")
y = torch.randn(40, 64, device="npu:0")
x = xt.transpose(0, 1)
assert not x.is_contiguous()
x = x.contiguous()
assert x.is_contiguous() and x.stride() == (64, 1) and x.is_npu
out = torch.zeros(40, 64, device="npu:0")
ptr = out.data_ptr()
res = axpy(x, y, 3.0, out=out)
assert res is out and out.data_ptr() == ptr
golden = axpy_golden(xt.cpu().t(), y.cpu(), 3.0)
print("max err", float((out.cpu() - golden).abs().max()))
print("PASS" if torch.allclose(out.cpu(), golden, atol=1e-5) else "FAIL")
"""

PYTEST_CONFTEST = r"""
import pytest
import torch
import torch_npu  # noqa: F401


def pytest_addoption(parser):
    parser.addoption("--npu-id", default="0")


@pytest.fixture(scope="session")
def device(request):
    dev = torch.device(f"npu:{request.config.getoption('--npu-id')}")
    torch.npu.set_device(dev)
    yield dev
    torch.npu.synchronize()
    torch.npu.empty_cache()


@pytest.fixture(autouse=True)
def seed():
    torch.manual_seed(2024)
    torch.npu.manual_seed(2024)
"""

PYTEST_TEST = r"""
'''pytest: a session device fixture from conftest, stacked parametrize (dtype x rows), pytest.param with a skip mark,
pytest.approx on a reduced value, device checks inside the test.'''
import pytest
import torch
from axpy_impl import axpy, axpy_golden

TOL = {torch.float16: 1e-3, torch.bfloat16: 8e-3, torch.float32: 1e-5}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16,
                                   pytest.param(torch.float32, id="fp32")])
@pytest.mark.parametrize("rows", [1, 31, pytest.param(4096, marks=pytest.mark.skip(reason="long"))])
def test_axpy(device, dtype, rows):
    x = torch.randn(rows, 64, dtype=dtype, device=device)
    y = torch.randn(rows, 64, dtype=dtype, device=device)
    out = axpy(x, y, 0.5)
    assert out.device == device and out.device.type == "npu"
    golden = axpy_golden(x, y, 0.5)
    assert golden.device.type == "npu"
    torch.testing.assert_close(out, golden, rtol=TOL[dtype], atol=TOL[dtype])
    assert out.float().sum().item() == pytest.approx(golden.float().sum().item(), rel=1e-2, abs=1e-1)


def test_golden_on_host_needs_check_device(device):
    x = torch.randn(8, 64, device=device)
    out = axpy(x, x)
    with pytest.raises(AssertionError, match="device"):
        torch.testing.assert_close(out, axpy_golden(x.cpu(), x.cpu()))
    torch.testing.assert_close(out, axpy_golden(x.cpu(), x.cpu()), check_device=False)
"""

MODULE_TEST = r"""
'''The golden is an nn.Module moved to the NPU; the script takes the device from its parameters.'''
import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy


class Ref(torch.nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.register_buffer("alpha", torch.tensor(alpha))
        self.bias = torch.nn.Parameter(torch.zeros(64))

    def forward(self, x, y):
        return (x.float() * self.alpha + y.float() + self.bias).to(x.dtype)


model = Ref(1.25).npu().eval()
device = next(model.parameters()).device
print("model on", device, model.alpha.device)
x = torch.randn(20, 64, dtype=torch.float16, device=device)
y = torch.randn(20, 64, dtype=torch.float16, device=device)
with torch.no_grad():
    ref = model(x, y)
out = axpy(x, y, 1.25)
ok = device.type == "npu" and ref.device == out.device and torch.allclose(out.float(), ref.float(), atol=1e-3)
host = model.cpu()
print("back on", next(host.parameters()).device)
print("PASS" if ok else "FAIL")
raise SystemExit(0 if ok else 1)
"""

AGNOSTIC_TEST = r"""
'''Helpers written against x.device: factories, a generator, autocast and a device context all take it.'''
import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy, axpy_golden


def make_inputs(like, rows):
    g = torch.Generator(device=like.device).manual_seed(rows)
    x = torch.randn(rows, 64, generator=g, device=like.device, dtype=like.dtype)
    y = torch.full((rows, 64), 0.5, device=like.device, dtype=like.dtype)
    idx = torch.arange(rows, device=like.device)
    return x, y, idx


anchor = torch.empty(0, dtype=torch.float16, device="npu:0")
x, y, idx = make_inputs(anchor, 24)
print("inputs on", {str(t.device) for t in (x, y, idx)}, x.is_npu, idx.is_npu)
with torch.autocast(device_type=x.device.type, dtype=torch.float16):
    mm = x.float() @ y.float().t()
with torch.npu.device(x.device):
    out = axpy(x, y)
buf = x.new_zeros(3)
print("autocast dtype", mm.dtype, "new_zeros on", buf.device)
ok = torch.allclose(out.cpu().float(), axpy_golden(x.cpu(), y.cpu()).float(), atol=1e-3) and out.device == x.device
print("PASS" if ok else "FAIL")
raise SystemExit(0 if ok else 1)
"""

DETERMINISTIC_TEST = r"""
'''Every generator seeded, deterministic algorithms on, the kernel run twice on fresh inputs: bit-identical.'''
import os
import random
import sys

import numpy as np
import torch
import torch_npu  # noqa: F401
from axpy_impl import axpy

os.environ.setdefault("ASCEND_LAUNCH_BLOCKING", "1")


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.npu.manual_seed(seed)
    torch.npu.manual_seed_all(seed)


def run(seed):
    seed_everything(seed)
    x = torch.from_numpy(np.random.randn(19, 64).astype(np.float32)).npu()
    y = torch.randn(19, 64).to("npu:0")
    return axpy(x, y, 0.1)


torch.use_deterministic_algorithms(True)
state = torch.npu.get_rng_state()
a, b = run(11), run(11)
torch.npu.set_rng_state(state)
same = torch.equal(a, b)
print("deterministic:", same, "on", a.device, b.device)
sys.exit(0 if same and a.device.type == "npu" else 1)
"""


def _op(tmp_path: Path, *files: tuple[str, str]) -> tuple[Path, Path]:
    """``<op>/src/axpy_impl.py`` and the scripts in ``<op>/tests``: (the test dir, the src dir)."""
    src = tmp_path / "src"
    _write(src / "axpy_impl.py", AXPY_IMPL)
    tests = tmp_path / "tests"
    for name, body in files:
        _write(tests / name, body)
    return tests, src


@needs_torch
def test_device_checks_of_an_npu_tensor(tmp_path: Path) -> None:
    """Failed before: ``assert x.device.type == "npu"`` at t_device.py:21 (exit 3, ``AssertionError: cpu``)."""
    tests, src = _op(tmp_path, ("t_device.py", DEVICE_TEST))
    _ok(_run(["t_device.py"], tests, src), "running on npu:0", "device=npu:0 type=npu max diff 0.000e+00")


@needs_torch
def test_mixed_devices_are_refused_as_on_a_device_host(tmp_path: Path) -> None:
    """Before: the mixed ``allclose`` and subtraction ran ("no error"), ``assert_close`` of an NPU and a host tensor
    passed, and ``x_npu * torch.tensor(2.0)`` / ``out[idx]`` said ``cpu``."""
    tests, src = _op(tmp_path, ("t_mixed.py", MIXED_TEST))
    _ok(_run(["t_mixed.py"], tests, src), "mixed allclose: True", "mixed sub: True", "0-d scalar: npu",
        "assert_close mixed: The values for attribute 'device' do not match: npu:0 != cpu.",
        "index with host tensor: torch.Size([2, 64]) npu", "PASS")


@pytest.mark.slow
@needs_torch
def test_spawned_pool_workers_return_npu_tensors(tmp_path: Path) -> None:
    """Before: ``rows=16 torch.float16 on cpu/False`` for each case, exit 3 (the script counts a host result)."""
    tests, src = _op(tmp_path, ("t_workers.py", WORKERS_TEST))
    out = _ok(_run(["t_workers.py"], tests, src), "copy on host: cpu False")
    assert out.count("on npu/True: PASS") == 3, out


@pytest.mark.slow
@needs_torch
def test_workspace_grown_with_resize_and_freed_through_its_storage(tmp_path: Path) -> None:
    """Before: ``allocated`` left the workspace out (read once, while empty): 49152 B at rows=64 where the
    workspace and the three tensors hold 98304 B, a 3 MB peak for 6 MB."""
    tests, src = _op(tmp_path, ("t_workspace.py", WORKSPACE_TEST))
    _ok(_run(["t_workspace.py"], tests, src), "rows=64: workspace 49152 B, allocated 98304 B",
        "rows=4096: workspace 3145728 B, allocated 6291456 B", "after freeing: 0 B; peak 6.00 MB", "PASS")


@pytest.mark.slow
@needs_torch
def test_unittest_subtests_and_skip_if(tmp_path: Path) -> None:
    """Before: ten failures (``assertEqual(out.device, self.device)`` and ``assertRaisesRegex(RuntimeError)``)."""
    tests, src = _op(tmp_path, ("t_unittest_subtest.py", UNITTEST_SUBTEST))
    _ok(_run(["t_unittest_subtest.py"], tests, src), "Ran 2 tests", "OK")


@pytest.mark.slow
@needs_torch
def test_parent_reruns_itself_per_case_and_parses_json(tmp_path: Path) -> None:
    """Before: ``case 16 on cpu: FAIL`` (the child's ``str(out.device)``), exit 2."""
    tests, src = _op(tmp_path, ("t_json_worker.py", JSON_WORKER_TEST))
    _ok(_run(["t_json_worker.py"], tests, src), "case 16 on npu:0: PASS", "case 37 on npu:0: PASS")


@pytest.mark.slow
@needs_torch
def test_logging_configured_by_the_script(tmp_path: Path) -> None:
    """Passed before, except the logged device (``on cpu``)."""
    tests, src = _op(tmp_path, ("t_logging.py", LOGGING_TEST))
    _ok(_run(["t_logging.py"], tests, src), "[INFO] axpy_test: [PRECISION_PASS]",
        "log file has verdict: True device line: True")


@pytest.mark.slow
@needs_torch
def test_golden_through_torch_compile(tmp_path: Path) -> None:
    """Failed before at t_compile.py:22: ``InternalTorchDynamoError: AttributeError: '_Stream' object has no
    attribute 'device'`` (exit 3)."""
    tests, src = _op(tmp_path, ("t_compile.py", COMPILE_TEST))
    _ok(_run(["t_compile.py"], tests, src), "backend eager ref on npu True", "PASS")


@pytest.mark.slow
@needs_torch
def test_event_timing_loop_and_peak_memory(tmp_path: Path) -> None:
    """Passed before (pinned: storages, ``element_size`` and the peak after ``reset_peak_memory_stats``)."""
    tests, src = _op(tmp_path, ("t_timing.py", TIMING_TEST))
    _ok(_run(["t_timing.py"], tests, src), "peak 49152 B for 49152 B of tensors", "PASS")


@pytest.mark.slow
@needs_torch
def test_bf16_compared_through_float_and_np_testing(tmp_path: Path) -> None:
    """Failed before at t_bf16_np.py:12: ``assert ... xb.device.type == "npu"`` (exit 3)."""
    tests, src = _op(tmp_path, ("t_bf16_np.py", BF16_NP_TEST))
    _ok(_run(["t_bf16_np.py"], tests, src), "isclose ratio 1.0000", "PASS")


@pytest.mark.slow
@needs_torch
def test_contiguous_after_transpose_and_in_place_output(tmp_path: Path) -> None:
    """Passed before (pinned)."""
    tests, src = _op(tmp_path, ("t_transpose.py", TRANSPOSE_TEST))
    _ok(_run(["t_transpose.py"], tests, src), "max err 0.0", "PASS")


@pytest.mark.slow
@needs_torch
def test_pytest_conftest_option_session_fixture_and_stacked_parametrize(tmp_path: Path) -> None:
    """Before: 7 failed (``out.device == device`` with ``device`` = ``npu:0``; ``pytest.raises(AssertionError)``
    around ``assert_close`` of an NPU and a host tensor)."""
    tests, src = _op(tmp_path, ("conftest.py", PYTEST_CONFTEST), ("test_axpy_pytest.py", PYTEST_TEST))
    _ok(_run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test_axpy_pytest.py", "--npu-id", "0"], tests, src),
        "7 passed, 3 skipped")


@pytest.mark.slow
@needs_torch
def test_module_golden_takes_its_device_from_its_parameters(tmp_path: Path) -> None:
    """Before: ``model on cpu cpu``, the inputs built there were host tensors and the script said FAIL."""
    tests, src = _op(tmp_path, ("t_module.py", MODULE_TEST))
    _ok(_run(["t_module.py"], tests, src), "model on npu:0 npu:0", "back on cpu", "PASS")


@pytest.mark.slow
@needs_torch
def test_helpers_build_inputs_on_like_device(tmp_path: Path) -> None:
    """Before: ``inputs on {'cpu'} False False`` - the inputs a helper built on ``like.device`` were host tensors
    (the script still printed PASS: the kernel ran on host tensors)."""
    tests, src = _op(tmp_path, ("t_agnostic.py", AGNOSTIC_TEST))
    _ok(_run(["t_agnostic.py"], tests, src), "inputs on {'npu:0'} True True",
        "autocast dtype torch.float16 new_zeros on npu:0", "PASS")


@pytest.mark.slow
@needs_torch
def test_seed_everything_determinism(tmp_path: Path) -> None:
    """Before: exit 1 (``a.device.type`` was ``cpu``)."""
    tests, src = _op(tmp_path, ("t_deterministic.py", DETERMINISTIC_TEST))
    _ok(_run(["t_deterministic.py"], tests, src), "deterministic: True on npu:0 npu:0")


def test_mixed_device_rule_in_process() -> None:
    """The refusal's rule, in process (the placement mode's check): an NPU tensor with a host tensor that is not
    0-d is refused, a 0-d host scalar and the cross-device functions (copy, indexing, moves) are not, and PTO
    Forge's own frames are let through."""
    torch = pytest.importorskip("torch")
    from runtime.emulator._torch_npu_device import mixed_devices
    from runtime.emulator._torch_npu_placement import mark

    npu, host, scalar = torch.ones(3), torch.ones(3), torch.tensor(2.0)
    mark(npu, True)
    mark(host, False)  # known to be on the host, as a factory / .cpu() / an op on host tensors leaves it (review s40)

    def check(func: object, *args: object) -> str | None:
        return _from_script(mixed_devices, func, args)

    assert check(torch.add, npu, scalar) is None
    assert check(torch.Tensor.copy_, npu, host) is None
    assert check(torch.Tensor.__getitem__, npu, torch.tensor([0])) is None
    error = check(torch.add, npu, host)
    assert error is not None and error.startswith("Expected all tensors to be on the same device")
    assert check(torch.cat, [npu, host]) is not None
    s_npu = torch.tensor(1.0)
    mark(s_npu, True)
    assert check(torch.mul, host, s_npu) is not None  # a 0-d NPU tensor with a host tensor: refused there too
    # a host index or mask is let through: which functions take one across devices there is not certain (review s40)
    assert check(torch.index_select, npu, 0, torch.tensor([0, 1])) is None
    assert check(torch.Tensor.masked_fill, npu, torch.tensor([True, False, True]), 0.0) is None


def _from_script(fn: object, func: object, args: tuple[object, ...]) -> str | None:
    """Call ``fn`` as the placement mode does, from a frame that is not PTO Forge's (a script's module name)."""
    import torch

    code = compile("def mode(f, a):\n    return fn(f, a, {}, torch)\ndef op(f, a):\n    return mode(f, a)\n",
                   "/tmp/script.py", "exec")
    scope: dict[str, object] = {"__name__": "__main__", "fn": fn, "torch": torch}
    exec(code, scope)  # noqa: S102 - a frame of a script's own, as the check sees one
    return scope["op"](func, args)  # type: ignore[operator]


def test_device_attributes_answer_the_script_and_not_torch() -> None:
    """``x.device`` of an NPU tensor: ``npu:0`` to a script's frame, ``cpu`` to PTO Forge's (and torch's)."""
    torch = pytest.importorskip("torch")
    import runtime.emulator
    from runtime.emulator._torch_npu_device import caller_is_script

    def frame(name: str, file: str) -> object:
        scope: dict[str, object] = {"__name__": name, "sys": sys}
        exec(compile("def f():\n    return sys._getframe()\n", file, "exec"), scope)  # noqa: S102
        return scope["f"]()  # type: ignore[operator]

    own = str(Path(runtime.emulator.__file__).parent / "x.py")
    assert caller_is_script(frame("__main__", "/tmp/script.py"))
    assert caller_is_script(frame("utils", "/tmp/op/tests/utils.py"))  # a script's helper module
    assert not caller_is_script(frame("torch.testing._comparison", "/x/torch/testing/_comparison.py"))
    assert not caller_is_script(frame("numpy.testing", "/x/numpy/testing/utils.py"))
    assert not caller_is_script(frame("__main__", own))  # a PTO Forge file run as __main__ (the observer)
    assert not caller_is_script(frame("runtime.emulator._frontend", "/elsewhere/_frontend.py"))
    assert torch.ones(1).device.type == "cpu"


def test_storage_resize_follows_in_the_memory_counters() -> None:
    """A storage resized after its first read: ``resize_`` of the tensor and of its storage change the total."""
    torch = pytest.importorskip("torch")
    from runtime.emulator._torch_npu_placement import _refresh, allocated_bytes, mark, storage_resized

    base = allocated_bytes()
    x = torch.zeros(100)
    mark(x, True)
    assert allocated_bytes() - base == 512
    x.resize_(1000)
    _refresh(x)  # what the placement mode does after `resize_` of an NPU tensor
    assert allocated_bytes() - base == 4096
    storage = x.untyped_storage()
    old = storage.data_ptr()
    storage.resize_(0)
    storage_resized(old, storage.data_ptr(), storage.nbytes())
    assert allocated_bytes() == base
    del x
    assert allocated_bytes() == base


def test_scripts_are_valid_python() -> None:
    for name, body in globals().items():
        if name.isupper() and isinstance(body, str) and body.lstrip().startswith(("'''", "import")):
            compile(body, name, "exec")
