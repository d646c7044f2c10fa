"""Newcomer audit s30, C2/C4/C5: a scripted run's trace is not offered as a replay; a campaign does not fall back
to the embedded local model unasked; a suite's missing or unknown per-task agents are refused before it starts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from orchestrator.errors import ForgeError

ROOT = Path(__file__).resolve().parents[2]
MODEL_ENV = ("FORGE_MODEL", "FORGE_MODEL_DESIGNER", "FORGE_MODEL_IMPLEMENTER", "FORGE_MODEL_VERIFIER",
             "FORGE_MODEL_DEBUGGER", "OPENAI_BASE_URL")


def test_a_scripted_runs_trace_is_refused_as_a_replay(op_copy, script, cli, monkeypatch) -> None:
    """Before: the replay asked each role a model, ended at the blocked gate ("no model configured for this
    role"), printed "(replayed ...)" and exited 0."""
    for var in MODEL_ENV:
        monkeypatch.delenv(var, raising=False)
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    shutil.copytree(next((op / ".forge").glob("run-*/trace")), op / "traces" / "default")
    for argv in (("replay", str(op), "--fresh"), ("run", str(op), "--fresh")):
        p = cli(*argv)
        assert p.returncode == 1, (argv, p.stdout, p.stderr)
        assert "recorded with scripted agents" in p.stderr and "--agents scripted:" in p.stderr, p.stderr
    p = cli("replay", str(op), "--fresh", "--agents", f"scripted:{s}")  # what the message proposes works
    assert p.returncode == 0 and "delivered" in p.stdout, p.stdout + p.stderr


def test_a_model_runs_trace_still_replays_without_a_model() -> None:
    from orchestrator.api import _no_model_calls

    assert not _no_model_calls(ROOT / "workspace" / "silu" / "traces" / "default")


def _suite(tmp_path: Path, agents: str) -> Path:
    op = tmp_path / "ops" / "sqrecip"
    if not op.is_dir():
        shutil.copytree(ROOT / "tests" / "orchestrator" / "fixtures" / "ops" / "sqrecip", op)
    f = tmp_path / "suite.yaml"
    f.write_text(f"tasks:\n  - path: ops/sqrecip\n    agents: {agents}\n", encoding="utf-8")
    return f


def test_a_suite_with_a_missing_agent_script_is_refused_before_it_runs(tmp_path: Path) -> None:
    """Before: the campaign ran and each sample of the task failed `no_agent` (rc 0)."""
    from orchestrator.adapters.campaign._suite import load_suite

    with pytest.raises(ForgeError, match=r"agent script not found: .*nope\.yaml \(paths are relative to the suite"):
        load_suite(_suite(tmp_path, "scripted:../nope.yaml"))
    with pytest.raises(ForgeError, match="unknown agents value 'foo'"):
        load_suite(_suite(tmp_path, "foo"))
    (tmp_path / "s.yaml").write_text("design: []\n", encoding="utf-8")
    (task,) = load_suite(_suite(tmp_path, "scripted:s.yaml"))
    assert task.agents == f"scripted:{tmp_path / 's.yaml'}"


def test_the_documented_suite_example_resolves_from_the_repository_root(tmp_path: Path) -> None:
    """docs/campaign.md's example mixed paths relative to the repository root with `scripted:../tests/...`."""
    text = (ROOT / "docs" / "campaign.md").read_text(encoding="utf-8")
    example = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    script = next(ln.split("scripted:", 1)[1].split()[0] for ln in example.splitlines() if "scripted:" in ln)
    path = next(ln.split("path:", 1)[1].split()[0] for ln in example.splitlines() if "path:" in ln)
    assert (ROOT / script).is_file() and (ROOT / path / "SPEC.md").is_file()


def test_a_campaign_sample_does_not_fall_back_to_the_local_model(tmp_path: Path, monkeypatch) -> None:
    """Before: with the local model installed and nothing configured, every sample ran SmolLM2 for minutes
    (campaign.json said agents null, model null) and failed `design_rejected`."""
    from orchestrator import api
    from orchestrator.adapters.campaign._sample import SampleSpec, run_sample
    from orchestrator.adapters.campaign._suite import Task

    op = ROOT / "tests" / "orchestrator" / "fixtures" / "ops" / "affine"
    monkeypatch.setattr(api, "describe_agents", lambda *a, **k: ("local", "no model configured: agents run on X"))

    def no_run(*a, **k):
        raise AssertionError("the sample ran")

    monkeypatch.setattr(api, "run", no_run)
    spec = SampleSpec(campaign_dir=str(tmp_path), sample=1, op_source=str(op),
                      task=Task(id="fixtures/affine", source=str(op), kind="opdir", level="fixtures"))
    out = run_sample(spec.model_dump())
    assert out["category"] == "no_agent" and "--model local" in out["message"], out
