"""Real-gym-style test scripts of round s43, run unmodified under ``python -m runtime.emulator`` as a gym user runs
them (``cd <dir> && TILE_FWK_DEVICE_ID=0 python -m runtime.emulator <script>``).

s42 left these open in the torch_npu stand-in; what each script met before this round's fixes:

- ``torch.Generator(device="npu").device`` said ``cpu`` (a script asserting its generator is on the device, or
  putting tensors on ``g.device``, failed); the numbers it draws were already the CPU generator's;
- ``torch.npu.Stream.priority_range()`` died with a raw ``AttributeError: type object '_Stream' has no attribute
  'priority_range'`` and ``stream.priority`` answered. torch_npu 2.14.0 raises ``RuntimeError("NPU does not
  support Stream.priority_range() currently.")`` (and the same for ``get_priority``, the ``priority`` getter) on a
  device host - its own strings in ``libtorch_npu.so`` - so a script that reads a stream's priority dies there too,
  and one written for the NPU guards the call;
- the fused ``torch_npu.npu_apply_adam_w`` (the golden of the gym's ApplyAdamWV2), ``npu_bmmV2`` and ``npu_linear``
  were not provided (``NotProvidedError`` listing every provided name);
- ``torch.npu.NPUGraph`` / ``torch.npu.graph`` / ``make_graphed_callables`` were missing names (a
  ``NotProvidedError``, and ``torch.npu.is_current_stream_capturing()`` too). Capture and replay is not emulated
  (a replay would have to re-run every kernel launch and tensor operation of the capture against the same tensors):
  the names exist, as on a device host, each use raises one ``EMU_UNSUPPORTED`` at the script's line, and
  ``is_current_stream_capturing()`` answers False.

Still open: a tensor made on ``"npu:1"`` while the current device is 0 says ``npu:0`` (``.device`` reads the
current device; ``device_count()`` is 1); ``torch.npu.default_generators[0].device`` says ``cpu`` (it is the CPU's
own generator, the one the npu factories draw from).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_scripts import needs_torch
from test_scripts_s38 import _ok, _run, _write  # the runner as a gym user types it
from test_scripts_s41 import _gym, needs_gym  # PYTHONPATH=<gym>/ops/<op>/src, the script in tmp/<op>/

DEVICE_RNG_STREAMS_ADAMW = r"""
'''Seeded device generators for reproducible inputs, a high-priority compute stream when the NPU supports
priorities, and the fused AdamW reference against torch.optim.AdamW.'''
import copy
import pickle
import sys

import torch
import torch_npu

DEVICE = f"npu:{torch.npu.current_device()}"
failures = []


def check(name, ok, detail=""):
    print(f"[{'PASS' if ok else 'FAIL'}] {name} {detail}")
    if not ok:
        failures.append(name)


# --- generators: one per case, on the device, reproducible from its seed
g = torch.Generator(device=DEVICE)
g.manual_seed(1234)
check("generator device", g.device == torch.device(DEVICE) and g.device.type == "npu", str(g.device))
a = torch.randn(4, 8, generator=g, device=g.device)
g.manual_seed(1234)
b = torch.randn(4, 8, generator=g, device=g.device)
check("reseeded draws repeat", torch.equal(a, b) and a.device.type == "npu")
saved = g.get_state()
c1 = torch.rand(5, generator=g, device="npu")
g2 = copy.deepcopy(g)
g3 = pickle.loads(pickle.dumps(g))
g.set_state(saved)
c2 = torch.rand(5, generator=g, device="npu")
check("state round trip", torch.equal(c1, c2))
check("copies stay on the device", (g2.device.type, g3.device.type) == ("npu", "npu")
      and torch.equal(torch.rand(3, generator=g2, device="npu"), torch.rand(3, generator=g3, device="npu")))


def noisy(t, gen):
    return t + torch.randn(t.shape, generator=gen, device=t.device)


g.manual_seed(5)
eager = noisy(torch.zeros(6, device="npu"), g)
g.manual_seed(5)
compiled = torch.compile(noisy, backend="eager")(torch.zeros(6, device="npu"), g)
check("compiled draws", torch.equal(eager, compiled) and compiled.device.type == "npu")
check("host generator", torch.Generator().device.type == "cpu" and torch.Generator("cpu").device.type == "cpu")
torch.npu.manual_seed(7)
x1 = torch.randn(3, device="npu")
torch.npu.manual_seed(7)
check("torch.npu.manual_seed", torch.equal(x1, torch.randn(3, device="npu")) and torch.npu.initial_seed() == 7)

# --- streams: priorities where the NPU reports them
try:
    low, high = torch.npu.Stream.priority_range()
    compute = torch.npu.Stream(priority=high)
    prio = compute.priority
except RuntimeError as e:
    print("stream priorities:", e)
    compute, prio = torch.npu.Stream(priority=-1), None
check("priority_range raises as torch_npu's", prio is None)
with torch.npu.stream(compute):
    y = torch.ones(4, device="npu") * 2
compute.synchronize()
check("stream work", y.sum().item() == 8.0 and torch.npu.current_stream() == torch.npu.default_stream())
check("not capturing", torch.npu.is_current_stream_capturing() is False)

# --- the fused AdamW step against torch.optim.AdamW
torch.manual_seed(0)
w = torch.randn(64, 32, device="npu")
ref = torch.nn.Parameter(w.clone())
opt = torch.optim.AdamW([ref], lr=1e-2, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.05, foreach=False)
m, v = torch.zeros_like(w), torch.zeros_like(w)
for step in range(1, 4):
    grad = torch.randn(64, 32, device="npu")
    ref.grad = grad.clone()
    opt.step()
    out = torch_npu.npu_apply_adam_w(0.9 ** (step - 1), 0.99 ** (step - 1), 1e-2, 0.05, 0.9, 0.99, 1e-8, grad,
                                     None, False, False, out=(w, m, v))
    check(f"adamw step {step}", out[0] is w and torch.allclose(w, ref.detach(), rtol=1e-5, atol=1e-6)
          and torch.allclose(m, opt.state[ref]["exp_avg"], rtol=1e-5, atol=1e-7),
          f"max diff {(w - ref.detach()).abs().max().item():.2e}")
q, k = torch.randn(2, 3, 4, device="npu"), torch.randn(2, 4, 5, device="npu")
check("npu_bmmV2", torch.allclose(torch_npu.npu_bmmV2(q, k, []), torch.bmm(q, k), atol=1e-6))
lin = torch.nn.Linear(4, 6).npu()
xs = torch.randn(3, 4, device="npu")
check("npu_linear", torch.allclose(torch_npu.npu_linear(xs, lin.weight, lin.bias), lin(xs), atol=1e-6))

print(f"{len(failures)} failed")
sys.exit(1 if failures else 0)
"""


@needs_torch
def test_device_generators_stream_priorities_and_the_fused_adamw_reference(tmp_path: Path) -> None:
    """One script of the s43 items that run (a device generator also inside ``torch.compile``, where Dynamo
    takes it as torch's own): each check prints PASS, priority_range raises torch_npu's own
    error (caught by the script as a device host's would be), and the fused ops match torch's."""
    _write(tmp_path / "test_rng_streams.py", DEVICE_RNG_STREAMS_ADAMW)
    out = _ok(_run(["test_rng_streams.py"], tmp_path), "0 failed",
              "stream priorities: NPU does not support Stream.priority_range() currently.")
    assert "[FAIL]" not in out and out.count("[PASS]") == 15, out


GRAPH_CAPTURE = r"""
'''Capture a small model into an NPU graph once and replay it on new inputs (the CUDA-graph recipe).'''
import torch
import torch_npu  # noqa: F401

model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU()).npu().eval()
static_in = torch.randn(8, 16, device="npu")
print("capturing:", torch.npu.is_current_stream_capturing())
s = torch.npu.Stream()
s.wait_stream(torch.npu.current_stream())
with torch.npu.stream(s), torch.no_grad():
    for _ in range(2):
        model(static_in)
torch.npu.current_stream().wait_stream(s)
g = torch.npu.NPUGraph()
with torch.npu.graph(g), torch.no_grad():
    static_out = model(static_in)
static_in.copy_(torch.randn(8, 16))
g.replay()
print("replayed", static_out.shape)
"""


@needs_torch
def test_an_npu_graph_capture_stops_at_its_line_with_one_emu_unsupported(tmp_path: Path) -> None:
    """The graph API is there (``hasattr`` is True, as on a device host) and the first use is one error line at the
    script's own line naming the call; the warm-up before it ran."""
    script = _write(tmp_path / "graph_capture.py", GRAPH_CAPTURE)
    proc = _run([script.name], tmp_path)
    assert "capturing: False" in proc.stdout, proc.stdout + proc.stderr
    assert proc.returncode == 1 and "replayed" not in proc.stdout, proc.stdout + proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ERROR")]
    assert len(errors) == 1, proc.stderr
    assert errors[0].startswith(f"ERROR {script}:14: RuntimeError: Errcode: EMU_UNSUPPORTED! torch.npu.NPUGraph: NPU "
                                "graph capture and replay (aclgraph) is not emulated"), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


ADAMW_KERNEL_VS_FUSED_GOLDEN = r"""
'''The gym's ApplyAdamWV2 kernel against torch_npu.npu_apply_adam_w as the golden, three steps.'''
import sys

import torch
import torch_npu

from pypto_gym.ops.pypto_tile.experimental.vector.ApplyAdamWV2.apply_adam_w_v2_impl import apply_adam_w_v2_wrapper

torch.npu.set_device(0)
g = torch.Generator(device="npu").manual_seed(3)
shape = (7168, 16)
w = torch.randn(*shape, generator=g, device="npu")
m = torch.zeros(*shape, device="npu")
v = torch.zeros(*shape, device="npu")
gw, gm, gv = w.clone(), m.clone(), v.clone()
beta1, beta2, lr, wd, eps = 0.9, 0.999, 1e-3, 1e-2, 1e-8
worst = 0.0
for step in range(1, 4):
    grad = torch.randn(*shape, generator=g, device="npu")
    w2, m2, v2 = apply_adam_w_v2_wrapper(w, grad, m, v, beta1, beta2, lr, wd, eps, step)
    w.copy_(w2), m.copy_(m2), v.copy_(v2)
    torch_npu.npu_apply_adam_w(beta1 ** (step - 1), beta2 ** (step - 1), lr, wd, beta1, beta2, eps, grad, None,
                               False, False, out=(gw, gm, gv))
    worst = max(worst, (w - gw).abs().max().item())
    torch.testing.assert_close(w, gw, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(v, gv, rtol=1e-4, atol=1e-7)
print(f"kernel vs npu_apply_adam_w: max diff {worst:.2e} on {w.device}")
print("PASS")
"""


@needs_gym
@pytest.mark.slow
def test_the_gym_adamw_kernel_against_the_fused_golden(tmp_path: Path) -> None:
    """The real ApplyAdamWV2 kernel (gym) agrees with the stand-in's ``npu_apply_adam_w`` over three steps: the
    fused operator is usable as the golden the vendor's own tests would take."""
    out = _ok(_gym("apply_adam_w_v2", tmp_path, "test_fused_golden.py", ADAMW_KERNEL_VS_FUSED_GOLDEN), "PASS")
    assert "on npu:0" in out, out
