"""Red team s22: wrappers that were right only for the way verify called them.

Every verification call was a plain call: autograd on, inputs that do not require grad, a view input at most 48
elements into its allocation. A wrapper could choose its kernel by
the caller's autograd state (``(torch.ones(1, requires_grad=True) * 2).requires_grad``, ``y.is_inference()``,
``x.requires_grad``) or by where its input lives (``x.storage_offset() > 48``, ``x.base.size > x.size + 100``) and
drop its tail rows under ``torch.no_grad()``, ``torch.inference_mode()``, in training, or for a slice of a larger
tensor - and pass every verification. Each of these passed lint and every runtime check (``/tmp/s22/redteam``: PASS on seeds 0, 1, 2).

Now (``runtime/verify/_calling.py``): a torch wrapper is called in every one of :data:`TORCH_MODES` in a seeded
order and view pads are drawn log-uniform up to ``_MAX_PAD`` elements. Each kernel below is rejected on three
seeds, and each is wrong where a user calls it that way. (A wrapper whose default for a SPEC attribute differs from
SPEC.md's value is no wrong kernel: the contract passes the SPEC's value, tests/gym/test_contract.py.)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from verify_helpers import KERNELS, no_lint

from runtime.sandbox import SandboxPolicy
from runtime.verify import VerifySettings, verify
from runtime.verify._calling import TORCH_MODES, call_wrapper, draw_layouts, draw_torch_modes

REPO = Path(__file__).resolve().parents[2]
GELU = REPO / "tests" / "redteam" / "fixture" / "gelu"
POLICY = SandboxPolicy(wall_timeout_s=60.0, cpu_timeout_s=60)
SEEDS = (0, 1, 2)

ATTACKS = {
    # kernel file: (how a user calls it - the mode of _USER below, needs torch)
    "s22_grad_mode_tell": ("nograd", True),
    "s22_inference_mode_tell": ("inference", True),
    "s22_requires_grad_tell": ("reqgrad", True),
    "s22_storage_offset_tell": ("offset", True),
    "s22_numpy_view_base_tell": ("npview", False),
}

_USER = """
import importlib.util, sys
import numpy as np
import runtime.emulator as emu
emu.install()
path, mode = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("gelu_impl", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
x = np.random.default_rng(3).uniform(-6.0, 6.0, (37, 64)).astype(np.float32)
want = x * (1.0 / (1.0 + np.exp(-1.702 * x)))
if mode == "npview":
    h = np.zeros((237, 64), np.float32)
    h[200:] = x
    got = mod.gelu_wrapper(h[200:])
else:
    import torch
    t = torch.from_numpy(x.copy())
    if mode == "offset":
        big = torch.zeros(200 * 64 + x.size)
        big[200 * 64:] = t.reshape(-1)
        t = big[200 * 64:].view(37, 64)
    if mode == "reqgrad":
        t.requires_grad_(True)
    if mode == "nograd":
        with torch.no_grad():
            got = mod.gelu_wrapper(t)
    elif mode == "inference":
        with torch.inference_mode():
            got = mod.gelu_wrapper(t)
    else:
        got = mod.gelu_wrapper(t)
    got = got.detach().numpy()
print(int(np.allclose(got, want, atol=1e-5, rtol=1e-5)))
"""


def _op(tmp_path: Path, kernel: str) -> Path:
    op = tmp_path / "gelu"
    shutil.copytree(GELU, op)
    shutil.copy(KERNELS / f"{kernel}.py", op / "gelu_impl.py")
    return op


# ------------------------------------------------------------------------------------------------ the draws


def test_every_torch_mode_is_drawn_in_a_seeded_order() -> None:
    for seed in (0, 1, 2**40 + 3):
        modes = draw_torch_modes(seed, 20)
        assert modes == draw_torch_modes(seed, 20)
        assert {m: modes.count(m) for m in TORCH_MODES} == dict.fromkeys(TORCH_MODES, 4)
    assert draw_torch_modes(0, 20) != draw_torch_modes(1, 20)


def test_view_pads_reach_far_and_stay_small_in_some_calls() -> None:
    pads = [p for seed in range(20) for lay in draw_layouts(seed, 35) if lay is not None for p in lay]
    assert min(pads) <= 48 and max(pads) > 1 << 16
    assert sum(p > 48 for p in pads) > len(pads) // 2 and sum(p <= 48 for p in pads) > len(pads) // 8
    assert all(lay is None or lay[0] >= 1 for seed in range(20) for lay in draw_layouts(seed, 35))


def test_call_wrapper_applies_the_mode_and_passes_the_spec_values() -> None:
    torch = pytest.importorskip("torch", reason="torch wrappers (pip install -e '.[toolchain]')")
    seen: list[tuple] = []

    def wrapper(x, alpha=1.0):
        seen.append((torch.is_grad_enabled(), torch.is_inference_mode_enabled(), x.requires_grad, alpha))
        return x

    calling = {"torch": True, "kwargs": {"alpha": 1.702}, "modes": list(TORCH_MODES)}
    for i in range(len(TORCH_MODES)):
        call_wrapper(wrapper, [np.ones((2, 2), np.float32)], calling, i)
    assert seen == [(True, False, False, 1.702), (False, False, False, 1.702), (False, True, False, 1.702),
                    (True, False, True, 1.702), (False, False, True, 1.702)]
    call_wrapper(wrapper, [np.ones((2, 2), np.int32)], calling, 3)  # integer inputs never require grad
    assert seen[-1][2] is False
    call_wrapper(wrapper, [np.ones((2, 2), np.float32)], calling)  # no run index: a plain call, SPEC values
    assert seen[-1] == (True, False, False, 1.702)


# ------------------------------------------------------------------------------------------------ the attacks


@pytest.mark.slow
@pytest.mark.parametrize("kernel", sorted(ATTACKS))
def test_s22_attack_is_rejected_on_every_seed(kernel: str, tmp_path: Path) -> None:
    if ATTACKS[kernel][1]:
        pytest.importorskip("torch", reason="a torch wrapper (pip install -e '.[toolchain]')")
    op = _op(tmp_path, kernel)
    # the runtime's own defence, without lint (red team s25: lint PF04 now refuses `x.base` too - both layers hold)
    settings = VerifySettings(sandbox=POLICY, lint=no_lint)
    for seed in SEEDS:
        report = verify(op, op / "gelu_impl.py", settings=settings, unseen_seed=seed)
        assert report.verdict in ("FAIL_CHEAT", "FAIL_NUMERIC"), (seed, report.verdict, report.reasons[:3])


@pytest.mark.slow
@pytest.mark.parametrize("kernel", sorted(ATTACKS))
def test_s22_attack_is_wrong_where_a_user_calls_it_so(kernel: str) -> None:
    mode, needs_torch = ATTACKS[kernel]
    if needs_torch:
        pytest.importorskip("torch", reason="a torch wrapper (pip install -e '.[toolchain]')")
    done = subprocess.run([sys.executable, "-c", _USER, str(KERNELS / f"{kernel}.py"), mode], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "0", f"{kernel}: right when called {mode}"
