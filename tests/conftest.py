"""Suite-wide fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

_TOOLCHAIN_TESTS = Path(__file__).with_name("toolchain")


@pytest.fixture(autouse=True)
def _no_implicit_real_toolchain(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside tests/toolchain the real pypto toolchain is never picked up implicitly (installing the
    '.[toolchain]' extra or setting PTO_FORGE_PYPTO_PYTHON would otherwise compile every delivered kernel of
    every scripted run with it). Recorded toolchain answers in traces are still replayed."""
    if _TOOLCHAIN_TESTS not in Path(str(request.node.path)).parents:
        monkeypatch.setenv("PTO_FORGE_TOOLCHAIN", "off")
