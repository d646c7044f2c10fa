"""Real-gym-style test scripts of round s39, run unmodified under ``python -m runtime.emulator`` as a gym user runs
them (``cd <dir> && TILE_FWK_DEVICE_ID=0 PYTHONPATH=<op>/src python -m runtime.emulator <command>``).

Seventeen gym-style scripts with habits the earlier rounds (s36-s38b) did not cover: a shared ``tests/utils.py`` /
``common.py`` helper module (compare helpers, yaml case loaders), cases from ``.yaml`` with pytest ``ids``, goldens
generated on the first run and cached next to the script (``.npz``, keyed by a hash of the case),
``torch_npu.npu_format_cast`` / ``get_npu_format``, ``torch_npu.npu_dtype_cast`` / ``npu_rms_norm`` /
``npu_rotary_mul`` / ``npu_swiglu`` / ``npu_dynamic_quant`` + ``npu_quant_matmul`` as goldens, ``hasattr``
fallbacks for a fused operator the stand-in lacks, ``torch.npu.stream(s)`` contexts with ``wait_stream``,
``with torch.no_grad()``, ``torch.inference_mode()``, ``@torch.no_grad()`` runners, ``.cpu().float().numpy()``
chains, bf16 results compared bit for bit through ``.view(torch.int16)`` and ``torch.equal``, ``assert
torch.isfinite(out).all()``, ``ASCEND_RT_VISIBLE_DEVICES`` / ``ASCEND_LAUNCH_BLOCKING``, ``sys.exit(0 if ok else
1)`` after a summary table, ``print(f"{x.dtype}")``, ``time.time()`` loops, kernels on row slices ``x[:n]`` and on
``.contiguous()`` copies of column slices and transposes, ``jit`` with ``runtime_options`` and ``debug_options``,
a kernel called from two threads, ``torch.npu.max_memory_allocated()`` budgets, and ``try: import torchair``.

What failed (or said something a device host does not) before this round's fixes (the others passed as written):

- a kernel error was the emulator's own ``Exception``, not the ``RuntimeError`` / ``ValueError`` the real pypto
  raises: a script's ``except RuntimeError`` around a refused call (a strided column view) let it through, exit 1;
- ``torch.npu.max_memory_allocated()`` / ``memory_allocated()`` / ``memory_stats()`` were 0 / empty whatever the
  script kept on the NPU: a script asserting its peak is positive, or printing it, read an empty device;
- ``y_npu.numpy()`` (and ``np.asarray(y_npu)``, ``np.testing.assert_allclose(y_npu, ...)``) worked, where a
  device host raises ``TypeError: can't convert npu:0 device type tensor to numpy``: a script broken on the
  device passed on the emulator;
- ``import torchair`` said only ``No module named 'torchair'`` (a device host has it with torch_npu): now the same
  ``ModuleNotFoundError`` (``except ImportError`` still takes the eager path) names what is missing.

Still as before, pinned: ``torch_npu.npu_moe_gating_top_k`` is "not provided" (``hasattr`` False, one line at the
script's own line otherwise) and ``x.device.type`` said ``"cpu"`` (``"npu"`` on a device host; ``x.is_npu`` is
True) - s40 answers ``"npu"`` to the script (test_device_type_of_an_npu_tensor_says_npu).
"""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest
from test_scripts import needs_torch
from test_scripts_s38 import _ok, _run, _write  # the runner as a gym user types it

UTILS = r"""
'''Shared helpers of the gym's tests (tests/utils.py): yaml cases, a precision check that prints a table row.'''
import os

import numpy as np
import yaml

DTYPES = {"float16": np.float16, "float32": np.float32}


def load_cases(path, level=None):
    with open(path, "r", encoding="utf-8") as f:
        cases = yaml.safe_load(f)["cases"]
    return [c for c in cases if level is None or c.get("level", 0) <= level]


def compare(name, actual, golden, rtol, atol):
    a = actual.astype(np.float32)
    g = golden.astype(np.float32)
    diff = np.abs(a - g)
    bad = int((diff > atol + rtol * np.abs(g)).sum())
    ok = bad == 0
    print(f"| {name:<12} | {str(actual.dtype):<8} | {diff.max():.3e} | {bad:>5} | {'PASS' if ok else 'FAIL'} |")
    return ok


def golden_cache(here, key):
    d = os.path.join(here, "golden_cache")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, f"{key}.npz")
"""

CASES_YAML = """
cases:
  - {name: small, shape: [8, 128], dtype: float16, alpha: 0.5, level: 0}
  - {name: tail, shape: [37, 128], dtype: float16, alpha: 2.0, level: 0}
  - {name: big, shape: [256, 128], dtype: float16, alpha: -1.0, level: 1}
"""

AXPY_IMPL = r"""
import pypto
import torch

TILE = 16
D = 128


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def axpy_kernel(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
                y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
                out: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP16),
                alpha: float):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop(0, n, TILE, name="L", idx_name="i"):
        v = (n - i).min(TILE)
        a = pypto.cast(pypto.view(x, [TILE, D], [i, 0], valid_shape=[v, D]), pypto.DT_FP32)
        b = pypto.cast(pypto.view(y, [TILE, D], [i, 0], valid_shape=[v, D]), pypto.DT_FP32)
        out[i:, 0:] = pypto.cast(a * alpha + b, pypto.DT_FP16)


def axpy(x, y, alpha):
    out = torch.empty_like(x)
    axpy_kernel(x, y, out, alpha)
    return out
"""

AXPY_TEST = r"""
'''Axpy: cases from cases.yaml through the shared tests/utils.py, goldens generated on the first run and cached as
.npz next to the script (keyed by a hash of the case), a summary table, sys.exit(0 if ok else 1).'''
import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch
import torch_npu  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/ : the shared utils module
from utils import compare, golden_cache, load_cases  # noqa: E402
from axpy_impl import axpy  # noqa: E402  (PYTHONPATH=<op>/src)


def golden_for(case):
    key = hashlib.md5(json.dumps(case, sort_keys=True).encode()).hexdigest()[:12]
    path = golden_cache(HERE, key)
    if os.path.exists(path):
        data = np.load(path)
        print(f"[{case['name']}] loaded cached golden {os.path.basename(path)}")
        return data["x"], data["y"], data["golden"]
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, case["shape"]).astype(case["dtype"])
    y = rng.uniform(-1, 1, case["shape"]).astype(case["dtype"])
    golden = (x.astype(np.float32) * case["alpha"] + y.astype(np.float32)).astype(case["dtype"])
    np.savez(path, x=x, y=y, golden=golden)
    print(f"[{case['name']}] generated golden {os.path.basename(path)}")
    return x, y, golden


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--level", type=int, default=0)
    args = p.parse_args()
    torch.npu.set_device(int(os.getenv("TILE_FWK_DEVICE_ID", "0")))
    results = []
    print("| case         | dtype    | max diff  |   bad | verdict |")
    for case in load_cases(os.path.join(HERE, "cases.yaml"), args.level):
        x, y, golden = golden_for(case)
        out = axpy(torch.from_numpy(x).npu(), torch.from_numpy(y).npu(), case["alpha"])
        results.append(compare(case["name"], out.cpu().numpy(), golden, 1e-3, 1e-3))
    ok = all(results)
    print(f"summary: {sum(results)}/{len(results)} passed -> {'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
"""

COMMON_PY = r"""
'''tests/common.py of a pytest-style gym test: yaml params with ids, an npu fixture, a no_grad compare.'''
import os

import pytest
import torch
import yaml


def yaml_params(path):
    with open(path) as f:
        cases = yaml.safe_load(f)
    return pytest.mark.parametrize("case", cases, ids=[c["id"] for c in cases])


@torch.no_grad()
def assert_close_cpu(actual, expected, rtol, atol):
    torch.testing.assert_close(actual.cpu().float(), expected.cpu().float(), rtol=rtol, atol=atol)


@pytest.fixture(scope="session")
def npu_device():
    dev = int(os.environ.get("TILE_FWK_DEVICE_ID", "0"))
    torch.npu.set_device(dev)
    return torch.device(f"npu:{dev}")
"""

RMS_CASES_YAML = """
- {id: rms_t1_h256, tokens: 1, hidden: 256, eps: 1.0e-6}
- {id: rms_t9_h256, tokens: 9, hidden: 256, eps: 1.0e-5}
- {id: rms_t32_h512, tokens: 32, hidden: 512, eps: 1.0e-6}
"""

RMS_NORM_TEST = r"""
'''RMSNorm bf16 in a pytest module: params from a yaml with ids through tests/common.py, golden npu_rms_norm
under torch.no_grad(), a @torch.no_grad() runner, bf16 compared as int16 ulps through .view(torch.int16).'''
import os
import sys

import torch
import torch_npu
import pypto

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import assert_close_cpu, npu_device, yaml_params  # noqa: E402,F401

TILE = 8


@pypto.frontend.jit
def rms_norm_kernel(x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
                    gamma: pypto.Tensor([1, pypto.STATIC], pypto.DT_BF16),
                    y: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC], pypto.DT_BF16),
                    eps: float):
    T = x.shape[0]
    H = x.shape[1]
    pypto.set_vec_tile_shapes(TILE, H)
    for i in pypto.loop(0, T, TILE, name="LT", idx_name="i"):
        v = (T - i).min(TILE)
        xf = pypto.cast(pypto.view(x, [TILE, H], [i, 0], valid_shape=[v, H]), pypto.DT_FP32)
        ms = pypto.sum(xf * xf, -1, keepdim=True) / H
        y[i:, 0:] = pypto.cast(xf * pypto.rsqrt(ms + eps) * pypto.cast(gamma, pypto.DT_FP32), pypto.DT_BF16)


@torch.no_grad()
def run_kernel(x, gamma, eps):
    y = torch.empty_like(x)
    rms_norm_kernel(x, gamma.view(1, -1), y, eps)
    return y


@yaml_params(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rms_cases.yaml"))
def test_rms_norm(case, npu_device):
    torch.manual_seed(0)
    x = torch.randn(case["tokens"], case["hidden"], dtype=torch.bfloat16, device=npu_device, requires_grad=True)
    gamma = torch.rand(case["hidden"], dtype=torch.bfloat16, device=npu_device) + 0.5
    y = run_kernel(x, gamma, case["eps"])
    assert not y.requires_grad
    with torch.no_grad():
        ref = torch_npu.npu_rms_norm(x, gamma, epsilon=case["eps"])[0]
    ulps = (y.view(torch.int16).int() - ref.view(torch.int16).int()).abs().max().item()
    print(f"{case['id']}: {y.dtype} max ulp {ulps}")
    assert ulps <= 2
    assert_close_cpu(y, ref, rtol=1.6e-2, atol=1e-2)
"""

FORMAT_CAST_TEST = r"""
'''Cast fp32 -> bf16 / fp16: golden torch_npu.npu_dtype_cast; the input goes through npu_format_cast to ND and its
format is checked with get_npu_format first (the gym's "make sure the input is ND" habit).'''
import os

import torch
import torch_npu
import pypto

ACL_FORMAT_ND = 2
TILE = 64


def make_cast_kernel(dst):
    @pypto.frontend.jit
    def cast_kernel(x: pypto.Tensor([pypto.DYNAMIC, 64], pypto.DT_FP32),
                    y: pypto.Tensor([pypto.DYNAMIC, 64], dst)):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, 64)
        for i in pypto.loop(0, n, TILE, name="L", idx_name="i"):
            v = (n - i).min(TILE)
            y[i:, 0:] = pypto.cast(pypto.view(x, [TILE, 64], [i, 0], valid_shape=[v, 64]), dst)
    return cast_kernel


KERNELS = {torch.bfloat16: make_cast_kernel(pypto.DT_BF16), torch.float16: make_cast_kernel(pypto.DT_FP16)}

if __name__ == "__main__":
    torch.npu.set_device(int(os.environ.get("TILE_FWK_DEVICE_ID", 0)))
    x = torch.randn(100, 64, device="npu") * 100
    x = torch_npu.npu_format_cast(x, ACL_FORMAT_ND)
    assert torch_npu.get_npu_format(x) == ACL_FORMAT_ND, torch_npu.get_npu_format(x)
    nz = torch_npu.npu_format_cast(x.clone(), 29)
    print("format of nz copy:", torch_npu.get_npu_format(nz))
    for dt, kernel in KERNELS.items():
        y = torch.empty(100, 64, dtype=dt, device="npu")
        kernel(x, y)
        ref = torch_npu.npu_dtype_cast(x, dt)
        same = torch.equal(y.cpu(), ref.cpu())
        print(f"cast to {y.dtype}: equal={same}")
        assert same and ref.dtype == dt
    print("PASS")
"""

ROTARY_TEST = r"""
'''Rotary (half) on a BSND activation: the kernel wants BNSD, so the test calls it on a .contiguous() copy of
x.transpose(1, 2); golden torch_npu.npu_rotary_mul on the BSND tensor; the whole run under torch.inference_mode().'''
import sys

import torch
import torch_npu
import pypto

S, D = 32, 64
HD = D // 2


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def rope_kernel(x: pypto.Tensor([pypto.DYNAMIC, S, D], pypto.DT_FP16),
                cos: pypto.Tensor([S, D], pypto.DT_FP16),
                sin: pypto.Tensor([S, D], pypto.DT_FP16),
                y: pypto.Tensor([pypto.DYNAMIC, S, D], pypto.DT_FP16)):
    BN = x.shape[0]
    pypto.set_vec_tile_shapes(1, S, HD)
    for b in pypto.loop(BN, name="LBN", idx_name="b"):
        x1 = pypto.cast(pypto.view(x, [1, S, HD], [b, 0, 0]), pypto.DT_FP32)
        x2 = pypto.cast(pypto.view(x, [1, S, HD], [b, 0, HD]), pypto.DT_FP32)
        c1 = pypto.cast(pypto.reshape(pypto.view(cos, [S, HD], [0, 0]), [1, S, HD]), pypto.DT_FP32)
        c2 = pypto.cast(pypto.reshape(pypto.view(cos, [S, HD], [0, HD]), [1, S, HD]), pypto.DT_FP32)
        s1 = pypto.cast(pypto.reshape(pypto.view(sin, [S, HD], [0, 0]), [1, S, HD]), pypto.DT_FP32)
        s2 = pypto.cast(pypto.reshape(pypto.view(sin, [S, HD], [0, HD]), [1, S, HD]), pypto.DT_FP32)
        pypto.assemble(pypto.cast(x1 * c1 - x2 * s1, pypto.DT_FP16), [b, 0, 0], y)
        pypto.assemble(pypto.cast(x2 * c2 + x1 * s2, pypto.DT_FP16), [b, 0, HD], y)


def tables():
    inv = 1.0 / (10000 ** (torch.arange(0, HD, dtype=torch.float32) / HD))
    emb = torch.outer(torch.arange(S, dtype=torch.float32), inv).repeat(1, 2)
    return emb.cos().half().npu(), emb.sin().half().npu()


def run(B, N):
    x_bsnd = torch.randn(B, S, N, D, dtype=torch.float16).npu()
    cos, sin = tables()
    x_bnsd = x_bsnd.transpose(1, 2).contiguous()
    y = torch.empty_like(x_bnsd)
    rope_kernel(x_bnsd.view(B * N, S, D), cos, sin, y.view(B * N, S, D))
    ref = torch_npu.npu_rotary_mul(x_bsnd, cos.view(1, S, 1, D), sin.view(1, S, 1, D))
    diff = (y.transpose(1, 2).float() - ref.float()).abs().max().item()
    print(f"B={B} N={N} inference={torch.is_inference_mode_enabled()} max diff {diff:.2e}")
    return diff < 2e-3


if __name__ == "__main__":
    torch.manual_seed(3)
    with torch.inference_mode():
        ok = all([run(1, 2), run(2, 3)])
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)
"""

SWIGLU_STREAM_TEST = r"""
'''SwiGLU fp16 launched on a side stream: torch.npu.stream(s) context, current_stream().wait_stream(s),
s.synchronize(); golden torch_npu.npu_swiglu; a second launch must be bit-identical (torch.equal).'''
import torch
import torch_npu
import pypto

H = 128
TILE = 8


@pypto.frontend.jit
def swiglu_kernel(x: pypto.Tensor([pypto.DYNAMIC, 2 * H], pypto.DT_FP16),
                  y: pypto.Tensor([pypto.DYNAMIC, H], pypto.DT_FP16)):
    T = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, H)
    for i in pypto.loop(0, T, TILE, name="LT", idx_name="i"):
        v = (T - i).min(TILE)
        a = pypto.cast(pypto.view(x, [TILE, H], [i, 0], valid_shape=[v, H]), pypto.DT_FP32)
        b = pypto.cast(pypto.view(x, [TILE, H], [i, H], valid_shape=[v, H]), pypto.DT_FP32)
        y[i:, 0:] = pypto.cast(a * pypto.sigmoid(a) * b, pypto.DT_FP16)


def launch(x, stream):
    y = torch.empty(x.shape[0], H, dtype=x.dtype, device=x.device)
    with torch.npu.stream(stream):
        swiglu_kernel(x, y)
    torch.npu.current_stream().wait_stream(stream)
    return y


if __name__ == "__main__":
    torch.npu.set_device(0)
    side = torch.npu.Stream()
    for T in (5, 24):
        x = torch.randn(T, 2 * H, dtype=torch.float16, device="npu:0")
        y1 = launch(x, side)
        y2 = launch(x, side)
        side.synchronize()
        ref = torch_npu.npu_swiglu(x, dim=-1)
        close = torch.allclose(y1.float(), ref.float(), rtol=1e-3, atol=1e-3)
        print(f"T={T}: {y1.dtype} close={close} repeat equal={torch.equal(y1, y2)}")
        assert close and torch.equal(y1, y2)
    print("PASS")
"""

QUANT_MATMUL_TEST = r"""
'''W8A8 matmul: x quantised per token with torch_npu.npu_dynamic_quant, w per channel; the kernel multiplies the
int8 tensors into int32 and dequantises; golden torch_npu.npu_quant_matmul(..., pertoken_scale=...) in fp16.'''
import torch
import torch_npu
import pypto

M, K, N = 32, 64, 64


@pypto.frontend.jit
def qmm_kernel(xq: pypto.Tensor([M, K], pypto.DT_INT8), wq: pypto.Tensor([K, N], pypto.DT_INT8),
               x_scale: pypto.Tensor([M, 1], pypto.DT_FP32), w_scale: pypto.Tensor([1, N], pypto.DT_FP32),
               out: pypto.Tensor([M, N], pypto.DT_FP16)):
    pypto.set_cube_tile_shapes([32, 32], [64, 64], [64, 64])
    acc = pypto.matmul(xq, wq, pypto.DT_INT32)
    pypto.set_vec_tile_shapes(M, N)
    deq = pypto.cast(acc, pypto.DT_FP32) * x_scale * w_scale
    out[:] = pypto.cast(deq, pypto.DT_FP16)


if __name__ == "__main__":
    torch.manual_seed(11)
    x = torch.randn(M, K, dtype=torch.float16).npu()
    w = torch.randn(K, N, dtype=torch.float32).npu()
    w_scale = w.abs().amax(dim=0) / 127.0
    wq = torch.round(w / w_scale).clamp(-128, 127).to(torch.int8)
    xq, x_scale = torch_npu.npu_dynamic_quant(x)
    out = torch.empty(M, N, dtype=torch.float16, device="npu")
    qmm_kernel(xq, wq, x_scale.view(M, 1), w_scale.view(1, N), out)
    ref = torch_npu.npu_quant_matmul(xq, wq, w_scale, pertoken_scale=x_scale, output_dtype=torch.float16)
    rel = ((out.float() - ref.float()).abs().max() / ref.float().abs().max()).item()
    print(f"xq {xq.dtype} scale {x_scale.dtype} out {out.dtype} rel err {rel:.2e}")
    assert torch.isfinite(out).all()
    assert rel < 2e-3, rel
    print("PASS")
"""

BF16_BITWISE_TEST = r"""
'''bf16 LeakyReLU: results printed with their npu dtype, compared bit for bit through .view(torch.int16) and
torch.equal, finiteness asserted; results read back with .cpu().float().numpy().'''
import os
import sys

import numpy as np
import torch
import torch_npu  # noqa: F401
import pypto

D = 256
TILE = 16
SLOPE = 0.125  # a power of two: exact in bf16, so the result is bit-exact against torch


@pypto.frontend.jit
def leaky_kernel(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16),
                 y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_BF16)):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop(0, n, TILE, name="L", idx_name="i"):
        v = (n - i).min(TILE)
        t = pypto.view(x, [TILE, D], [i, 0], valid_shape=[v, D])
        y[i:, 0:] = pypto.maximum(t, t * SLOPE)


def main():
    torch.npu.set_device(int(os.environ["TILE_FWK_DEVICE_ID"]))
    rows = []
    for n in (16, 45):
        x = torch.randn(n, D, dtype=torch.bfloat16, device="npu")
        y = torch.empty_like(x)
        leaky_kernel(x, y)
        ref = torch.nn.functional.leaky_relu(x.cpu().float(), SLOPE).to(torch.bfloat16)
        assert torch.isfinite(y).all()
        bits_equal = torch.equal(y.cpu().view(torch.int16), ref.view(torch.int16))
        np_equal = np.array_equal(y.cpu().float().numpy(), ref.float().numpy())
        print(f"n={n} x.dtype={x.dtype} y.dtype={y.dtype} bits equal={bits_equal} numpy equal={np_equal}")
        rows.append(bits_equal and np_equal)
    print(f"{sum(rows)}/{len(rows)} PASS")
    sys.exit(0 if all(rows) else 1)


if __name__ == "__main__":
    main()
"""

NUMPY_ON_NPU_TEST = r"""
import numpy as np
import torch
import torch_npu  # noqa: F401

x = torch.randn(4, 8).npu()
y = x * 2
ok = np.allclose(y.cpu().numpy(), x.cpu().numpy() * 2) and y.numpy(force=True).shape == (4, 8)
print("cpu chain ok:", ok)
golden = y.numpy()
print("PASS")
"""

ENV_TIMING_TEST = r"""
'''Environment set before torch is imported (ASCEND_RT_VISIBLE_DEVICES, ASCEND_LAUNCH_BLOCKING), a warm-up and a
time.time() loop for the average latency, the device count printed.'''
import os

os.environ.setdefault("ASCEND_RT_VISIBLE_DEVICES", "0")
os.environ["ASCEND_LAUNCH_BLOCKING"] = "1"

import time  # noqa: E402

import torch  # noqa: E402
import torch_npu  # noqa: E402,F401
import pypto  # noqa: E402

N = 4096


@pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU})
def scale_kernel(x: pypto.Tensor([N], pypto.DT_FP32), y: pypto.Tensor([N], pypto.DT_FP32), s: float):
    pypto.set_vec_tile_shapes(1024)
    for i in pypto.loop(0, N, 1024, name="L", idx_name="i"):
        y[i:] = pypto.view(x, [1024], [i]) * s


if __name__ == "__main__":
    visible = os.environ["ASCEND_RT_VISIBLE_DEVICES"].split(",")
    print(f"visible devices {visible}, device_count={torch.npu.device_count()}")
    torch.npu.set_device(0)
    x = torch.rand(N, device="npu")
    y = torch.empty_like(x)
    scale_kernel(x, y, 3.0)  # warm-up (compile)
    torch.npu.synchronize()
    iters = 3
    t0 = time.time()
    for _ in range(iters):
        scale_kernel(x, y, 3.0)
    torch.npu.synchronize()
    avg_ms = (time.time() - t0) / iters * 1000
    print(f"avg latency {avg_ms:.3f} ms over {iters} runs")
    torch.testing.assert_close(y, x * 3.0)
    print("PASS")
"""

SLICES_TEST = r"""
'''A kernel called on row slices x[:n] (contiguous views with an offset) and on .contiguous() copies of column
slices x[:, :k] (the device refuses a strided view: the gym's tests copy first).'''
import torch
import torch_npu  # noqa: F401
import pypto

TILE = 8


@pypto.frontend.jit
def square_kernel(x: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32),
                  y: pypto.Tensor([pypto.DYNAMIC, pypto.DYNAMIC], pypto.DT_FP32)):
    n, k = x.shape[0], x.shape[1]
    pypto.set_vec_tile_shapes(TILE, 64)
    for i in pypto.loop(0, n, TILE, name="LN", idx_name="i"):
        for j in pypto.loop(0, k, 64, name="LK", idx_name="j"):
            vi = (n - i).min(TILE)
            vj = (k - j).min(64)
            t = pypto.view(x, [TILE, 64], [i, j], valid_shape=[vi, vj])
            y[i:, j:] = t * t


if __name__ == "__main__":
    base = torch.randn(40, 96, device="npu")
    out = torch.zeros_like(base)
    square_kernel(base[8:29], out[8:29])  # rows 8..28 only: the rest stays zero
    torch.testing.assert_close(out[8:29], base[8:29] ** 2)
    assert out[:8].abs().sum().item() == 0 and out[29:].abs().sum().item() == 0
    print("row slice PASS")
    for k in (32, 70):
        xs = base[:, :k].contiguous()
        ys = torch.empty_like(xs)
        square_kernel(xs, ys)
        torch.testing.assert_close(ys, base[:, :k] ** 2)
        print(f"column slice k={k} is_contiguous={base[:, :k].is_contiguous()} PASS")
    try:
        square_kernel(base[:, :32], torch.empty(40, 32, device="npu"))
    except RuntimeError as e:
        print("strided view refused:", e)
"""

JIT_OPTIONS_TEST = r"""
'''Softmax with the jit's option dicts as the gym's performance-tuned ops write them: runtime_options with the
scheduler knobs, debug_options with the compile/runtime debug modes, pass_options; called under torch.no_grad().'''
import torch
import torch_npu  # noqa: F401
import pypto

D = 128
TILE = 4
RUNTIME_OPTIONS = {"run_mode": pypto.RunMode.NPU, "device_sched_mode": 1, "stitch_function_max_num": 128,
                   "stitch_function_inner_memory": 1024}
DEBUG_OPTIONS = {"compile_debug_mode": 0, "runtime_debug_mode": 0}


@pypto.frontend.jit(runtime_options=RUNTIME_OPTIONS, debug_options=DEBUG_OPTIONS,
                    pass_options={"cube_l1_reuse_setting": {-1: 4}})
def softmax_kernel(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
                   y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop(0, n, TILE, name="L", idx_name="i"):
        v = (n - i).min(TILE)
        t = pypto.view(x, [TILE, D], [i, 0], valid_shape=[v, D])
        e = pypto.exp(t - pypto.amax(t, -1, keepdim=True))
        y[i:, 0:] = e / pypto.sum(e, -1, keepdim=True)


if __name__ == "__main__":
    with torch.no_grad():
        for n in (4, 9):
            x = torch.randn(n, D, device="npu")
            y = torch.empty_like(x)
            softmax_kernel(x, y)
            torch.testing.assert_close(y, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)
            print(f"n={n} PASS")
"""

THREADS_TEST = r"""
'''One kernel called from two threads at once (a serving-style smoke test): each thread its own inputs, results
checked in the main thread after join.'''
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
import torch_npu  # noqa: F401
import pypto

D = 64


@pypto.frontend.jit
def add_kernel(a: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), b: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
               c: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    n = a.shape[0]
    pypto.set_vec_tile_shapes(8, D)
    for i in pypto.loop(0, n, 8, name="L", idx_name="i"):
        v = (n - i).min(8)
        c[i:, 0:] = pypto.view(a, [8, D], [i, 0], valid_shape=[v, D]) + pypto.view(b, [8, D], [i, 0], valid_shape=[v, D])


results = {}


def worker(tag, rows):
    torch.npu.set_device(0)
    a = torch.full((rows, D), float(tag), device="npu")
    b = torch.arange(rows * D, dtype=torch.float32, device="npu").view(rows, D)
    c = torch.empty_like(a)
    add_kernel(a, b, c)
    torch.npu.synchronize()
    results[tag] = (c.cpu(), (a + b).cpu(), threading.current_thread().name, c.is_npu)


if __name__ == "__main__":
    threads = [threading.Thread(target=worker, args=(t, r), name=f"worker-{t}") for t, r in ((1, 13), (2, 40))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(worker, (3, 4), (8, 17)))
    for tag in sorted(results):
        got, want, name, on_npu = results[tag]
        assert torch.equal(got, want), tag
        print(f"{name}: rows={got.shape[0]} on_npu={on_npu} PASS")
    print("threads PASS" if len(results) == 4 else "FAIL")
"""

MEMORY_TEST = r"""
'''Memory check of a gym performance test: reset the peak, run, synchronize, read max_memory_allocated() and
memory_stats(), assert the peak covers the tensors the test put on the NPU and stays under a budget.'''
import torch
import torch_npu  # noqa: F401
import pypto

N, D = 512, 256


@pypto.frontend.jit
def copy_kernel(x: pypto.Tensor([N, D], pypto.DT_FP32), y: pypto.Tensor([N, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(64, D)
    for i in pypto.loop(0, N, 64, name="L", idx_name="i"):
        y[i:, 0:] = pypto.view(x, [64, D], [i, 0]) * 1.0


if __name__ == "__main__":
    torch.npu.set_device(0)
    torch.npu.empty_cache()
    torch.npu.reset_peak_memory_stats()
    base = torch.npu.memory_allocated()
    x = torch.randn(N, D, device="npu")
    y = torch.empty_like(x)
    copy_kernel(x, y)
    torch.npu.synchronize()
    peak = torch.npu.max_memory_allocated() - base
    stats = torch.npu.memory_stats()
    need = 2 * N * D * 4
    print(f"peak {peak / 2**20:.2f} MiB (tensors {need / 2**20:.2f} MiB), "
          f"allocated.peak {stats['allocated_bytes.all.peak']}, reserved {torch.npu.memory_reserved()}")
    assert need <= peak < 4 * need, (peak, need)
    del x, y
    assert torch.npu.memory_allocated() == base and torch.npu.max_memory_allocated() - base == peak
    free, total = torch.npu.mem_get_info()
    assert free <= total
    torch.npu.reset_peak_memory_stats()
    assert torch.npu.max_memory_allocated() == base
    print("memory PASS")
"""

TORCHAIR_FALLBACK_TEST = r"""
'''A model test that uses graph mode when torchair is there and eager mode otherwise.'''
import torch
import torch_npu  # noqa: F401

try:
    import torchair
    from torchair.configs.compiler_config import CompilerConfig
    HAS_TORCHAIR = True
except ImportError as exc:
    print(f"graph mode unavailable ({exc}); eager")
    HAS_TORCHAIR = False


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.fc(x))


model = Mlp().npu().eval()
if HAS_TORCHAIR:
    model = torch.compile(model, backend=torchair.get_npu_backend(compiler_config=CompilerConfig()))
with torch.no_grad():
    y = model(torch.randn(4, 16).npu())
print("eager PASS" if y.is_npu and y.shape == (4, 16) else "FAIL")
"""

TORCHAIR_REQUIRED_TEST = r"""
import torch
import torch_npu  # noqa: F401
import torchair

print("PASS", torchair)
"""

MOE_FALLBACK_TEST = r"""
'''Grouped MoE gating: golden from torch_npu.npu_moe_gating_top_k where the installed torch_npu has it, else the
test's own torch reference (older CANN): the hasattr check takes the reference on the emulator.'''
import torch
import torch_npu


def reference_gating(logits, k, bias):
    scores = torch.sigmoid(logits.float())
    _, idx = torch.topk(scores + bias, k, dim=-1)
    w = scores.gather(-1, idx)
    return w / w.sum(-1, keepdim=True), idx.to(torch.int32)


logits = torch.randn(6, 32, device="npu")
bias = torch.zeros(32, device="npu")
if hasattr(torch_npu, "npu_moe_gating_top_k"):
    y, idx, _ = torch_npu.npu_moe_gating_top_k(logits, 4, bias=bias, norm_type=1)
    src = "torch_npu"
else:
    y, idx = reference_gating(logits, 4, bias)
    src = "reference"
assert y.shape == (6, 4) and idx.dtype == torch.int32
torch.testing.assert_close(y.sum(-1), torch.ones(6, device="npu"))
print(f"golden from {src}: PASS")
"""

DEVICE_TYPE_TEST = r"""
import torch
import torch_npu  # noqa: F401

x = torch.randn(3, device="npu:0")
print(f"device={x.device} type={x.device.type} is_npu={x.is_npu} type()={x.type()}")
assert x.device.type == "npu", f"expected an npu tensor, got {x.device}"
print("PASS")
"""


@pytest.mark.slow
@needs_torch
def test_shared_utils_yaml_cases_and_golden_cache_next_to_the_script(tmp_path: Path) -> None:
    """tests/utils.py imported by the script, cases from cases.yaml (``--level``), goldens generated on the first run
    and loaded from ``golden_cache/*.npz`` on the second, a summary table and ``sys.exit(0 if ok else 1)``."""
    op = tmp_path / "axpy"
    _write(op / "src/axpy_impl.py", AXPY_IMPL)
    _write(op / "tests/utils.py", UTILS)
    test_dir = op / "tests/axpy"
    _write(test_dir / "cases.yaml", CASES_YAML)
    _write(test_dir / "test_axpy.py", AXPY_TEST)
    first = _ok(_run(["test_axpy.py"], test_dir, op / "src"), "summary: 2/2 passed -> PASS")
    assert first.count("generated golden") == 2 and "| tail " in first
    second = _ok(_run(["test_axpy.py", "--level", "1"], test_dir, op / "src"), "summary: 3/3 passed -> PASS")
    assert second.count("loaded cached golden") == 2 and second.count("generated golden") == 1
    assert len(list((test_dir / "golden_cache").glob("*.npz"))) == 3


@pytest.mark.slow
@needs_torch
def test_pytest_yaml_ids_common_helpers_no_grad_and_bf16_ulps(tmp_path: Path) -> None:
    """``-m pytest`` of a module that imports ``tests/common.py`` (yaml params with ids, a session fixture, a
    ``@torch.no_grad()`` compare); inputs require grad, the runner is ``@torch.no_grad()``; golden ``npu_rms_norm``."""
    tests = tmp_path / "tests"
    _write(tests / "common.py", COMMON_PY)
    _write(tests / "rms_norm/rms_cases.yaml", RMS_CASES_YAML)
    _write(tests / "rms_norm/test_rms_norm.py", RMS_NORM_TEST)
    out = _ok(_run(["-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_rms_norm.py"], tests / "rms_norm"),
              "3 passed")
    assert "rms_t9_h256: torch.bfloat16 max ulp" in out


@needs_torch
def test_format_cast_nd_check_and_npu_dtype_cast_golden(tmp_path: Path) -> None:
    _write(tmp_path / "test_cast.py", FORMAT_CAST_TEST)
    out = _ok(_run(["test_cast.py"], tmp_path), "format of nz copy: 29", "PASS")
    assert "cast to torch.bfloat16: equal=True" in out and "cast to torch.float16: equal=True" in out


@pytest.mark.slow
@needs_torch
def test_rotary_on_contiguous_transpose_under_inference_mode(tmp_path: Path) -> None:
    _write(tmp_path / "test_rotary.py", ROTARY_TEST)
    out = _ok(_run(["test_rotary.py"], tmp_path), "B=2 N=3 inference=True", "PASS")
    assert "FAIL" not in out


@pytest.mark.slow
@needs_torch
def test_swiglu_on_a_side_stream_is_repeatable(tmp_path: Path) -> None:
    _write(tmp_path / "test_swiglu_stream.py", SWIGLU_STREAM_TEST)
    _ok(_run(["test_swiglu_stream.py"], tmp_path), "T=24: torch.float16 close=True repeat equal=True", "PASS")


@pytest.mark.slow
@needs_torch
def test_w8a8_matmul_against_npu_dynamic_quant_and_npu_quant_matmul(tmp_path: Path) -> None:
    _write(tmp_path / "test_qmm.py", QUANT_MATMUL_TEST)
    _ok(_run(["test_qmm.py"], tmp_path), "xq torch.int8 scale torch.float32 out torch.float16", "PASS")


@pytest.mark.slow
@needs_torch
def test_bf16_bitwise_compare_through_int16_views(tmp_path: Path) -> None:
    _write(tmp_path / "test_leaky.py", BF16_BITWISE_TEST)
    out = _ok(_run(["test_leaky.py"], tmp_path), "2/2 PASS")
    assert "n=45 x.dtype=torch.bfloat16 y.dtype=torch.bfloat16 bits equal=True numpy equal=True" in out


@pytest.mark.slow
@needs_torch
def test_env_before_import_and_time_loop(tmp_path: Path) -> None:
    _write(tmp_path / "test_scale.py", ENV_TIMING_TEST)
    out = _ok(_run(["test_scale.py"], tmp_path), "visible devices ['0'], device_count=1", "PASS")
    assert "avg latency" in out


@needs_torch
def test_kernel_on_row_slices_and_contiguous_column_copies(tmp_path: Path) -> None:
    """The strided view is refused as a ``RuntimeError`` the script catches, as the real pypto raises it (failed
    before: the emulator's error was a plain ``Exception``, the script's ``except RuntimeError`` let it through,
    exit 1)."""
    _write(tmp_path / "test_slices.py", SLICES_TEST)
    out = _ok(_run(["test_slices.py"], tmp_path), "row slice PASS", "column slice k=70 is_contiguous=False PASS")
    assert re.search(r"strided view refused: .*not all tensors are contiguous", out), out


@pytest.mark.slow
@needs_torch
def test_jit_runtime_and_debug_option_dicts(tmp_path: Path) -> None:
    _write(tmp_path / "test_softmax_opts.py", JIT_OPTIONS_TEST)
    _ok(_run(["test_softmax_opts.py"], tmp_path), "n=4 PASS", "n=9 PASS")


@pytest.mark.slow
@needs_torch
def test_kernel_called_from_two_threads(tmp_path: Path) -> None:
    """``threading.Thread`` pairs and a ``ThreadPoolExecutor``: the results are on the NPU in each thread."""
    _write(tmp_path / "test_threads.py", THREADS_TEST)
    out = _ok(_run(["test_threads.py"], tmp_path), "threads PASS")
    assert "worker-2: rows=40 on_npu=True PASS" in out


@needs_torch
def test_max_memory_allocated_counts_the_npu_tensors(tmp_path: Path) -> None:
    """Failed before: ``memory_stats()`` was an empty dict (``KeyError: 'allocated_bytes.all.peak'`` at the
    script's line) and ``max_memory_allocated()`` 0 (the peak the script asserts)."""
    _write(tmp_path / "test_memory.py", MEMORY_TEST)
    _ok(_run(["test_memory.py"], tmp_path), "peak 1.00 MiB (tensors 1.00 MiB)", "memory PASS")


@needs_torch
def test_numpy_of_an_npu_tensor_fails_as_on_a_device_host(tmp_path: Path) -> None:
    """Failed before (it passed): ``y.numpy()`` of an NPU tensor. Now the device host's ``TypeError`` at the script's
    line, exit 3; ``.cpu().numpy()`` and ``numpy(force=True)`` work."""
    _write(tmp_path / "test_numpy.py", NUMPY_ON_NPU_TEST)
    proc = _run(["test_numpy.py"], tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "cpu chain ok: True" in proc.stdout and "PASS" not in proc.stdout
    assert "test_numpy.py:9: TypeError: can't convert npu:0 device type tensor to numpy" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@needs_torch
def test_torchair_missing_takes_the_eager_path_or_says_what_is_missing(tmp_path: Path) -> None:
    """``except ImportError`` falls back to eager; an unconditional ``import torchair`` stops at its line naming
    torchair as what the stand-in lacks (before: only "No module named 'torchair'")."""
    _write(tmp_path / "test_mlp.py", TORCHAIR_FALLBACK_TEST)
    _ok(_run(["test_mlp.py"], tmp_path), "graph mode unavailable", "eager PASS")
    _write(tmp_path / "test_graph.py", TORCHAIR_REQUIRED_TEST)
    proc = _run(["test_graph.py"], tmp_path)
    assert proc.returncode == 3 and "PASS" not in proc.stdout, proc.stdout + proc.stderr
    assert "test_graph.py:3: ModuleNotFoundError: No module named 'torchair': torchair (torch_npu's graph mode) is " \
           "not provided by the emulator's torch_npu stand-in" in proc.stderr, proc.stderr


@needs_torch
def test_unprovided_moe_gating_top_k_takes_the_scripts_hasattr_fallback(tmp_path: Path) -> None:
    _write(tmp_path / "test_gating.py", MOE_FALLBACK_TEST)
    _ok(_run(["test_gating.py"], tmp_path), "golden from reference: PASS")


@needs_torch
def test_device_type_of_an_npu_tensor_says_npu(tmp_path: Path) -> None:
    """A device host prints ``device=npu:0 type=npu`` and passes. Pinned as a difference in s39 (the script's
    ``assert`` failed, exit 3, with ``device=cpu type=cpu``); s40 answers the script as a device host does
    (``runtime/emulator/_torch_npu_device.py``)."""
    _write(tmp_path / "test_devtype.py", DEVICE_TYPE_TEST)
    proc = _run(["test_devtype.py"], tmp_path)
    assert "device=npu:0 type=npu is_npu=True type()=torch.npu.FloatTensor" in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 0, proc.stderr


def test_memory_statistics_follow_the_live_npu_tensors() -> None:
    """In process: the stand-in's memory numbers count each storage once (views share it), in 512-byte blocks."""
    torch = pytest.importorskip("torch")
    from runtime.emulator._torch_npu_placement import allocated_bytes, mark
    from runtime.emulator._torch_npu_runtime import NpuMemory

    mem = NpuMemory()
    mem.reset_peak()
    base = allocated_bytes()
    x = torch.zeros(1000)
    mark(x, True)
    v = x[10:20]
    mark(v, True)
    assert allocated_bytes() - base == 4096  # 4000 bytes -> 8 blocks, the view not counted again
    assert mem.max_allocated() - base == 4096
    del x, v
    assert allocated_bytes() == base and mem.max_allocated() - base == 4096 and mem.memory_reserved() >= 4096
    mem.empty_cache()
    mem.reset_peak()
    assert mem.max_allocated() == base and mem.stats()["allocated_bytes.all.peak"] == base


def test_kernel_errors_are_their_python_kind_under_the_runner() -> None:
    """``raise_as_python_kinds`` (the script runner turns it on): ``except RuntimeError`` / ``pytest.raises
    (ValueError)`` catch kernel errors as they catch the real pypto's; still ``EmulatorError``s, picklable."""
    from runtime.emulator import _errors

    before = _errors._AS_KIND["on"]
    try:
        _errors.raise_as_python_kinds(False)
        assert not isinstance(_errors.py_error("ValueError", "x"), ValueError)
        _errors.raise_as_python_kinds()
        e = _errors.py_error("ValueError", "bad shape")
        with pytest.raises(ValueError, match="bad shape"):
            raise e
        plain = _errors.EmulatorError("F21004", "tile too big")
        assert isinstance(plain, RuntimeError) and isinstance(plain, _errors.EmulatorError)
        back = pickle.loads(pickle.dumps(e.locate("k.py", 3)))
        assert type(back) is type(e) and (back.file, back.line, back.kind) == ("k.py", 3, "ValueError")
        assert str(back) == str(e)
    finally:
        _errors.raise_as_python_kinds(before)


def test_scripts_are_valid_python() -> None:
    """The inline scripts compile (a typo here would show up as an emulator failure)."""
    for name, body in globals().items():
        if name.isupper() and isinstance(body, str) and "import" in body:
            compile(body, name, "exec")


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_pto_forges_own_code_reads_npu_tensors_through_numpy() -> None:
    """Found at integration: the gym import's observer (``orchestrator.adapters.gym._observe``) summarises the tensors a
    script passes with ``.numpy()``; the first version of the device host's refusal let only ``runtime.`` through, and
    ``orchestrator import`` of llada2_gate_select found no golden. PTO Forge's packages are let through, also past
    torch's own frames (``np.asarray`` -> ``Tensor.__array__``); a script's line is not."""
    import sys

    from runtime.emulator._torch_npu import _ours

    def frame_from(*modules: str, file: str = "<test>") -> bool:
        """``_ours`` of the innermost of a chain of functions, each defined in a module of the given name (the
        innermost in ``file``)."""
        fn = None
        for name in modules:
            ns: dict[str, object] = {"__name__": name, "sys": sys, "_ours": _ours, "inner": fn}
            body = "return inner()" if fn is not None else "return _ours(sys._getframe(0))"
            exec(compile(f"def f():\n    {body}\n", file if fn is None else "<test>", "exec"), ns)  # noqa: S102
            fn = ns["f"]
        assert callable(fn)
        return bool(fn())

    assert frame_from("runtime.emulator._frontend")
    assert frame_from("orchestrator.adapters.gym._observe")
    assert frame_from("torch._tensor", "orchestrator.adapters.gym._observe")  # innermost first
    assert not frame_from("__main__")
    assert not frame_from("torch._tensor", "__main__")
    assert not frame_from("numpy.testing", "orchestrator.x")  # only torch's own frames are looked past
    observer = str(Path(__file__).resolve().parents[2] / "orchestrator" / "adapters" / "gym" / "_observe.py")
    assert frame_from("__main__", file=observer)  # the observer runs as a script
