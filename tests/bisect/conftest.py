"""Shared fixtures of the bisect tests: a golden-run cache (every test runs the real runtime.emulator) and the
folder the real gym operators are imported into."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def golden_cache() -> dict:
    """Golden runs shared by the tests (every variant of one base op has the same golden.py and SPEC.md)."""
    return {}


@pytest.fixture(scope="module")
def op_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder per test module for the gym operators it imports (`gym_corpus.import_op`); skips, saying why, without
    the gym corpus or torch."""
    from gym_corpus import shared_gym

    if shared_gym() is None:
        pytest.skip("no gym corpus: set FORGE_SHARED to the folder holding gym/ (or keep ../shared next to the repo)")
    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (the gym's goldens are torch): pip install -e '.[toolchain]'")
    return tmp_path_factory.mktemp("gym-ops")


@pytest.fixture(scope="session")
def tail_case():
    """``tail_case(op_dir)``: the name of the first case with a tail, in bisect's own case order (else the first).

    Why: a test that a right kernel is named nothing bisected with no ``case``, so bisect tried up to six cases (none
    departs) - 10-25 s of CI each. One case with a tail (the hardest geometry) keeps what the test checks: no claim
    where nothing departs; the slow tier's corpora run every case."""
    from runtime.bisect.api import order_cases
    from runtime.opdir import load_op_dir

    def pick(op_dir: Path) -> str:
        cases = order_cases(load_op_dir(op_dir).cases())
        return next((c for c in cases if c.tail), cases[0]).name

    return pick
