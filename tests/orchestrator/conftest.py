"""Fixtures for the orchestrator tests: op-dir copies, generated agent scripts, a fixed clock, the verifier."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from orch_support import FIX, fixed_clock, make_verifier, write_script  # noqa: E402


@pytest.fixture
def clock():
    return fixed_clock


@pytest.fixture
def op_copy(tmp_path):
    def make(name: str) -> Path:
        dst = tmp_path / name
        shutil.copytree(FIX / "ops" / name, dst)
        return dst

    return make


@pytest.fixture
def script(tmp_path):
    def make(op: str, name: str = "script.yaml", **kw) -> Path:
        return write_script(tmp_path / name, op, **kw)

    return make


@pytest.fixture
def verifier():
    """The double (orchestration-only tests)."""
    return make_verifier("double")


@pytest.fixture
def real_verifier():
    """runtime.verify.verify, with its calls recorded."""
    return make_verifier("real")
