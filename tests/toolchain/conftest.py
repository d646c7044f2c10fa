"""Fixtures for the real-toolchain tests: they run only where an interpreter with pypto 0.2.0 is configured."""

from __future__ import annotations

import pytest

from runtime.toolchain import find_pypto_python

SKIP_REASON = ("the real pypto toolchain is not installed here (pip install -e '.[toolchain]' into this venv, "
               "or set PTO_FORGE_PYPTO_PYTHON to a python with pypto==0.2.0, torch and sympy)")


@pytest.fixture(scope="session")
def pypto_python() -> str:
    exe = find_pypto_python()
    if exe is None:
        pytest.skip(SKIP_REASON)
    return exe
