"""Processes the emulator owns run numpy without huge-page advice (`runtime.emulator.device._pages`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.emulator.device import _pages

np_core = pytest.importorskip("numpy._core.multiarray")
ROOT = Path(__file__).resolve().parents[2]
_PROBE = "from numpy._core.multiarray import _set_madvise_hugepage as s; print('advice', s(False))"


@pytest.fixture
def advice_restored():
    """Leave numpy's process-wide setting as the test found it."""
    before = np_core._set_madvise_hugepage(True)
    np_core._set_madvise_hugepage(before)
    yield
    np_core._set_madvise_hugepage(before)


def test_turns_the_advice_off(monkeypatch, advice_restored):
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    np_core._set_madvise_hugepage(True)
    assert _pages.no_hugepage_advice() is True
    assert np_core._set_madvise_hugepage(False) is False  # the previous value: off


def test_a_user_choice_is_kept(monkeypatch, advice_restored):
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    np_core._set_madvise_hugepage(True)
    assert _pages.no_hugepage_advice() is False
    assert np_core._set_madvise_hugepage(True) is True  # untouched


def _run(env_extra: dict[str, str], *args: str, stdin: str | None = None) -> str:
    """The last line a fresh ``python *args`` prints (without a user's NUMPY_MADVISE_HUGEPAGE unless given)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    env.update(env_extra, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, env=env, timeout=120,
                       check=False, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


def test_the_launcher_runs_without_the_advice():
    """``python -m runtime.emulator`` (the gym's way in) owns its process; plain python keeps numpy's default."""
    assert _run({}, "-m", "runtime.emulator", "-c", _PROBE) == "advice False"
    assert _run({}, "-c", _PROBE) == "advice True"
    assert _run({"NUMPY_MADVISE_HUGEPAGE": "1"}, "-m", "runtime.emulator", "-c", _PROBE) == "advice True"


def test_importing_the_emulator_changes_nothing():
    """A user's own process that installs the emulator keeps numpy's setting."""
    assert _run({}, "-c", "import runtime.emulator as e; e.install(); " + _PROBE) == "advice True"


def test_the_verifier_device_runs_without_the_advice():
    """The device process executes every kernel of a verification: its ``main`` turns the advice off before it
    serves (checked up to the point where it would build the device)."""
    code = ("import sys\n"
            "from runtime.sandbox import _device\n"
            "class Stop(Exception): pass\n"
            "def stop(*a, **k): raise Stop()\n"
            "_device.Device = stop\n"
            "try:\n    _device.main(['device', '5', '5', '5'])\nexcept Stop:\n    pass\n" + _PROBE)
    assert _run({}, "-c", code, stdin=json.dumps({"repo_root": str(ROOT)})) == "advice False"
