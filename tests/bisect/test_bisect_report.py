"""Report properties: deterministic, sanitized, agent context; CLI messages and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from bisect_corpus import CORPUS, VARIANTS, materialize

from runtime.bisect import BisectError, BisectReport, bisect
from runtime.bisect.report import MAX_OUTLIERS, stats_of
from runtime.stages import wrapper_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bugged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, int]:
    v = next(v for v in VARIANTS if v.id == "rms_const_mean")
    return materialize(v, tmp_path_factory.mktemp("bugged"))


@pytest.fixture(scope="module")
def bugged_report(bugged: tuple[Path, Path, int]) -> BisectReport:
    op_dir, stage, _ = bugged
    return bisect(op_dir, stage)


def test_report_is_deterministic(bugged: tuple[Path, Path, int], bugged_report: BisectReport) -> None:
    op_dir, stage, _ = bugged
    a = bugged_report
    b = bisect(op_dir, stage)
    assert a.to_json() == b.to_json()
    assert a.report_hash == b.report_hash
    assert "duration_s" not in json.loads(a.to_json())
    again = BisectReport.model_validate_json(a.to_json())
    assert again.report_hash == a.report_hash


def test_report_is_sanitized(bugged: tuple[Path, Path, int], bugged_report: BisectReport) -> None:
    op_dir, _stage, _ = bugged
    report = bugged_report
    text = report.to_json()
    # no golden tensor: the number of float literals is bounded by the outlier listings, not the data size
    data = json.loads(text)
    floats = []

    def walk(x: object) -> None:
        if isinstance(x, float):
            floats.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(data)
    assert len(floats) < 200
    for f in [report.first_divergence, report.observed_at, *report.candidates]:
        if f is not None and f.stats is not None:
            assert len(f.stats.outliers) <= MAX_OUTLIERS
    # golden.py source never appears
    golden_src = (op_dir / "golden.py").read_text()
    assert "Golden function inventory" in golden_src and "Golden function inventory" not in text


def test_agent_context_names_line_and_evidence(bugged: tuple[Path, Path, int], bugged_report: BisectReport) -> None:
    line = bugged[2]
    ctx = bugged_report.to_agent_context()
    assert ctx["status"] == "DIVERGENCE_FOUND"
    assert ctx["first_divergence"]["line"] == line
    assert "2.0 / D" in ctx["first_divergence"]["code"]
    assert ctx["failing_outputs"] == ["y"]
    assert ctx["evidence"]
    json.dumps(ctx)  # plain JSON for DebugContext.bisect


def test_stats_outliers_are_sorted_and_offset() -> None:
    a = np.zeros((4, 4))
    b = np.zeros((4, 4))
    a[1, 2], a[3, 3] = 5.0, 1.0
    s = stats_of(a, b, 1e-3, 1e-3, offset=[10, 0])
    assert s.out_of_tolerance == 2
    assert [o.index for o in s.outliers] == [[11, 2], [13, 3]]
    assert s.max_abs_diff == 5.0


def test_wrapper_name() -> None:
    assert wrapper_for(Path("modules/rms_norm_module12_impl.py")) == "rms_norm_module12_wrapper"
    assert wrapper_for(Path("silu_impl.py")) == "silu_wrapper"


def test_user_mistakes_are_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(BisectError, match="invalid op directory"):
        bisect(tmp_path, "x_impl.py")
    with pytest.raises(BisectError, match="stage file not found"):
        bisect(CORPUS / "rms_norm", "nope_impl.py")
    with pytest.raises(BisectError, match="no case named"):
        bisect(CORPUS / "rms_norm", "rms_norm_impl.py", case="B1-fp64")


def test_import_error_of_candidate_is_reported(tmp_path: Path) -> None:
    v = next(v for v in VARIANTS if v.id == "rms_const_mean")
    op_dir, stage, _ = materialize(v, tmp_path)
    stage.write_text("raise RuntimeError('boom at import')\n")
    report = bisect(op_dir, stage)
    assert report.status == "RUNTIME_ERROR"
    assert "boom at import" in report.summary


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "runtime.bisect", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_cli_text_json_and_exit_codes(bugged: tuple[Path, Path, int]) -> None:
    op_dir, stage, line = bugged
    r = _cli(str(op_dir), str(stage))
    assert r.returncode == 1, r.stderr
    assert f"culprit: line {line}" in r.stdout
    r = _cli(str(op_dir), str(stage), "--json")
    assert json.loads(r.stdout)["first_divergence"]["line"] == line
    r = _cli(str(op_dir / "missing"), "x.py")
    assert r.returncode == 2 and r.stderr.startswith("error:") and "Traceback" not in r.stderr
