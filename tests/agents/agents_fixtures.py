"""Shared autouse fixture (imported by each test module; no conftest.py, whose module name collides across
test directories): no network, no real model, no ambient configuration."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FORGE_MODEL", "FORGE_MODEL_DESIGNER", "FORGE_MODEL_IMPLEMENTER",
                 "FORGE_MODEL_VERIFIER", "FORGE_MODEL_DEBUGGER", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                 "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.chdir(tmp_path)
