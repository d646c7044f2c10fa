"""UX audit of session 48 (a fresh clone, used as a newcomer and a demanding user would, in a terminal).

Each test is a surprise the audit met, with the command that showed it:

- ``intake sliu/`` said ``is not a directory`` of a folder that does not exist (s47 open item);
- ``python -m orchestrator help`` (and ``help run``) was "unknown command 'help'";
- ``run "$OP"`` with ``OP`` unset ran in the current directory, ``intake ""`` said ``intake failed: : 2 problems``;
- ``intake silu/SPEC.md`` / ``run silu/golden.py`` (tab completion stops at a file) did not name the op dir meant;
- ``run op --agents scripted:empty.yaml`` (an empty script, ``{}``, only comments, ``design: []``) started a run,
  wrote ``.forge/`` and the audit repository and blocked at the design (s47 open item);
- ``run workspace/silu --base-url URL`` (no model) replayed the shipped trace and never used the endpoint;
  ``run op --agents scripted:s.yaml --model M --base-url URL`` dropped both flags without a word;
- ``run op --model lcoal`` went to api.openai.com ("the host name does not resolve") with no word of ``local``;
- ``make demo`` left the last step's spinner live under its results and on the shell prompt's line;
- ``resume op`` of a run waiting at the blocked gate said "record a decision with `approve op` or `reject ...`",
  both refused at that gate;
- ``replay op --trace op/traces/defalt`` and ``demo workspace/slu`` named no closest name;
- ``show op --gate > f``: a short row of the gate's facts ended in ~200 spaces (every table row ended in one);
- the HTML report of a run blocked at its design showed an empty Modules section;
- ``report`` of a run whose attempts compared nothing (lint failures) drew an empty plot and printed two
  matplotlib ``UserWarning`` tracebacks-in-miniature on stderr.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.main import main


def _op(tmp_path: Path, name: str = "silu") -> Path:
    op = tmp_path / name
    op.mkdir(parents=True)
    (op / "SPEC.md").write_text("---\nop_name: x\n---\n", encoding="utf-8")
    (op / "golden.py").write_text("def golden(x):\n    return x\n", encoding="utf-8")
    return op


# ------------------------------------------------------------------------------------------ intake's op dir


def test_intake_of_a_missing_folder_says_it_does_not_exist_and_names_the_closest(tmp_path, monkeypatch, capsys):
    _op(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["intake", "sliu/", "--no-golden"]) == 1
    err = capsys.readouterr().err
    assert "sliu/: does not exist (expected an operator directory holding SPEC.md and golden.py); " \
           "did you mean 'silu'?" in err, err
    assert "is not a directory" not in err


def test_a_file_of_the_op_dir_names_the_op_dir(tmp_path, capsys):
    # what run, status, resume, ... say (run itself loads LangGraph)
    from orchestrator.errors import no_op_dir

    op = _op(tmp_path)
    assert main(["intake", str(op / "SPEC.md"), "--no-golden"]) == 1
    err = capsys.readouterr().err
    assert "SPEC.md: is a file, not a directory" in err and f"did you mean '{op}'?" in err, err
    said = no_op_dir(op / "golden.py")
    assert "golden.py is a file, not an operator directory" in said and said.endswith(f"did you mean '{op}'?")


def test_a_file_elsewhere_is_not_given_an_op_dir_hint(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert main(["intake", str(tmp_path / "notes.txt"), "--no-golden"]) == 1
    err = capsys.readouterr().err
    assert "is a file, not a directory" in err and "did you mean" not in err, err


@pytest.mark.parametrize(("argv", "said"), [
    (["intake", ""], "intake: op_dir is empty (an unset shell variable?); give . for the current directory"),
    (["run", ""], "run: op_dir is empty"),
    (["status", "", "--json"], "status: op_dir is empty"),
    (["report", "x", "--out", ""], "report: --out is empty (an unset shell variable?)\n"),
])
def test_an_empty_path_argument_is_refused(tmp_path, monkeypatch, capsys, argv, said):
    _op(tmp_path, ".op")
    monkeypatch.chdir(tmp_path / ".op")  # a valid op dir as the current directory: `run ""` ran there
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err, err
    assert not (tmp_path / ".op" / ".forge").exists()


@pytest.mark.parametrize(("argv", "said"), [
    (["help"], "usage: python -m orchestrator [-h]"),
    (["help", "run"], "usage: python -m orchestrator run [-h]"),
    (["help", "verify"], "usage: python -m orchestrator verify [-h]"),
])
def test_help_is_a_command(capsys, argv, said):
    with pytest.raises(SystemExit) as ended:
        main(argv)
    assert ended.value.code == 0 and capsys.readouterr().out.startswith(said)


# ------------------------------------------------------------------------------------------ agent scripts


@pytest.mark.parametrize(("text", "said"), [
    ("", "it is empty"),
    ("# only a comment\n", "it is empty"),
    ("{}\n", "it is empty"),
    ("null\n", "it is empty"),
    ("design: []\nimplement: {}\n", "no design:, implement: or perf: entries"),
    ("debug: {diagnosis: hi}\nmy_notes: x\n", "no design:, implement: or perf: entries"),
])
def test_a_script_that_answers_nothing_is_refused_before_any_state(tmp_path, capsys, text, said):
    op = _op(tmp_path)
    script = tmp_path / "s.yaml"
    script.write_text(text, encoding="utf-8")
    for command in ("run", "replay") if said == "it is empty" and not text else ("run",):
        assert main([command, str(op), "--agents", f"scripted:{script}"]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: agent script {script}: ") and said in err, err
        assert sorted(p.name for p in op.iterdir()) == ["SPEC.md", "golden.py"]


def test_a_design_only_script_is_still_accepted(tmp_path):
    """A script that answers the designer only (to look at the design gate) is a use, not a mistake."""
    from orchestrator.adapters.script_check import script_problem

    for name in ("D.md", "i.yaml"):
        (tmp_path / name).write_text("x\n", encoding="utf-8")
    script = tmp_path / "s.yaml"
    script.write_text("design:\n  - {design_md: D.md, module_interfaces_yaml: i.yaml}\n", encoding="utf-8")
    assert script_problem(f"scripted:{script}") is None


# ------------------------------------------------------------------------------------------ flags that do nothing


def test_a_base_url_without_a_model_is_refused_not_replayed(tmp_path, monkeypatch, capsys):
    for var in ("FORGE_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    op = _op(tmp_path)
    (op / "traces" / "default").mkdir(parents=True)
    (op / "traces" / "default" / "manifest.json").write_text("{}", encoding="utf-8")
    assert main(["run", str(op), "--base-url", "http://127.0.0.1:9/v1"]) == 2
    err = capsys.readouterr().err
    assert "--base-url http://127.0.0.1:9/v1 names an endpoint but no model is set: add --model M" in err, err
    assert not (op / ".forge").exists()


@pytest.mark.parametrize(("flags", "said"), [
    (["--model", "m"], "--model does not apply"),
    (["--model", "m", "--base-url", "http://127.0.0.1:9/v1"], "--model and --base-url do not apply"),
])
def test_model_flags_with_a_script_are_refused(tmp_path, capsys, flags, said):
    op = _op(tmp_path)
    (tmp_path / "k.py").write_text("x = 1\n", encoding="utf-8")
    script = tmp_path / "s.yaml"
    script.write_text("implement: {1: [k.py]}\n", encoding="utf-8")
    assert main(["run", str(op), "--agents", f"scripted:{script}", *flags]) == 2
    err = capsys.readouterr().err
    assert said in err and "the script answers for every agent" in err, err
    assert not (op / ".forge").exists()


def test_a_slip_of_local_names_the_local_model(tmp_path, monkeypatch):
    """An endpoint nothing listens on is refused at once; the message names ``--model local`` for ``lcoal``."""
    import socket

    from orchestrator.agent_factory import endpoint_problem

    monkeypatch.chdir(tmp_path)
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    for model, hinted in (("lcoal", True), ("Local", True), ("gpt-4o", False)):
        said = endpoint_problem(tmp_path, {"model": model, "base_url": url}) or ""
        assert said.startswith(f"cannot reach {url}"), said
        assert ("did you mean --model local" in said) == hinted, (model, said)


# ------------------------------------------------------------------------------------------ terminal output


def test_the_demo_stops_its_status_line_before_the_results(tmp_path, monkeypatch):
    """The demo printed its results (and the shell its prompt) under a live status line that never stopped."""
    from orchestrator import api
    from orchestrator.cli import demo
    from orchestrator.ui import progress as progress_mod

    live: list[bool] = []
    """Whether the status line was live when the results were printed."""

    class Recorder(progress_mod.Progress):
        def __init__(self, console):
            super().__init__(console, live=False)
            self.running = False

        def start(self, name, values):
            self.running = True

        def stop(self):
            self.running = False

    made: list[Recorder] = []
    monkeypatch.setattr(progress_mod, "Progress", lambda console: made.append(Recorder(console)) or made[-1])

    def replay(dest, trace, options, hooks):
        hooks.on_start("report", {})  # the graph ends inside its last step: no "done" for it
        return object()

    def print_result(*_a):
        live.append(made[-1].running)
        raise api.ForgeError("stop here")

    monkeypatch.setattr(api, "replay", replay)
    monkeypatch.setattr(demo, "print_result", print_result)
    src = tmp_path / "ws" / "op"
    _op(tmp_path / "ws", "op")
    (src / api.DEFAULT_TRACE).mkdir(parents=True)
    (src / api.DEFAULT_TRACE / "manifest.json").write_text("{}", encoding="utf-8")
    assert main(["demo", str(src), "--out", str(tmp_path / "out")]) == 1
    assert live == [False]


def test_a_report_plot_of_attempts_that_compared_nothing_is_left_out_quietly():
    import warnings

    from orchestrator.ui.run_report import _Plots

    plots = _Plots()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plots.attempts({"M1": [(1, None, "FAIL_LINT"), (2, None, "FAIL_LINT")]}) == ""
        assert plots.attempts({"M1": [(1, 0.5, "FAIL_NUMERIC"), (2, None, "FAIL_LINT")],
                               "M2": [(1, None, "FAIL_LINT")]}).startswith("<img")


# ------------------------------------------------------------------------------------------ deciding elsewhere


@pytest.mark.parametrize(("interrupts", "said"), [
    ([], "is in progress (pid 4242) and not waiting at a gate: nothing to approve now"),
    ([{"gate": "design", "title": "t", "seq": 1}], "waiting at gate design #1 in another terminal (pid 4242): answer "
                                                   "at its prompt there"),
])
def test_approve_while_a_run_works_elsewhere_says_what_it_is_doing(tmp_path, monkeypatch, interrupts, said):
    """``approve op`` while ``run op --approve auto`` worked said "answer at its prompt there" of no prompt."""
    from orchestrator import decisions
    from orchestrator.errors import ForgeError

    monkeypatch.setattr(decisions, "latest_run", lambda root, shown: "R1")
    monkeypatch.setattr(decisions, "read_meta", lambda root, rid: {})
    monkeypatch.setattr(decisions, "lock_holder", lambda root: {"pid": 4242, "run_id": "R1"})
    monkeypatch.setattr(decisions, "run_state", lambda root, rid: ({}, "", interrupts))
    with pytest.raises(ForgeError) as info:
        decisions.approve(tmp_path)
    assert said in info.value.message, info.value.message


# ------------------------------------------------------------------------------------------ log lines


def test_a_warning_goes_to_the_stderr_of_the_moment_in_plain_words(monkeypatch, capsys):
    """``WARNING agents.llm._openai: model call failed (500); retry 1 in 1.0s`` was glued to the end of the live
    status line (the handler kept the start-up stderr, which rich's live display cannot redirect)."""
    import io
    import logging

    from orchestrator.cli._logging import log_handler

    log = logging.getLogger("ux_s48_probe")
    log.propagate = False
    for verbose, said in ((False, "warning: model call failed (500); retry 1 in 1.0s\n"),
                          (True, "WARNING ux_s48_probe: model call failed (500); retry 1 in 1.0s\n")):
        handler = log_handler(verbose=verbose)
        log.addHandler(handler)
        try:
            swapped = io.StringIO()  # what a live status line puts in place of sys.stderr
            monkeypatch.setattr("sys.stderr", swapped)
            log.warning("model call failed (%s); retry %d in %.1fs", 500, 1, 1.0)
            assert swapped.getvalue() == said
        finally:
            log.removeHandler(handler)


@pytest.mark.slow  # three runs of the pipeline in-process (~5 s of CPU)
def test_resume_at_the_blocked_gate_names_the_decision_it_takes(op_copy, script, cli):
    op = op_copy("affine")
    agents = f"scripted:{script('affine', implement={1: ['impl_numeric.py']})}"
    assert cli("run", str(op), "--approve", "stop", "--budget", "1", "--agents", agents).returncode == 0
    assert cli("approve", str(op)).returncode == 0
    first = cli("resume", str(op), "--approve", "stop")
    assert first.returncode == 0 and "waiting at gate 'blocked'" in first.stdout, first.stdout + first.stderr
    out = cli("resume", str(op), "--approve", "stop")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("still waiting at gate"))
    assert line.endswith(f"approve {op} --choice hint|raise_budget|rollback|abort`"), line
    assert "reject" not in line


# ------------------------------------------------------------------------------------------ closest names


@pytest.mark.slow  # replay and demo load LangGraph (~3.4 s of CPU when first in a worker)
def test_a_mistyped_trace_or_demo_names_the_closest(tmp_path, capsys):
    import shutil

    op = tmp_path / "silu"
    op.mkdir()
    for name in ("SPEC.md", "golden.py"):  # a valid op dir: replay checks it before the trace
        shutil.copy(Path(__file__).resolve().parents[2] / "workspace" / "silu" / name, op / name)
    (op / "traces" / "default").mkdir(parents=True)
    assert main(["replay", str(op), "--trace", str(op / "traces" / "defalt")]) == 1
    err = capsys.readouterr().err
    assert f"recorded trace not found: {op}/traces/defalt; did you mean '{op}/traces/default'?" in err, err
    assert main(["replay", str(op), "--trace", str(op / "SPEC.md")]) == 1
    assert "recorded trace is a file, not a trace directory" in capsys.readouterr().err
    assert main(["demo", "workspace/slu"]) == 1
    err = capsys.readouterr().err
    assert err.rstrip().endswith("did you mean 'workspace/silu'?"), err
    assert not (op / ".forge").exists()


def test_piped_output_has_no_trailing_spaces(monkeypatch):
    import io

    from rich.table import Table

    from orchestrator.cli._common import _Console

    monkeypatch.delenv("COLUMNS", raising=False)
    out = io.StringIO()  # not a terminal: what `show op --gate > f` writes to
    con = _Console(file=out)
    grid = Table.grid(padding=(0, 2))
    grid.add_row("reason", "x" * 300)
    grid.add_row("last verdict", "none")
    con.print(grid)
    con.print("a line  ")
    lines = out.getvalue().splitlines()
    assert lines == ["reason        " + "x" * 300, "last verdict  none", "a line"], lines


@pytest.mark.slow  # a run of the pipeline in-process (~3 s of CPU with LangGraph's import)
def test_the_report_of_a_run_without_modules_says_so(op_copy, tmp_path, cli):
    """The Modules section of the HTML report was an empty heading for a run blocked at its design (the terminal
    says "no modules yet")."""
    from orchestrator.ui.run_report import build_report

    op = op_copy("affine")
    (tmp_path / "D.md").write_text("no decision line here\n", encoding="utf-8")
    (tmp_path / "i.yaml").write_text("modules: []\n", encoding="utf-8")
    script = tmp_path / "s.yaml"
    script.write_text("design:\n  - {design_md: D.md, module_interfaces_yaml: i.yaml}\n", encoding="utf-8")
    out = cli("run", str(op), "--approve", "stop", "--agents", f"scripted:{script}")
    assert out.returncode == 0 and "no modules yet" in out.stdout, out.stdout + out.stderr
    html = Path(build_report(op).path).read_text(encoding="utf-8")
    modules = html.split('<h2 id="modules">Modules</h2>', 1)[1].split("<h2", 1)[0]
    assert "no modules yet: no design has passed its check" in modules, modules
