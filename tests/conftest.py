"""Suite-wide fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

_TOOLCHAIN_TESTS = Path(__file__).with_name("toolchain")


@pytest.fixture(autouse=True)
def _no_implicit_local_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run with no model configured never falls back to the embedded local model in tests (installing the
    '.[local]' extra would otherwise turn every "no model configured" case into a live llama.cpp run); tests of
    the fallback itself delete the variable, and ``--model local`` is unaffected."""
    monkeypatch.setenv("PTO_FORGE_LOCAL_MODEL", "off")


@pytest.fixture(autouse=True)
def _no_implicit_real_toolchain(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside tests/toolchain the real pypto toolchain is never picked up implicitly (installing the
    '.[toolchain]' extra or setting PTO_FORGE_PYPTO_PYTHON would otherwise compile every delivered kernel of
    every scripted run with it). Recorded toolchain answers in traces are still replayed."""
    if _TOOLCHAIN_TESTS not in Path(str(request.node.path)).parents:
        monkeypatch.setenv("PTO_FORGE_TOOLCHAIN", "off")


@pytest.fixture(autouse=True)
def _deterministic_unseen_seed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``runtime.verify`` without ``unseen_seed`` draws a fresh random seed per run (production); tests stay
    deterministic: the seed a test gets is a function of its node id. A test that wants a fresh draw calls
    ``runtime.opdir._unseen._fresh_seed``."""
    import zlib

    from runtime.opdir import _unseen

    seed = zlib.crc32(request.node.nodeid.encode())
    monkeypatch.setattr(_unseen, "draw_seed", lambda: seed)
