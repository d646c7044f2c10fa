"""The perf stage without the real toolchain: emulator-estimate scoring, failing variants never delivered.

Runs quick_gelu with scripted agents (its authoring answers) and a variant list that includes a numerically
wrong variant; the toolchain is made unavailable, so the stage must fall back to the labelled estimate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from orchestrator import api
from orchestrator.core.perf import PerfSummary, emulator_estimate, round3
from runtime.verify import verify

ROOT = Path(__file__).resolve().parents[2]
OP = ROOT / "workspace" / "quick_gelu"


def test_emulator_estimate_is_documented_shape() -> None:
    assert emulator_estimate({}) is None
    c = {"bytes_in": 6400, "bytes_out": 6400, "elements": 1600, "loop_trips": {"rows": 4}, "runs": 1}
    assert emulator_estimate(c) == pytest.approx(1 * (200 + 100) / 4 + 16 * 4)
    wide = dict(c, loop_trips={"rows": 96})  # two waves over 48 vector cores
    assert emulator_estimate(wide) == pytest.approx(2 * 300 / 96 + 16 * 96, abs=0.1)
    assert round3(20568) == 20600 and round3(7903) == 7900 and round3(1.2345) == 1.23


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
def test_perf_stage_falls_back_to_the_estimate_and_skips_failing_variants(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import runtime.toolchain._engine as engine

    monkeypatch.setattr(engine, "find_pypto_python", lambda explicit=None: None)
    monkeypatch.delenv("PTO_FORGE_PYPTO_PYTHON", raising=False)
    op_dir = tmp_path / "quick_gelu"
    op_dir.mkdir()
    for name in ("SPEC.md", "golden.py"):
        shutil.copy2(OP / name, op_dir / name)
    authoring = tmp_path / "authoring"
    shutil.copytree(OP / "authoring", authoring)
    wrong = (authoring / "attempts" / "perf_v2.py").read_text().replace("pypto.add(e, 1.0)", "pypto.add(e, 2.0)")
    (authoring / "attempts" / "perf_wrong.py").write_text(wrong)
    script = yaml.safe_load((authoring / "script.yaml").read_text())
    script["perf"] = ["attempts/perf_wrong.py", "attempts/perf_v2.py"]
    (authoring / "script.yaml").write_text(yaml.safe_dump(script))
    result = api.run(op_dir,
                     api.RunOptions(agents=f"scripted:{authoring / 'script.yaml'}", approve="auto", perf=True,
                                    perf_budget=2))
    assert result.status == "delivered", result
    perf = result.final["perf"]
    assert perf["scorer"] == "emulator_estimate"
    assert perf["delivered"] in (0, 2)  # never the wrong variant (v1)
    readme = (op_dir / "README.md").read_text(encoding="utf-8")
    assert "emulator estimate" in readme and "| v1 | FAIL_NUMERIC |" in readme
    memory = (op_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert "## Performance stage" in memory and "eu (emulator estimate)" in memory
    assert verify(op_dir, op_dir / "quick_gelu_impl.py").verdict == "PASS"
    summary = PerfSummary(scorer="emulator_estimate")
    assert summary.unit() == "eu (emulator estimate)"
