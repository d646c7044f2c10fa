"""The parent reads the candidate's result channel as the runner's grammar and nothing else (issue #24 item 2):
malformed, foreign, out-of-order or unplanned frames are a protocol violation (FAIL_CHEAT), never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from runtime.arrays import dumps_arrays
from runtime.sandbox import SandboxPolicy
from runtime.sandbox._exec import _collect
from runtime.sandbox._proc import ProcResult
from runtime.sandbox._wire import frame

PLAN = ["c0", "c1", "c0"]


def _res(channel: bytes) -> ProcResult:
    return ProcResult(returncode=0, timed_out=False, duration_s=0.1, isolation="process-only", channel=channel)


def _case(name: str, run: int, **extra) -> bytes:
    return frame(b"CASE", json.dumps({"case": name, "run": run, "error": None, "n_outputs": 1, **extra}).encode())


def _arrs() -> bytes:
    return frame(b"ARRS", dumps_arrays({"out_0": np.zeros(2, np.float32), "arg_0": np.ones(2, np.float32)}))


LAYR = frame(b"LAYR", b'{"socket_guard": true, "audit_hook": true, "rlimits": true}')
DONE = frame(b"DONE", b"")
GOOD = LAYR + b"".join(_case(n, i) + _arrs() for i, n in enumerate(PLAN)) + DONE


def _collect_it(channel: bytes, device: bool = False):
    return _collect(_res(channel), SandboxPolicy(), "process-only", "", Path("/nonexistent"), plan=PLAN,
                    device=device)


def test_the_runners_own_grammar_is_accepted() -> None:
    run = _collect_it(GOOD)
    assert run.status == "ok" and not run.protocol_violation
    assert [r.case for r in run.runs] == PLAN and run.runs[0].outputs[0].shape == (2,)


@pytest.mark.parametrize(("name", "channel"), [
    ("garbage after DONE", GOOD + b"\x00junk"),
    ("torn frame", GOOD[:-5]),
    ("unknown kind", LAYR + frame(b"EVIL", b"x") + DONE),
    ("case record not JSON", LAYR + frame(b"CASE", b"\xff{not json") + _arrs() + DONE),
    ("case record not an object", LAYR + frame(b"CASE", b"[1, 2]") + _arrs() + DONE),
    ("case the plan does not have", LAYR + _case("c9", 0) + _arrs() + DONE),
    ("calls out of the plan's order", LAYR + _case("c1", 0) + _arrs() + DONE),
    ("run index forged", LAYR + _case("c0", 5) + _arrs() + DONE),
    ("more calls than planned", GOOD[:-len(DONE)] + _case("c0", 3) + _arrs() + DONE),
    ("arrays that do not parse", LAYR + _case("c0", 0) + frame(b"ARRS", b"\x93NUMPY garbage") + DONE),
    ("arrays without a record", LAYR + _arrs() + DONE),
    ("frames after DONE", LAYR + DONE + _case("c0", 0) + _arrs()),
    ("layer report twice", LAYR + LAYR + DONE),
    ("import record not JSON", LAYR + frame(b"IMPE", b"nope") + DONE),
])
def test_anything_else_is_a_violation_never_a_crash(name: str, channel: bytes) -> None:
    run = _collect_it(channel)
    assert run.protocol_violation, name


def test_device_mode_expects_no_arrays_from_the_candidate() -> None:
    channel = LAYR + b"".join(_case(n, i) for i, n in enumerate(PLAN)) + DONE
    run = _collect_it(channel, device=True)
    assert not run.protocol_violation and [r.case for r in run.runs] == PLAN and run.runs[0].outputs == []
    assert _collect_it(LAYR + _case("c0", 0) + _arrs() + DONE, device=True).protocol_violation  # arrays: forged


def test_verify_turns_an_internal_error_into_an_error_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from runtime.verify import _engine, verify

    op = tmp_path / "gelu"
    shutil.copytree(Path(__file__).parents[1] / "redteam" / "fixture" / "gelu", op)
    (op / "gelu_impl.py").write_text((Path(__file__).parents[1] / "redteam" / "candidates" / "honest.py").read_text())

    def boom(r):
        raise KeyError("an internal bug")

    monkeypatch.setattr(_engine, "_step_compare", boom)
    report = verify(op, op / "gelu_impl.py", settings=_engine.VerifySettings(lint=lambda *a, **k: []))
    assert report.verdict == "ERROR" and report.reasons[-1].startswith("verifier could not run: internal error")
    assert report.report_hash
