"""Shared fixtures of the bisect tests: the stand-in emulator path and a golden-run cache."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
STANDIN = str(HERE / "standin_emulator.py")


@pytest.fixture(scope="session")
def standin() -> str:
    """Emulator spec for runtime.bisect: the trace-then-replay stand-in that records data-flow links."""
    return STANDIN


@pytest.fixture(scope="session")
def golden_cache() -> dict:
    """Golden runs shared by the tests (every variant of one base op has the same golden.py and SPEC.md)."""
    return {}
