"""Acceptance corpus of the emulator: real PyPTO kernels checked against numpy references.

Each ``case_*`` function of ``tests/emulator/corpus/*.py`` is one test. The kernels are written from
``shared/spec/pypto-api.md`` (API semantics, execution model, the §9 reference kernels), never from the
emulator's code. A case passes when, in a fresh session, every call runs without an error diagnostic,
every expected argument matches its reference within the dtype tolerance (NaN poison never matches),
every other argument is left bit-identical, and the warnings are the ones the case expects.
"""

import ast
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _emucorpus import Call, KernelCase

CORPUS_DIR = Path(__file__).parent / "corpus"


def _discover() -> list[tuple[str, str]]:
    """(module stem, case function) pairs, found by reading the corpus sources (no import needed)."""
    found: list[tuple[str, str]] = []
    for path in sorted(CORPUS_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("case_"):
                found.append((path.stem, node.name))
    return found


CASES = _discover()


def test_corpus_has_at_least_40_kernel_cases() -> None:
    assert len(CASES) >= 40, f"only {len(CASES)} corpus cases"


def _as_float(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind in "fc" or a.dtype.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        return a.astype(np.float64)
    return a


def _compare(name: str, actual: np.ndarray, expected: np.ndarray, call: Call, pos: int) -> None:
    assert actual.shape == expected.shape, f"{name}: shape {actual.shape} != expected {expected.shape}"
    tol = call.tol_for(pos)
    a, e = _as_float(actual), _as_float(expected)
    if a.dtype.kind in "iub" and e.dtype.kind in "iub":
        bad = a != e
    else:
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        both_inf = np.isinf(a) & np.isinf(e) & (np.sign(a) == np.sign(e))
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.abs(a - e) <= tol.atol + tol.rtol * np.abs(e)
        bad = ~((close & ~nan_a & ~nan_e) | both_inf | (nan_a & nan_e))
    if bad.any():
        idx = np.argwhere(bad)
        first = tuple(int(i) for i in idx[0])
        raise AssertionError(
            f"{name}: {int(bad.sum())} of {bad.size} elements out of tolerance "
            f"(atol={tol.atol}, rtol={tol.rtol}); first at {first}: got {a[first]!r}, expected {e[first]!r}"
        )


def _snapshot(args: tuple) -> dict[int, np.ndarray]:
    return {i: a.copy() for i, a in enumerate(args) if isinstance(a, np.ndarray)}


def _run_case(case: KernelCase, session: Any, emu: Any) -> None:
    if case.npuarch is not None:
        session.options = dataclasses.replace(session.options, npuarch=case.npuarch)
    for n, call in enumerate(case.calls):
        before = _snapshot(call.args)
        try:
            call.kernel(*call.args, **call.kwargs)
        except emu.EmulatorError as exc:
            raise AssertionError(
                f"call {n}: emulator raised {exc.code} at {exc.file}:{exc.line}: {exc.message}"
            ) from exc
        errors = [d for d in session.diagnostics if d.severity == "error"]
        assert not errors, f"call {n}: error diagnostics: {errors}"
        for pos, old in before.items():
            new = call.args[pos]
            label = f"call {n} arg {pos}"
            if pos in call.expect:
                _compare(label, new, call.expect[pos], call, pos)
            else:
                assert new.tobytes() == old.tobytes(), f"{label}: argument changed although nothing may write it"
    warnings = [d for d in session.diagnostics if d.severity == "warning"]
    for file, line in case.warn_lines:
        hits = [w for w in warnings if w.line == line and w.file and Path(w.file).name == Path(file).name]
        assert hits, f"expected a warning at {Path(file).name}:{line}; warnings were {warnings}"
    if case.clean:
        assert not warnings, f"unexpected warnings for a clean kernel: {warnings}"
    if case.check is not None:
        case.check(session)


@pytest.mark.parametrize(("module", "case_name"), CASES, ids=[f"{m}::{c}" for m, c in CASES])
def test_corpus_case(module: str, case_name: str, corpus_module: Any, emu: Any, emu_session: Any) -> None:
    mod = corpus_module(module)
    case = getattr(mod, case_name)()
    try:
        _run_case(case, emu_session, emu)
    except AssertionError as exc:
        raise AssertionError(f"[spec: {case.spec}] {exc}") from exc


DETERMINISM_MODULES = ("attention", "matmul", "norms", "softmax", "models")
DETERMINISM_CASES = [(m, c) for m, c in CASES if m in DETERMINISM_MODULES]


@pytest.mark.parametrize(("module", "case_name"), DETERMINISM_CASES,
                         ids=[f"{m}::{c}" for m, c in DETERMINISM_CASES])
def test_corpus_case_is_deterministic(module: str, case_name: str, corpus_module: Any, emu: Any) -> None:
    """Same kernel, same inputs, two fresh sessions: bit-identical outputs (verify reports rely on it)."""
    results = []
    for _ in range(2):
        case = getattr(corpus_module(module), case_name)()
        with emu.session():
            for call in case.calls:
                call.kernel(*call.args, **call.kwargs)
        results.append([a.tobytes() for c in case.calls for a in c.args if isinstance(a, np.ndarray)])
    assert results[0] == results[1], "two runs of the same case wrote different bytes"
