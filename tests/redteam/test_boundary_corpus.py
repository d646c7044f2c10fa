"""The issue-24 red-team corpus: candidates that attack the host/device boundary, shared memory, the IR validator,
the unseen cases, the report writer and the lint process - each with its expected verdict and a check that it
*is* wrong.

Headers of every file in ``candidates24/``:

``# expect: V``   the production verdict (real lint, device process, OS sandbox);
``# runtime: V``  the verdict with lint switched off (the runtime defences alone), where lint already stops it;
``# reason: s``   a substring the reasons of the runtime verdict must contain;
``# attack: a``   what it attacks (``issue24.N`` = class N of the issue, or device/shm/validator/unseen/report/lint);
``# probe: e``    the kernel call the wrongness check makes (default ``gelu_kernel(x, y)``).

Why "is it wrong" is its own test: a corpus of candidates that are secretly right would prove nothing. The probe
calls the candidate's own kernel (not its wrapper, which is where the cheating lives) on row counts the SPEC does
not list, in the sandbox with the in-process emulator, and compares with the golden.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from test_redteam import _header, _leaked_processes, _op, _tree_digest, private_tmp  # noqa: F401 - fixture

from runtime.lint import lint_source
from runtime.sandbox import SandboxPolicy, run_candidate
from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent
CANDIDATES = sorted((HERE / "candidates24").glob("*.py"))
VERDICTS = {"PASS", "FAIL_LINT", "FAIL_RUNTIME", "FAIL_NUMERIC", "FAIL_CHEAT", "ERROR"}
ATTACKS = {"issue24.1", "issue24.3", "issue24.4", "issue24.5", "device", "shm", "validator", "unseen", "report",
           "lint"}
_POLICY = SandboxPolicy(wall_timeout_s=60.0, cpu_timeout_s=60)
UNLISTED_ROWS = (3, 37, 70)
"""Row counts the fixture's SPEC (21 rows) does not list."""


def _no_lint(paths, **kw):
    return []


def _gelu(x: np.ndarray) -> np.ndarray:
    xf = x.astype(np.float32)
    return (xf * (1.0 / (1.0 + np.exp(-1.702 * xf)))).astype(np.float32)


def test_corpus_size_headers_and_coverage() -> None:
    assert len(CANDIDATES) >= 30
    bad = [p.stem for p in CANDIDATES if _header(p.read_text(), "expect") not in VERDICTS
           or not set((_header(p.read_text(), "runtime") or "PASS").split("|")) <= VERDICTS]
    assert not bad, bad
    attacks = {_header(p.read_text(), "attack").split(" ")[0].rstrip(":").split("/")[0] for p in CANDIDATES}
    assert ATTACKS <= attacks, ATTACKS - attacks
    assert all(_header(p.read_text(), "expect") != "PASS" for p in CANDIDATES)


@pytest.mark.slow
@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_candidate_gets_its_verdict(path: Path, tmp_path: Path, private_tmp: Path) -> None:  # noqa: F811
    text = path.read_text()
    expect, runtime, reason = _header(text, "expect"), _header(text, "runtime"), _header(text, "reason")
    op, case = _op(tmp_path, text)
    before = _tree_digest(op)
    if expect == "FAIL_LINT":
        blocking = [f for f in lint_source(text, "gelu_impl.py", stage="final", op_dir=op)
                    if f.status == "FAIL" and f.severity in ("S0", "S1")]
        assert blocking, "lint was expected to block this candidate"
    else:  # production: lint lets it through (the runtime decides)
        assert not [f for f in lint_source(text, "gelu_impl.py", stage="final", op_dir=op) if f.is_blocking]
    runtime_expect = runtime or expect
    settings = VerifySettings(sandbox=_POLICY, lint=None if not runtime else _no_lint)
    report = verify(op, op / "gelu_impl.py", case=case, settings=settings)
    # "A|B": either, when which check fires first depends on the verification's random call order (the reason,
    # when given, is A's)
    allowed = runtime_expect.split("|")
    assert report.verdict in allowed, (report.verdict, report.reasons[:4], report.sandbox.stderr_tail[-600:])
    assert report.reasons, "a rejection must say why"
    if reason and report.verdict == allowed[0]:
        assert any(reason in r for r in report.reasons), report.reasons[:6]
    assert report.durations["total_s"] < _POLICY.wall_timeout_s + 60  # never hangs past its limits
    assert not _leaked_processes()
    assert list(private_tmp.iterdir()) == [], "temporary directories left behind"
    assert _tree_digest(op) == before, "the candidate changed the operator directory"


def _probe_source(text: str) -> str:
    call = _header(text, "probe") or "gelu_kernel(x, y)"
    return text + f"\n\ndef redteam_probe_wrapper(x):\n    y = np.zeros_like(x)\n    {call}\n    return y\n"


@pytest.mark.slow
@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_candidate_is_wrong_on_shapes_the_spec_does_not_list(path: Path, tmp_path: Path) -> None:
    text = path.read_text()
    probe = tmp_path / "probe_impl.py"
    probe.write_text(_probe_source(text))
    rng = np.random.default_rng(24)
    cases = [(f"B{b}", [rng.uniform(-6.0, 6.0, (b, 64)).astype(np.float32)]) for b in UNLISTED_ROWS]
    run = run_candidate(probe, "redteam_probe_wrapper", cases, policy=_POLICY, repeat_first=False)
    results = {r.case: r for r in run.runs}
    wrong = []
    for name, (x,) in cases:
        r = results.get(name)
        if r is None or r.record.get("error") or not r.outputs or r.outputs[0] is None:
            wrong.append(f"{name}: the kernel fails")  # a kernel that cannot run is wrong too
            continue
        if r.outputs[0].shape != x.shape or not np.allclose(r.outputs[0], _gelu(x), atol=1e-5, rtol=1e-5):
            wrong.append(f"{name}: wrong values")
    assert wrong, f"{path.stem}: its kernel computes GELU on {UNLISTED_ROWS} rows - the corpus needs wrong kernels"


def test_probe_source_calls_the_kernel_not_the_wrapper() -> None:
    src = _probe_source((HERE / "candidates24" / "host_result_as_extra_arg.py").read_text())
    assert re.search(r"def redteam_probe_wrapper\(x\):\n    y = np.zeros_like\(x\)\n    gelu_kernel\(x, y\)", src)
