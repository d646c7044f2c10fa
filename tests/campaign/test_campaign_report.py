"""pass@k, the campaign records and the report's figures, checked against numbers computed by hand."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orchestrator.adapters.campaign import (
    CampaignConfig,
    Ledger,
    SampleResult,
    mean_pass_at_k,
    pass_at_k,
    summarize,
    write_html,
)
from orchestrator.errors import ForgeError


def test_pass_at_k_unbiased_estimator_by_hand() -> None:
    assert pass_at_k(2, 1, 1) == pytest.approx(0.5)
    assert pass_at_k(2, 1, 2) == pytest.approx(1.0)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)  # 1 - C(7,5)/C(10,5)
    assert pass_at_k(3, 0, 2) == 0.0
    assert pass_at_k(3, 3, 3) == 1.0
    assert pass_at_k(1, 1, 2) is None  # not enough samples to say
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)
    assert mean_pass_at_k([(2, 1), (2, 0), (1, 1)], 2) == (pytest.approx(0.5), 2)


def _line(task: str, sample: int, level: str, status: str, **kw) -> SampleResult:
    return SampleResult(task=task, sample=sample, level=level, status=status, **kw)


def _campaign(tmp_path: Path) -> Path:
    root = tmp_path / "camp"
    ledger = Ledger(root)
    ledger.write_config(CampaignConfig(suite="/suite", samples=2))
    (root / "tasks.json").write_text(json.dumps([
        {"id": "l1/a", "level": "level1"}, {"id": "l1/b", "level": "level1"}, {"id": "l2/c", "level": "level2"},
        {"id": "l2/d", "level": "level2"}]), encoding="utf-8")
    lines = [
        _line("l1/a", 0, "level1", "solved", attempts=2, model_calls=6, prompt_tokens=1000, completion_tokens=200,
              cost_usd=0.01, wall_s=10.0, cycles_first=2000.0, cycles_final=1500.0),
        _line("l1/a", 1, "level1", "infra", message="WorkerCrashedError", wall_s=3.0),
        _line("l1/a", 1, "level1", "failed", category="numeric", prompt_tokens=500, completion_tokens=100,
              cost_usd=0.005, wall_s=12.0),
        _line("l1/b", 0, "level1", "failed", category="lint", wall_s=5.0),
        _line("l1/b", 1, "level1", "failed", category="lint", wall_s=5.0),
        _line("l2/c", 0, "level2", "solved", attempts=1, model_calls=4, prompt_tokens=300, completion_tokens=50,
              cost_usd=0.002, wall_s=8.0),
        _line("l2/c", 1, "level2", "solved", attempts=3, model_calls=8, wall_s=9.0),
        _line("l2/d", 0, "level2", "failed", category="intake", message="intake: golden raises"),
        _line("l2/d", 1, "level2", "parked", gate="design", op_dir="runs/l2/d/s1", run_id="r1"),
    ]
    for r in lines:
        ledger.append(r)
    with open(root / "results.jsonl", "a", encoding="utf-8") as fh:
        fh.write('{"task": "l2/d", "sample": 1, "sta')  # a torn last line (kill -9 while writing)
    return root


def test_report_numbers_match_a_hand_computation(tmp_path: Path) -> None:
    s = summarize(_campaign(tmp_path))
    assert s.ks == [1, 2]
    assert (s.tasks, s.samples_planned, s.finished, s.solved, s.failed) == (4, 8, 7, 3, 4)
    # per task (n, c): a (2,1) b (2,0) c (2,2) d (1,0: one failed, one parked)
    rows = {r.task: (r.n, r.c) for r in s.rows}
    assert rows == {"l1/a": (2, 1), "l1/b": (2, 0), "l2/c": (2, 2), "l2/d": (1, 0)}
    # pass@1 = mean(c/n) = (1/2 + 0 + 1 + 0) / 4; pass@2 over the 3 tasks with n >= 2 = (1 + 0 + 1) / 3
    assert s.overall.pass_at[1] == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    assert s.overall.pass_at[2] == pytest.approx(2 / 3) and s.overall.tasks_counted[2] == 3
    lv = {r.level: r for r in s.levels}
    assert lv["level1"].pass_at[1] == pytest.approx(0.25) and lv["level1"].pass_at[2] == pytest.approx(0.5)
    assert lv["level2"].pass_at[1] == pytest.approx(0.5) and lv["level2"].pass_at[2] == pytest.approx(1.0)
    assert lv["level2"].tasks_counted[2] == 1
    assert {k: v for k, v in s.categories.items() if v} == {"numeric": 1, "lint": 2, "intake": 1}
    assert [(p.task, p.sample, p.gate) for p in s.parked] == [("l2/d", 1, "design")]
    assert s.infra_retries == 1
    assert s.solved_tasks == 2
    assert s.attempts_per_solved == pytest.approx((2 + 1 + 3) / 3)
    assert s.calls_per_solved == pytest.approx((6 + 4 + 8) / 3)
    assert s.tokens_per_solved_task == pytest.approx((1200 + 600 + 350) / 2)  # every token spent / tasks solved
    assert s.cost_per_solved_task == pytest.approx((0.01 + 0.005 + 0.002) / 2)
    assert s.wall_s == pytest.approx(10 + 3 + 12 + 5 + 5 + 8 + 9)
    assert [(c.task, c.first, c.final) for c in s.cycles] == [("l1/a", 2000.0, 1500.0)]


def test_html_is_one_self_contained_page(tmp_path: Path) -> None:
    s = summarize(_campaign(tmp_path))
    page = write_html(s, tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>")
    assert not re.search(r"(src|href)=['\"]?(https?:|//)", page)
    assert "<script" not in page
    assert "pass@2" in page and "66.7%" in page and "37.5%" in page
    assert "python -m orchestrator approve" in page and "runs/l2/d/s1" in page
    for cat in ("design rejected", "lint", "numeric", "runtime", "cheat", "budget", "infra", "intake"):
        assert f">{cat}<" in page


def test_ledger_states_and_config_checks(tmp_path: Path) -> None:
    root = _campaign(tmp_path)
    states = Ledger(root).states()
    assert states[("l1/a", 1)].final is not None and states[("l1/a", 1)].infra == 1
    assert states[("l2/d", 1)].final is None and states[("l2/d", 1)].parked is not None
    cfg = CampaignConfig(suite="/suite", samples=2)
    assert cfg.same_campaign(CampaignConfig(suite="/suite", samples=5)) is None  # more samples: same campaign
    assert "gates" in (cfg.same_campaign(CampaignConfig(suite="/suite", samples=2, gates="stop")) or "")
    with pytest.raises(ForgeError, match="no campaign here"):
        summarize(tmp_path / "nothing")
