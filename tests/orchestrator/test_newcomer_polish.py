"""Issue #28 finding 12 (polish) and what the second newcomer pass found: each item as a small in-process check."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from orchestrator.cli import _common
from orchestrator.cli.main import build_parser
from orchestrator.cli.main import main as cli_main
from orchestrator.core import opdir_bridge
from orchestrator.errors import ForgeError
from orchestrator.ui.run_report import budget_text

ROOT = Path(__file__).resolve().parents[2]


def _typo_op(tmp_path: Path) -> Path:
    op = tmp_path / "silu"
    shutil.copytree(ROOT / "workspace" / "silu", op, ignore=shutil.ignore_patterns("traces", ".forge"))
    spec = op / "SPEC.md"
    spec.write_text(spec.read_text(encoding="utf-8").replace("\nseeds:", "\nseed:", 1), encoding="utf-8")
    return op


def test_run_states_each_intake_problem_once(tmp_path: Path) -> None:
    """`run` printed each intake problem twice, in two formats (the exception's first line, then the list)."""
    with pytest.raises(ForgeError) as info:
        opdir_bridge.load(_typo_op(tmp_path))
    text = info.value.message
    assert text.count("unknown key 'seed'") == 1, text
    assert "1 problem(s):\n  SPEC.md:" in text and "did you mean 'seeds'" in text


def test_intake_heading_cites_a_document_that_exists(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The complexity table cited `workflow.md §4.3`, which is not in the repository; it now cites docs/opdir.md."""
    op = tmp_path / "silu"
    shutil.copytree(ROOT / "workspace" / "silu", op, ignore=shutil.ignore_patterns("traces", ".forge"))
    assert cli_main(["intake", str(op)]) == 0
    out = capsys.readouterr().out
    assert "workflow.md" not in out and "complexity decision (docs/opdir.md" in out
    assert "## Complexity decision" in (ROOT / "docs" / "opdir.md").read_text(encoding="utf-8")


def test_a_printed_command_is_not_broken_at_80_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 80 columns rich inserted a newline inside a printed command, which then did not copy-paste; panels and
    tables must still wrap (a console-wide soft wrap cropped the gate's DESIGN.md panel)."""
    from orchestrator.store.results import RunResult

    buf = io.StringIO()
    monkeypatch.setattr(_common, "console", Console(file=buf, width=80))
    op_dir = "/a/rather/long/path/to/an/operator/directory/that/a/user/of/this/tool/has/made"
    assert _common.print_result(RunResult(run_id="r1", status="stopped", cause="disk full"), op_dir) == 1
    assert f"resume {op_dir}`" in buf.getvalue(), buf.getvalue()
    assert not _common.console.soft_wrap  # the default stays: panels wrap their text

def test_report_header_shows_a_raised_budget() -> None:
    """The report header said `budget 2` after the blocked gate raised the module's budget to 7."""
    assert budget_text(2, {"modules": [{"id": 1, "budget": 7}]}) == "2 (raised: M1 7)"
    assert budget_text(10, {"modules": [{"id": 1, "budget": 10}]}) == "10"


def test_perf_line_says_what_its_cycles_sum() -> None:
    """quick_gelu said `10784 cycles` (the second opinion: first shape) then `vs 20568 cycles for the first
    verified kernel` (the perf stage: every shape summed) with nothing saying the two measure different things."""
    lines = _common._toolchain_lines({"toolchain": {"summary": "real pypto 0.2.0 SIM: accepted; 10784 cycles"},
                                      "perf": {"baseline": 20568, "delivered_score": 20000, "scorer": "cost_model",
                                               "delivered": 1}})
    assert any("summed over every case shape" in ln and "first shape" in ln for ln in lines), lines


def test_help_of_fresh_is_not_for_replays_only() -> None:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    run = sub.choices["run"]
    fresh = next(a for a in run._actions if a.dest == "fresh")
    assert "replay" not in (fresh.help or "") and ".forge/previous/" in (fresh.help or "")


def test_main_documents_only_exit_codes_it_returns() -> None:
    """cli/main.py documented an exit code 3 ("a capability that is not built yet") that nothing returns."""
    import orchestrator.cli.main as m

    assert "3 a capability" not in (m.__doc__ or "")
    sources = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "orchestrator" / "cli").glob("*.py"))
    assert "return 3" not in sources and ", 3)" not in sources


def test_demo_of_an_unknown_example_lists_the_examples(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Second newcomer pass: `demo workspace/<typo>` said only what an example needs, not which ones exist."""
    monkeypatch.chdir(tmp_path)
    assert cli_main(["demo", "workspace/sdpaa"]) == 1
    err = capsys.readouterr().err
    assert "workspace/sdpa," in err and "workspace/silu" in err, err


def test_a_venv_installed_before_the_examples_were_packaged_gets_no_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Second newcomer pass: an editable install older than the `orchestrator.examples` mapping made
    `demo workspace/<missing>` end in ModuleNotFoundError's traceback."""
    from importlib import resources

    from orchestrator import api

    def missing(name: str):
        raise ModuleNotFoundError(f"No module named {name!r}")

    monkeypatch.setattr(resources, "files", missing)
    assert api.example_op_dir("sdpa") is None and api.example_names() == []


def test_progress_names_a_verdict_once_and_cuts_reasons_at_a_word() -> None:
    """Second newcomer pass (sdpa demo): `verdict FAIL_NUMERIC: FAIL_NUMERIC modules/... all of 16384 eleme`: the
    verdict twice (the report summary starts with it) and the reason cut mid-word."""
    from orchestrator.ui.progress import clip, outcome_text

    summary = ("FAIL_NUMERIC modules/sdpa_module1_impl.py (0/16 cases pass): case B2_S64_D64_L128-fp32-s0-normal: "
               "leaf output[0] (probs): all of 16384 elements out of tolerance, max_diff 0.9")
    values = {"last_verdict": "FAIL_NUMERIC", "active": 1,
              "modules": [{"id": 1, "feedback": [f"attempt 1 FAIL_NUMERIC: {summary}"]}]}
    line = outcome_text("verify", values)
    assert line.count("FAIL_NUMERIC") == 1 and "modules/sdpa_module1_impl.py (0/16 cases pass)" in line, line
    cut = clip(summary, 100)
    assert cut.endswith(" …") and len(cut) <= 102 and summary.startswith(cut[:-2])
    assert summary[len(cut) - 2] in " ,;:"  # cut at a word boundary
    assert clip("short", 100) == "short"


def test_a_delivered_runs_summary_fits_80_columns() -> None:
    """Second newcomer pass (sdpa demo, output not a terminal = 80 columns): the "last failure" column of a
    verified module folded an earlier attempt's reason into 25 rows. It now appears only for a module that is not
    verified, clipped to one short line."""
    from orchestrator.store.results import ModuleSummary, RunResult
    from orchestrator.ui.progress import summary_table

    reason = "FAIL_NUMERIC modules/sdpa_module1_impl.py (0/16 cases pass): case B2_S64_D64_L128-fp32-s0-normal"
    done = RunResult(run_id="r1", status="delivered", final={"file": "sdpa_impl.py", "verdict": "PASS"},
                     modules=[ModuleSummary(id=1, name="scores_softmax", status="verified", attempts=2, budget=10,
                                            verdict="PASS", report_hash="22dd1c27e9a4aa", last_failure=reason)])
    buf = io.StringIO()
    Console(file=buf, width=80).print(summary_table(done))
    rows = [ln for ln in buf.getvalue().splitlines() if ln.startswith("│")]
    assert len(rows) == 2 and "last failure" not in buf.getvalue(), buf.getvalue()
    blocked = done.model_copy(update={"status": "waiting", "final": {}, "modules": [
        done.modules[0].model_copy(update={"status": "in_progress", "verdict": "FAIL_NUMERIC"})]})
    buf = io.StringIO()
    Console(file=buf, width=120).print(summary_table(blocked))
    assert "last failure" in buf.getvalue() and "modules/sdpa_mod" in buf.getvalue(), buf.getvalue()


def test_your_first_operator_names_the_no_model_path() -> None:
    """Issue #28 finding 8 (docs half): "Your first operator" never mentioned `--agents scripted:`; and
    docs/running.md still said `--fresh` was for replays only (finding 12)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = readme.split("## Your first operator", 1)[1].split("\n## ", 1)[0]
    assert "--agents scripted:tests/orchestrator/fixtures/agents/sqrecip/script.yaml" in first
    assert (ROOT / "tests/orchestrator/fixtures/agents/sqrecip/script.yaml").is_file()
    assert (ROOT / "tests/orchestrator/fixtures/ops/sqrecip/SPEC.md").is_file()
    assert "replays only" not in (ROOT / "docs" / "running.md").read_text(encoding="utf-8")


def test_prune_waits_for_no_live_run(tmp_path: Path) -> None:
    """Issue #28: everything that mutates an op dir takes the run lock first; `prune` deleted checkpoints under a
    live run. Another process holds the lock here: prune refuses with one line and deletes nothing."""
    import subprocess
    import sys

    from orchestrator import api

    op = tmp_path / "op"
    (op / ".forge").mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)", str(op / ".forge" / "lock")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ForgeError, match="a run is already in progress"):
            api.prune(op, keep=1)
    finally:
        holder.kill()
        holder.wait()
    assert api.prune(op, keep=1).runs == 0  # once the run is gone
    (tmp_path / "empty_op").mkdir()
    assert api.prune(tmp_path / "empty_op").runs == 0
    assert not (tmp_path / "empty_op" / ".forge").exists()  # prune of a never-run op dir writes nothing
