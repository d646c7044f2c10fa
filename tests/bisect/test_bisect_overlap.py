"""Bisect's deep golden and the candidate's sandbox run at the same time (``api._golden_and_capture``, issue 30's
cost bar): the same report as one after the other, a wrong checkpoint guess made good by a second sandbox run."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bisect_corpus import CHECKPOINT_VARIANTS, CORPUS, VARIANTS, materialize

import runtime.bisect.api as api
from runtime.bisect import bisect
from runtime.opdir import load_op_dir, run_golden_cases


def _report(op_dir: Path, stage: Path, *, overlap: bool, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setattr(api, "OVERLAP", overlap)
    return bisect(op_dir, stage, golden_cache={}).model_dump(mode="json")  # (duration_s is excluded)


def _spy_runs(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Record, per sandbox run, whether the golden thread was running next to it."""
    seen: list[bool] = []
    real = api._sandbox_run

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(any(t.name == "bisect-golden" and t.is_alive() for t in threading.enumerate()))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "_sandbox_run", spy)
    return seen


@pytest.mark.slow
def test_overlapped_runs_give_the_sequential_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a checkpointed kernel (its parameters `ms`, `inv` are poisoned before the call) and a plain one
    for v in (CHECKPOINT_VARIANTS[0], VARIANTS[0]):
        op_dir, stage, line = materialize(v, tmp_path / "seq")
        seq = _report(op_dir, stage, overlap=False, monkeypatch=monkeypatch)
        op_dir, stage, line = materialize(v, tmp_path / "par")
        seen = _spy_runs(monkeypatch)
        par = _report(op_dir, stage, overlap=True, monkeypatch=monkeypatch)
        monkeypatch.undo()
        assert seen and seen[0], f"{v.id}: the sandbox run did not overlap the golden run"
        assert len(seen) == 1, f"{v.id}: the checkpoint guess was wrong ({len(seen)} sandbox runs)"
        assert par == seq, v.id
        assert par["status"] == "DIVERGENCE_FOUND" and par["first_divergence"]["line"] == line


@pytest.mark.slow
def test_a_wrong_checkpoint_guess_runs_the_candidate_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    v = CHECKPOINT_VARIANTS[0]
    op_dir, stage, _line = materialize(v, tmp_path / "seq")
    seq = _report(op_dir, stage, overlap=False, monkeypatch=monkeypatch)
    op_dir, stage, _line = materialize(v, tmp_path / "par")
    seen = _spy_runs(monkeypatch)
    monkeypatch.setattr(api, "_golden_names", lambda op: set())  # guesses no checkpoint: `ms` and `inv` are
    par = _report(op_dir, stage, overlap=True, monkeypatch=monkeypatch)
    assert seen == [True, False]  # the overlapped run, then the one with the golden's checkpoints
    assert par == seq
    assert par["method"] == "auto+checkpoint" and par["first_checkpoint"] == v.first_checkpoint


def test_golden_names_are_what_golden_py_binds() -> None:
    op = load_op_dir(CORPUS / "rms_norm_ckpt")
    names = api._golden_names(op)
    assert {"ms", "inv"} <= names  # the golden's locals the kernel's checkpoints are named after
    src = (CORPUS / "rms_norm_ckpt" / "rms_norm_ckpt_impl.py").read_text()
    assert "mst" in src and "mst" not in names  # the stage file's own names are not the golden's


def test_given_inputs_are_used_as_they_are() -> None:
    op = load_op_dir(CORPUS / "rms_norm_ckpt")
    case = op.cases()[0]
    made = op.make_inputs(case)
    plain = run_golden_cases(op, [case])[case.name]
    given = run_golden_cases(op, [case], given={case.name: made})[case.name]
    assert all(a is b for a, b in zip(given.inputs, made, strict=True))
    for name, out in plain.outputs.items():
        assert np.array_equal(out, given.outputs[name])
