"""UX audit of session 46 (a fresh clone, a terminal, pipes, mistakes of every kind).

Each test is a surprise the audit met, with the command that showed it:

- ``show op --gate``, ``audit op``, ``report op`` and ``approve op`` loaded LangGraph, the nodes, the agents and
  the verifier (2.2-2.7 s of CPU each, measured on a copy of the demo run) to read a checkpoint, a git dir and a
  few files; ``report`` also loaded matplotlib for a run with nothing to plot;
- ``status op | less``, ``show op --gate > screen.txt``: rich laid the output out for the terminal's width (or 80
  columns without one), so a table row, a path or a message was broken over lines in the pipe or the file.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _at_design_gate(op_copy, script, cli) -> Path:
    op = op_copy("affine")
    assert cli("run", str(op), "--approve", "stop", "--agents",
               f"scripted:{script('affine', implement={1: ['impl.py']})}").returncode == 0
    return op


# ------------------------------------------------------------------------------------------ read-only commands


def test_show_gate_audit_report_and_approve_load_no_langgraph(op_copy, script, cli, tmp_path) -> None:
    """One process runs the four commands on a run stopped at its design gate (whose driver kept the copy of
    the checkpoint): none imports LangGraph, the agents' SDK or matplotlib, and each says what it did."""
    op = _at_design_gate(op_copy, script, cli)
    out = tmp_path / "r.html"
    code = ("import sys\nfrom orchestrator.cli.main import main\nop, out = sys.argv[1], sys.argv[2]\n"
            "assert main(['show', op, '--gate']) == 0\n"
            "assert main(['audit', op]) == 0\n"
            "assert main(['report', op, '--out', out]) == 0\n"
            "assert main(['approve', op, '--gate', 'design']) == 0\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('langgraph', 'langchain_core', 'openai', 'matplotlib'))\n"
            "assert not heavy, heavy[:5]\n")
    proc = subprocess.run([sys.executable, "-c", code, str(op), str(out)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert "gate design #1" in proc.stdout and "audit OK" in proc.stdout and "recorded approval for gate design" \
        in proc.stdout and out.is_file(), proc.stdout


def test_copies_answer_as_the_checkpoints_do_and_only_while_they_are_current(op_copy, script, cli) -> None:
    """The gate view and the timeline read from the copies equal those read through LangGraph; a checkpoint
    altered in place, a write added or a prune (which keeps the latest checkpoint) makes the copy unused."""
    import sqlite3

    from orchestrator import readonly
    from orchestrator.core.snapshot import history, snapshot
    from orchestrator.store.paths import checkpoint_db
    from orchestrator.store.status_cache import (
        checkpoint_key,
        history_key,
        read_cached,
        read_history_cached,
    )
    from orchestrator.ui.views import gate_view_for

    op = _at_design_gate(op_copy, script, cli)
    (run,) = (op / ".forge").glob("run-*")
    rid = run.name.removeprefix("run-")
    assert read_cached(op, rid) is not None  # the driver's copy
    from_copy = gate_view_for(op)
    values, _, interrupts = snapshot(op, rid)
    from orchestrator.gates import GateRequest

    from_graph = gate_view_for(op, GateRequest.model_validate(interrupts[0]))
    assert from_copy.model_dump() == from_graph.model_dump() and from_copy.decomposition

    live = json.loads(json.dumps(history(op, rid), default=str))
    assert readonly.run_history(op, rid) == live and read_history_cached(op, rid) == live  # kept
    data = json.loads((run / "history.json").read_text())
    data["history"][0]["node"] = "bogus"
    (run / "history.json").write_text(json.dumps(data))
    assert readonly.run_history(op, rid)[0]["node"] == "bogus"  # proof that the copy is what answers

    db = checkpoint_db(op, rid)
    before = (checkpoint_key(op, rid), history_key(op, rid))
    latest = "SELECT checkpoint_id, metadata FROM checkpoints ORDER BY checkpoint_id DESC LIMIT 1"
    with sqlite3.connect(db) as conn:  # the latest checkpoint altered in place (same id): neither copy is used
        cid, metadata = conn.execute(latest).fetchone()
        conn.execute("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?", (bytes(metadata) + b" ", cid))
    assert checkpoint_key(op, rid) != before[0] and history_key(op, rid) != before[1]
    assert read_cached(op, rid) is None and read_history_cached(op, rid) is None
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE checkpoints SET metadata = ? WHERE checkpoint_id = ?", (metadata, cid))
    assert (checkpoint_key(op, rid), history_key(op, rid)) == before

    assert cli("prune", str(op), "--keep", "1").returncode == 0  # the latest checkpoint stays, the timeline shrinks
    assert checkpoint_key(op, rid) == before[0] and history_key(op, rid) != before[1]
    assert read_history_cached(op, rid) is None
    assert readonly.run_history(op, rid) == json.loads(json.dumps(history(op, rid), default=str))
    assert len(readonly.run_history(op, rid)) < len(live)


def test_a_report_with_nothing_to_plot_loads_no_matplotlib() -> None:
    from orchestrator.ui.run_report import _Plots

    plots = _Plots()
    assert plots.attempts({}) == "" and plots.histogram([], 1e-3, "t") == "" and plots.heatmap([], [], "t") == ""
    assert plots._plt is None and not plots._loaded and plots.missing == ""


# ----------------------------------------------------------------------------------------------- piped output


def _console(stream: io.StringIO, monkeypatch, columns: str | None = None):
    from orchestrator.cli._common import _Console

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    return _Console(file=stream)


def test_output_to_a_pipe_or_a_file_is_not_wrapped(monkeypatch) -> None:
    """Piped, a table row, a long path and a panel's lines stay one line each, and a panel fits its content
    (no border a thousand columns wide); COLUMNS still sets the width, and on a terminal a panel fills it."""
    from rich.table import Table

    from orchestrator.ui.screens import FitPanel

    path = "/very/long/" + "directory/" * 20 + "op"
    table = Table(title="run x: waiting")
    for col in ("module", "name", "last failure"):
        table.add_column(col)
    table.add_row("M2", "affine", "FAIL_NUMERIC modules/affine_module12_impl.py (0/56 cases pass): " + "x" * 90)
    paragraph = "Rationale: " + "a long line of DESIGN.md as a model writes it, " * 6

    buf = io.StringIO()
    con = _console(buf, monkeypatch)
    con.print(f"waiting at gate 'design' #1: see `python -m orchestrator show {path} --gate`")
    con.print(table)
    con.print(FitPanel(paragraph, title="rationale (DESIGN.md)"))
    lines = buf.getvalue().splitlines()
    assert lines[0].endswith(f"{path} --gate`")
    assert any(line.startswith("│ M2") and line.rstrip().endswith("x │") for line in lines), lines
    (body,) = [line for line in lines if "Rationale:" in line]
    assert body.rstrip().endswith("│") and len(body) == len(paragraph) + 4  # fitted: "│ " + text + " │"

    buf = io.StringIO()
    con = _console(buf, monkeypatch, columns="60")
    con.print(table)
    con.print(FitPanel("short"))
    assert max(len(line) for line in buf.getvalue().splitlines()) <= 60  # the width asked for

    buf = io.StringIO()
    con = _console(buf, monkeypatch, columns="60")
    con._force_terminal = True
    con.print(FitPanel("short"))
    assert buf.getvalue().splitlines()[0].endswith("─" * 50 + "╮")


# ------------------------------------------------------------------------------------------- the command line


def _subparsers(parser, prefix=""):
    import argparse

    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    for name, child in (sub.choices.items() if sub is not None else ()):
        yield f"{prefix}{name}", child
        yield from _subparsers(child, f"{prefix}{name} ")


def test_every_command_says_what_it_does_with_examples_that_parse() -> None:
    """``--help`` of every subcommand (nested ones too) has a description and ends with examples; each example is
    a command line the parser takes as it is (no unknown option, no missing argument)."""
    import shlex

    from orchestrator.cli.main import EXAMPLES, PASS_THROUGH, build_parser

    parser = build_parser()
    seen = []
    for name, sub in _subparsers(parser):
        if name in PASS_THROUGH:
            continue
        seen.append(name)
        text = sub.format_help()
        assert sub.description and "\nexamples:\n  python -m orchestrator " in text, name
        for example in EXAMPLES[name]:
            args, extras = parser.parse_known_args(shlex.split(example))
            assert not extras and args.func is not None, example
    assert set(seen) == set(EXAMPLES)
    first = parser.format_help().split("a first session", 1)[1].splitlines()[1:]
    for line in first:  # the top-level help's first session parses too
        args, extras = parser.parse_known_args(shlex.split(line.split("#")[0])[3:])
        assert not extras and args.func is not None, line
    assert len(first) == 7


def test_verbose_after_the_command_and_show_given_two_things(tmp_path, capsys) -> None:
    from orchestrator.cli.main import build_parser, main

    parser = build_parser()
    assert parser.parse_args(["status", "op", "-v"]).verbose is True
    assert parser.parse_args(["-v", "status", "op"]).verbose is True
    assert parser.parse_args(["status", "op"]).verbose is False
    assert parser.parse_args(["campaign", "run", "s", "--out", "o", "--verbose"]).verbose is True

    assert main(["show", str(tmp_path), "--last", "--gate"]) == 2
    assert capsys.readouterr().err.startswith("error: show one thing: --last and --gate were both given")
    assert main(["show", str(tmp_path), "abc123", "--gate", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["exit_code"] == 2


def test_a_replay_of_edited_inputs_says_so(tmp_path) -> None:
    """The one-line error of a replay miss says when SPEC.md or golden.py is not what the recording was made with;
    every shipped workspace trace names the inputs of its own op dir (so the phrase is never said of them)."""
    from agents.trace._store import hash_op_dir
    from orchestrator.api import _inputs_changed
    from orchestrator.store.paths import trace_dir

    for op in sorted((ROOT / "workspace").glob("*/traces/default")):
        recorded = json.loads((op / "manifest.json").read_text())["op_dir_hash"]
        assert recorded == hash_op_dir(op.parents[1]), op

    source = tmp_path / "recording"
    source.mkdir()
    root = tmp_path / "op"
    (root / "golden.py").parent.mkdir()
    (root / "SPEC.md").write_text("---\nop_name: x\n---\n")
    (root / "golden.py").write_text("def golden(x):\n    return x\n")
    (source / "manifest.json").write_text(json.dumps({"op_dir_hash": hash_op_dir(root)}))
    run_trace = trace_dir(root, "r1")
    run_trace.mkdir(parents=True)
    (run_trace / "manifest.json").write_text(json.dumps({"replay_of": str(source)}))
    assert _inputs_changed(root, "r1") == ""
    (root / "golden.py").write_text("def golden(x):\n    return x + 0\n")
    assert _inputs_changed(root, "r1").startswith("; SPEC.md or golden.py is not what the recording was made with")
    assert _inputs_changed(root, "no-such-run") == ""


def test_report_out_a_folder_writes_the_report_in_it(op_copy, script, cli, tmp_path) -> None:
    op = _at_design_gate(op_copy, script, cli)
    folder = tmp_path / "reports"
    folder.mkdir()
    out = cli("report", str(op), "--out", str(folder))
    (written,) = folder.iterdir()
    assert out.returncode == 0 and written.name.startswith("affine-run-") and written.suffix == ".html", out.stderr
    assert f"wrote {written}" in out.stdout

    # `show --gate` of a run that waits at no gate says what to look at instead (the copy, edited: it is what
    # answers while it names the latest checkpoint)
    (copy,) = (op / ".forge").glob("run-*/status.json")
    data = json.loads(copy.read_text())
    data["values"]["outcome"], data["interrupts"] = "delivered", []
    copy.write_text(json.dumps(data))
    out = cli("show", str(op), "--gate")
    assert out.returncode == 1 and out.stderr.rstrip().endswith(
        f"is not waiting at a gate: it has finished (delivered); `python -m orchestrator show {op} --last` shows its "
        "last verify report"), out.stderr


def test_a_prefix_of_an_option_is_not_taken_for_it(tmp_path, capsys) -> None:
    """``approve op --not hi`` recorded a decision with the note "hi": argparse took the unique prefix ``--not`` for
    ``--note``. Options are spelled out; the prefix is an unknown option with its suggestion, and nothing is done."""
    from orchestrator.cli.main import main

    for argv, wanted in ((["approve", str(tmp_path), "--not", "hi"], "--note"),
                         (["status", str(tmp_path), "--verb"], "--verbose")):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "unrecognized option" in err and f"did you mean '{wanted}'" in err, err
    assert not (tmp_path / ".forge").exists()  # no decision, no run state
