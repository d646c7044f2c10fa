"""The red-team corpus: hostile candidates for a fast-GELU op, each with its expected verdict.

Every file in ``candidates/`` declares in its header:

``# expect: V``   the production verdict (real lint, real emulator, OS sandbox);
``# runtime: V``  the verdict with lint switched off, i.e. what the runtime defences alone decide (sandbox,
                  result channel, provenance snapshot, anti-gaming checks). Present where lint already stops the
                  candidate, so that both lines of defence are tested;
``# reason: s``   a substring the reasons of the runtime verdict must contain;
``# policy: p``   a sandbox policy variant (``small_result_cap``).

After every candidate: no process started by it is alive (marker ``PTO_REDTEAM_LEAK``), no temporary directory is
left behind (each test gets a private TMPDIR that must be empty afterwards), and the op dir is unchanged. To keep
the corpus fast, each verification runs one case of the fixture (``verify(..., case=...)``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from runtime.lint import lint_source
from runtime.opdir import load_op_dir
from runtime.sandbox import SandboxPolicy, isolation_level
from runtime.verdicts import Verdict
from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixture" / "gelu"
CANDIDATES = sorted((HERE / "candidates").glob("*.py"))
VERDICTS = {v.value for v in Verdict}
_POLICIES = {"": SandboxPolicy(wall_timeout_s=30.0, cpu_timeout_s=30),
             "small_result_cap": SandboxPolicy(wall_timeout_s=30.0, cpu_timeout_s=30, result_cap_bytes=8 << 20)}


def _header(text: str, key: str) -> str:
    m = re.search(rf"^# {key}: (.+)$", text, flags=re.M)
    return m.group(1).strip() if m else ""


def _no_lint(paths, **kw):  # the runtime line of defence on its own
    return []


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


def _leaked_processes() -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "PTO_REDTEAM_LEAK" in cmd and int(pid) != os.getpid():
            found.append(f"{pid}: {cmd[:120]}")
    return found


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A TMPDIR of our own: every temporary directory the verifier makes lands here and must be gone after."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-redteam-secret")  # must never reach the candidate or golden
    return tmp


def _op(tmp_path: Path, source: str) -> tuple[Path, str]:
    op = tmp_path / "gelu"
    shutil.copytree(FIXTURE, op)
    (op / "gelu_impl.py").write_text(source)
    return op, load_op_dir(op).cases()[0].name


def _verify(op: Path, case: str, *, lint: bool, policy: str = "", isolation: str = "auto"):
    pol = _POLICIES[policy].model_copy(update={"isolation": isolation})
    settings = VerifySettings(sandbox=pol, lint=None if lint else _no_lint)
    return verify(op, op / "gelu_impl.py", case=case, settings=settings)


def test_corpus_size_and_headers() -> None:
    assert len(CANDIDATES) >= 40
    wrong = [p.stem for p in CANDIDATES if _header(p.read_text(), "expect") not in VERDICTS
             or (_header(p.read_text(), "runtime") or "PASS") not in VERDICTS]
    assert not wrong, wrong
    classes = {_header(p.read_text(), "class").split(" ")[0] for p in CANDIDATES}
    assert {"1", "2", "3", "4", "5", "6", "7"} <= classes  # every class of the issue is represented


@pytest.mark.slow  # the whole red-team corpus
@pytest.mark.parametrize("path", CANDIDATES, ids=lambda p: p.stem)
def test_candidate_gets_its_verdict_and_leaves_nothing(path: Path, tmp_path: Path, private_tmp: Path) -> None:
    text = path.read_text()
    expect, runtime, reason = _header(text, "expect"), _header(text, "runtime"), _header(text, "reason")
    op, case = _op(tmp_path, text)
    before = _tree_digest(op)
    if expect == "FAIL_LINT":  # production: lint stops it before anything runs (static, no execution)
        blocking = [f for f in lint_source(text, "gelu_impl.py", stage="final", op_dir=op)
                    if f.status == "FAIL" and f.severity in ("S0", "S1")]
        assert blocking, "lint was expected to block this candidate"
    runtime_expect = runtime or expect
    report = _verify(op, case, lint=bool(not runtime), policy=_header(text, "policy"))
    assert report.verdict == runtime_expect, (report.verdict, report.reasons[:4], report.sandbox.stderr_tail[-600:])
    if runtime_expect != "PASS":
        assert report.reasons, "a rejection must say why"
    if reason:
        assert any(reason in r for r in report.reasons), report.reasons[:6]
    deadline = time.monotonic() + 3.0
    while _leaked_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _leaked_processes()
    assert list(private_tmp.iterdir()) == [], "temporary directories left behind"
    assert _tree_digest(op) == before, "the candidate changed the operator directory"
    site = Path(np.__file__).resolve().parent.parent
    assert not (site / "pto_redteam_pwned.pth").exists()


@pytest.mark.slow  # the whole red-team corpus
@pytest.mark.parametrize("name", ["honest", "alias_write_after_kernel", "env_tell_pto_forge_sandbox"])
def test_verdict_and_report_identity_do_not_depend_on_the_isolation_level(name: str, tmp_path: Path,
                                                                           private_tmp: Path) -> None:
    text = (HERE / "candidates" / f"{name}.py").read_text()
    op, case = _op(tmp_path, text)
    lint = not _header(text, "runtime")
    weak = _verify(op, case, lint=lint, isolation="process-only")
    strong = _verify(op, case, lint=lint)
    assert weak.sandbox.isolation == "process-only" and weak.sandbox.isolation_note
    assert weak.verdict == strong.verdict and weak.reasons == strong.reasons
    assert weak.report_hash == strong.report_hash


def test_golden_is_out_of_sight_even_without_the_audit_hook(tmp_path: Path, private_tmp: Path) -> None:
    """The OS layer alone: a candidate that could switch the hook off still cannot see the op dir or /tmp."""
    level, why = isolation_level()
    if not level.startswith("bwrap"):
        pytest.skip(f"bubblewrap is not usable here: {why}")
    from runtime.sandbox import run_candidate

    probe = tmp_path / "probe_impl.py"
    probe.write_text(
        "import os\nimport sys\nimport numpy as np\n\n"
        "def probe_wrapper(x):\n"
        "    sys.addaudithook  # the hook cannot be removed, so look with what the OS shows\n"
        f"    facts = [os.path.exists({str(FIXTURE / 'golden.py')!r}), os.path.exists({str(probe)!r}),\n"
        "             os.getppid() == 0 or os.getpid() < 10]\n"
        "    return np.array(facts, dtype=np.float32)\n")
    run = run_candidate(probe, "probe_wrapper", [("c", [np.zeros(2, np.float32)])],
                        emulator="runtime.emulator", repeat_first=False)
    assert run.status == "ok", (run.reason, run.stderr_tail)
    golden_visible, tmp_visible, own_pid_namespace = run.runs[0].outputs[0].tolist()
    assert (golden_visible, tmp_visible, own_pid_namespace) == (0.0, 0.0, 1.0)
    assert list(private_tmp.iterdir()) == []
