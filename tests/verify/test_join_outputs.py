"""An output that is the union of several kernel-written views of one allocation (held-out false rejection A14).

An honest wrapper may let one kernel call write ``y[:h]`` and ``y[h:]`` through two arguments and return ``y``;
the device used to see two buffers, neither of them all of ``y``, and called the output host data. Now the
child names ``y`` as a *join* of the device buffers and the device checks that they cover it exactly. The
cheats next to it must stay rejected: half of the output computed on the host, and an output the host changed
after the kernel wrote it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime.sandbox import SandboxPolicy
from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "redteam" / "fixture" / "gelu"
HONEST = (HERE / "kernels" / "gelu_split_halves.py").read_text()
_POLICY = SandboxPolicy(wall_timeout_s=60.0, cpu_timeout_s=60)


def _no_lint(paths, **kw):  # the runtime line of defence on its own (lint PF10/OL62 stop the cheats earlier)
    return []


def _verify(tmp_path: Path, source: str, *, lint: bool = True, seed: int = 0):
    op = tmp_path / "gelu"
    shutil.copytree(FIXTURE, op)
    (op / "gelu_impl.py").write_text(source)
    settings = VerifySettings(sandbox=_POLICY, lint=None if lint else _no_lint)
    return verify(op, op / "gelu_impl.py", settings=settings, unseen_seed=seed)


@pytest.mark.slow
def test_two_kernel_written_halves_of_one_output_pass(tmp_path: Path) -> None:
    for seed in (0, 5):  # unseen sizes include 1 row: one half is then empty
        report = _verify(tmp_path / str(seed), HONEST, seed=seed)
        assert report.verdict == "PASS", (seed, report.reasons[:3])


@pytest.mark.slow
def test_half_an_output_computed_on_the_host_is_still_a_cheat(tmp_path: Path) -> None:
    host_half = HONEST.replace("    gelu_kernel(x, y[:h], y[h:])\n",
                               "    bottom = np.zeros_like(x[h:])\n    gelu_kernel(x, y[:h], bottom)\n"
                               "    y[h:] = x[h:] / (1.0 + np.exp(-1.702 * x[h:]))\n")
    assert host_half != HONEST
    report = _verify(tmp_path, host_half, lint=False)
    assert report.verdict == "FAIL_CHEAT", report.reasons[:3]
    assert any("not written by the jit kernel" in r for r in report.reasons), report.reasons[:3]


@pytest.mark.slow
def test_a_joined_output_changed_on_the_host_afterwards_is_still_a_cheat(tmp_path: Path) -> None:
    changed = HONEST.replace("    return y\n", "    y[0] = x[0] / (1.0 + np.exp(-1.702 * x[0]))\n    return y\n")
    assert changed != HONEST
    report = _verify(tmp_path, changed, lint=False)
    assert report.verdict == "FAIL_CHEAT", report.reasons[:3]
    assert any("on the host after the kernel call" in r for r in report.reasons), report.reasons[:3]
