"""What bisect says when nothing diverges (a user's run of the tool on a right kernel and on a host-only stage).

A right kernel's report said ``first departing value: line 34 exp`` and carried the analysis' claim "the bug is on
that line" under ``NO_DIVERGENCE``; a stage that computes its output with numpy and runs no kernel got a plain
``NO_DIVERGENCE`` with nothing saying so.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from runtime.bisect import bisect
from runtime.bisect.__main__ import _text

ROOT = Path(__file__).resolve().parents[2]
RIGHT = ROOT / "workspace" / "silu" / "authoring" / "attempts" / "m1_a2.py"
"""the attempt the silu example delivers (a right kernel)"""


def _op(tmp_path: Path, kernel: str) -> Path:
    op = tmp_path / "silu"
    shutil.copytree(ROOT / "workspace" / "silu", op, ignore=shutil.ignore_patterns("traces", "authoring"))
    (op / "silu_impl.py").write_text(kernel)
    return op


def test_a_right_kernel_gets_no_claim_about_a_bug(tmp_path: Path, tail_case) -> None:
    op = _op(tmp_path, RIGHT.read_text())
    rep = bisect(op, "silu_impl.py", case=tail_case(op))
    assert rep.status == "NO_DIVERGENCE", rep.summary
    assert rep.first_divergence is None and rep.observed_at is None and not rep.candidates
    assert not [e for e in rep.evidence if "bug" in e or "departs at line" in e and not e.startswith("note:")]
    text = _text(rep)
    assert "first departing value" not in text and "window lines" not in text


def test_a_stage_that_runs_no_kernel_says_so(tmp_path: Path, tail_case) -> None:
    host = ("import numpy as np\n\n\ndef silu_wrapper(x):\n    xf = x.astype(np.float32)\n"
            "    return (xf / (1 + np.exp(-xf))).astype(x.dtype)\n")
    op = _op(tmp_path, host)
    rep = bisect(op, "silu_impl.py", case=tail_case(op))
    assert rep.status == "NO_DIVERGENCE"
    assert any("ran no PyPTO kernel" in e for e in rep.evidence), rep.evidence
