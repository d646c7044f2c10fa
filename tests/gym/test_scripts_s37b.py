"""Device-host habits, second s37 round: where tensors live once moving to the NPU copies, and CUDA code after
``import torch_npu.contrib.transfer_to_npu``.

- a tensor computed from an NPU tensor (``torch.empty_like(x_npu)``, a view, a clone, ``.to(dtype)``) counted as a
  host tensor: a wrapper's ``out = out.npu()`` copied it, the kernel wrote into the copy and the caller compared
  the untouched ``out``; its ``.cpu()`` aliased the tensor a later kernel changed
  (``runtime.emulator._torch_npu_placement``); also in threads, under ``with torch.device("npu")`` and for
  ``x.to(npu_tensor)``, and for the parameters of a module moved with ``module.npu()``;
- ``transfer_to_npu`` changed nothing: ``device="cuda"``, ``.cuda()``, ``torch.cuda.*`` failed as on a CPU torch
  (``_torch_npu.transfer_to_npu``).
"""

from __future__ import annotations

from pathlib import Path

from test_scripts import needs_torch
from test_scripts_s37 import _run, _script


@needs_torch
def test_results_of_npu_tensors_live_on_the_npu(tmp_path: Path) -> None:
    """``add_`` stands for an in-place kernel: what it writes must reach the tensor the script compares."""
    _script(tmp_path, """
        import threading, torch, torch_npu

        def launch(x, out):  # a gym wrapper: moves its arguments, then runs the kernel in place
            out = out.npu()
            out.copy_(x.npu() + 1)

        def case(rows, got):
            x = torch.zeros(rows, 4, device="npu")
            out = torch.empty_like(x)          # on the NPU, as x is
            launch(x, out)
            got.append(float(out.sum()))

        got = []
        case(2, got)
        t = threading.Thread(target=case, args=(3, got)); t.start(); t.join()
        base = torch.zeros(4, 4, device="npu:0")
        view = base[:2]
        view.npu().add_(1)                     # a view of an NPU tensor is on the NPU
        snap = base.clone().cpu(), base.to(torch.float64).cpu(), base.view(16).cpu()
        base.add_(1)                           # a later kernel call overwrites the device buffer
        host = torch.zeros(4)
        moved = host.to(base)                  # x.to(other): other's device, a copy
        moved.add_(1)
        h = torch.zeros(4); h.copy_(base[0])   # copy_ into a host tensor leaves it on the host
        with torch.device("npu"):
            made = torch.zeros(2)
        keep = made.cpu(); made.add_(1)
        mine = torch.empty_like(base, device="cpu")
        print("OK", got, [float(s.sum()) for s in snap], float(host.sum()), h.npu() is h, float(keep.sum()),
              mine.npu() is mine, torch.zeros(2).npu() is not None)
        m = torch.nn.Linear(2, 2).npu()        # a module's parameters are on the NPU after module.npu()
        print("MOD", m.weight.npu() is m.weight, m.cpu().weight.npu() is m.weight, base.to("npu") is base)
    """)
    proc = _run(["--quiet", "s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK [8.0, 12.0] [8.0, 8.0, 8.0] 0.0 False 0.0 False True" in proc.stdout, proc.stdout
    assert "MOD True False True" in proc.stdout, proc.stdout


@needs_torch
def test_transfer_to_npu_runs_cuda_code_on_the_npu(tmp_path: Path) -> None:
    _script(tmp_path, """
        import torch, torch_npu
        print("BEFORE", torch.cuda.is_available())
        from torch_npu.contrib import transfer_to_npu
        torch.cuda.set_device(0); torch.cuda.manual_seed(0)
        x = torch.ones(4, device="cuda")
        y = torch.zeros(4).cuda(); y0 = torch.zeros(4); y1 = y0.to(torch.device("cuda", 0)); y1.add_(1)
        m = torch.nn.Linear(4, 4).cuda()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); e1.record(); torch.cuda.synchronize()
        with torch.autocast("cuda"):
            a = m(x)
        with torch.cuda.amp.autocast():
            b = m(x)
        g = torch.Generator(device="cuda").manual_seed(1)
        print("OK", torch.cuda.is_available(), torch.cuda.device_count(), torch.cuda.get_device_name(0),
              x.device.type, a.dtype, b.dtype, float(y0.sum()), e0.elapsed_time(e1) >= 0,
              torch.randn(2, generator=g, device="cuda:0").shape[0], torch.cuda.memory_allocated())
    """)
    proc = _run(["--quiet", "s.py"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "BEFORE False" in proc.stdout, proc.stdout
    # cuda.memory_allocated is torch.npu's: the blocks of the NPU tensors alive at that line (s39; 0 before);
    # x.device.type is "npu", as on a device host after transfer_to_npu (s40; "cpu" before)
    assert "OK True 1 Ascend910B1 npu torch.float16 torch.float16 0.0 True 2 3584" in proc.stdout, proc.stdout
