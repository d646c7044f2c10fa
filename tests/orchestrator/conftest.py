"""Fixtures for the orchestrator tests: op-dir copies, generated agent scripts, a fixed clock, the verifier."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from orch_support import FIX, fixed_clock, make_verifier, write_script  # noqa: E402


@pytest.fixture
def local_endpoint_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No endpoint, key or model from the environment, and no proxy between a test and its fake server on
    127.0.0.1 (a proxy variable on the machine would route the test's requests away from it)."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "FORGE_MODEL", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                 "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


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


@pytest.fixture
def cli(monkeypatch, capsys):
    """The CLI in-process (``main(argv)``; child processes cost seconds each on this machine), 200 columns wide."""
    from orch_support import make_verifier

    import orchestrator.api as api
    from orchestrator.cli import _common
    from orchestrator.cli.main import main

    monkeypatch.setenv("COLUMNS", "200")
    # the module-level consoles keep the environment mapping they were built with: built while os.environ was
    # swapped (reproduced by importing the CLI under mock.patch.object(os, "environ", ...)), they ignore COLUMNS
    # and render 80 wide; the screens then wrap and ellipsize what these tests read (3 failures, order-dependent,
    # seen once the torch tests changed how tests were spread over the xdist workers)
    for con in (_common.console, _common.err_console):
        monkeypatch.setattr(con, "_width", 200)

    def call(*args: str, verifier: str = "double") -> subprocess.CompletedProcess:
        monkeypatch.setattr(api, "_default_verifier", lambda: make_verifier(verifier))
        capsys.readouterr()
        code = main(list(args))
        out = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out.out, out.err)

    return call

