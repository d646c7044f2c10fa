"""Shared fixtures of the bisect tests: a golden-run cache (every test runs the real runtime.emulator)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def golden_cache() -> dict:
    """Golden runs shared by the tests (every variant of one base op has the same golden.py and SPEC.md)."""
    return {}
