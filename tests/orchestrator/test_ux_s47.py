"""UX audit of session 47 (a fresh clone, used as a user would in a terminal: mistakes, pipes, files).

Each test is a surprise the audit met, with the command that showed it:

- ``orchestrator verify --help`` said ``usage: python -m runtime.verify``; ``verify --jsno``, ``lint --stge`` and
  ``lint --stage modul`` suggested nothing, and ``verify --req`` was taken for ``--require-sandbox`` (argparse
  takes a unique prefix), where every other command names the closest option and refuses a prefix (s45, s46);
- ``verify op kernel > report.txt`` broke case names at 80 columns (``B16_D32-fp32-s0-no`` / ``rmal``), and every
  ``--help`` (``verify``, ``lint``, the orchestrator's own) was folded at 80 columns in a pipe;
- ``author /tmp/file`` printed ``[Errno 20] Not a directory``, ``author empty_dir`` ``[Errno 2]``, and
  ``author op --name ../../x`` wrote the trace outside ``traces/``;
- ``campaign report FILE`` and ``campaign run ... --out FILE``: ``[Errno 20] Not a directory``;
- ``intake`` of a golden returning the wrong shape printed the same refusal once per case (12 lines for silu);
- a run blocked at its design printed the summary table's headers over no row.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from orchestrator.cli.main import main


@pytest.fixture
def piped(monkeypatch):
    """stdout is not a terminal (capsys) and no COLUMNS: what ``cmd | less`` or ``cmd > file`` sees."""
    monkeypatch.delenv("COLUMNS", raising=False)


# ------------------------------------------------------------------------------ verify / lint through the CLI


@pytest.mark.parametrize(("argv", "said"), [
    (["verify", "--jsno", "a", "b"], "python -m orchestrator verify: unrecognized arguments: --jsno; "
                                     "did you mean '--json'?"),
    (["verify", "--req", "a", "b"], "python -m orchestrator verify: unrecognized arguments: --req"),
    (["lint", "--stge", "x"], "python -m orchestrator lint: unrecognized arguments: --stge; did you mean '--stage'?"),
    (["lint", "--stage", "modul", "x"], "invalid choice: 'modul' (choose from 'auto', 'design', 'module', 'final', "
                                        "'performance'); did you mean 'module'?"),
])
def test_verify_and_lint_name_the_command_typed_and_the_closest_option(argv, said, capsys) -> None:
    """One line naming the command the user typed and the option meant, exit 2; a prefix of an option is not it."""
    with pytest.raises(SystemExit) as ended:
        main(argv)
    err = capsys.readouterr().err
    assert ended.value.code == 2 and said in err and "runtime." not in err, err


def test_the_runtime_commands_keep_their_own_name(capsys) -> None:
    from runtime.lint.__main__ import main as lint_main
    from runtime.verify.__main__ import main as verify_main

    with pytest.raises(SystemExit):
        verify_main(["--jsno", "a", "b"])
    assert "runtime.verify: unrecognized arguments: --jsno; did you mean '--json'?" in capsys.readouterr().err
    assert lint_main([]) == 2 and capsys.readouterr().err.startswith("runtime.lint: no paths given")


def test_verify_messages_name_the_command_typed(tmp_path, capsys) -> None:
    assert main(["verify", str(tmp_path / "nope"), "k.py"]) == 2
    assert capsys.readouterr().err.startswith("python -m orchestrator verify: operator directory ")


@pytest.mark.parametrize("argv", [["verify", "--help"], ["lint", "--help"], ["--help"], ["status", "--help"]])
def test_help_is_not_wrapped_in_a_pipe(argv, piped, capsys) -> None:
    """Piped, each option and command is one line with its whole help; ``COLUMNS`` still wraps it."""
    with pytest.raises(SystemExit):
        main(argv)
    out = capsys.readouterr().out
    usage = out.splitlines()[0]
    assert usage.startswith(f"usage: python -m orchestrator {argv[0] if argv[0] != '--help' else ''}".rstrip())
    assert not out.splitlines()[1].startswith(" "), out  # the usage is not continued on a second line
    if argv == ["--help"]:
        assert "    run          develop the operator in op_dir (design -> modules -> final kernel)\n" in out
    if argv[0] == "verify":
        assert usage.endswith("op_dir target") and "--unseen-seed N       seed of the unseen cases and call order " \
            "(default: a fresh one, printed in the report); give the report's seed" in out


def test_help_follows_columns(monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    assert max(len(line) for line in capsys.readouterr().out.splitlines()) <= 60


def test_a_verify_report_to_a_file_is_one_line_per_case(piped) -> None:
    """The console verify prints with is as wide as the content piped: no case name broken, no 1000-column box."""
    from runtime.cli_io import PIPED_WIDTH, output_console
    from runtime.verify._render import render_report
    from runtime.verify._report import CaseReport, LeafResult, VerifyReport

    name = "unseen12-B4097_N3_K2048_extra_long_name-fp32-s1234567-normal"
    case = CaseReport(name=name, dims={"B": 4097}, dtype="fp32", seed=1234567, band="normal", tail=True,
                      unseen=True, status="pass", atol=1e-5, rtol=1e-5,
                      leaves=[LeafResult(path="output[0]", all_close=True, max_diff=0.0,
                                         out_of_tolerance_ratio=0.0, atol=1e-5, rtol=1e-5)])
    report = VerifyReport(target="k_impl.py", verdict="PASS", cases=[case], unseen_seed=5103789120794387331)
    console = output_console()
    assert console.width == PIPED_WIDTH and not console.is_terminal
    console.file = io.StringIO()
    console.print(render_report(report, fit=True))
    lines = console.file.getvalue().splitlines()
    assert any(name in line for line in lines), lines
    assert any("verify again on them with --unseen-seed 5103789120794387331)" in line for line in lines)
    assert max(len(line) for line in lines) < 200  # the panel fits its content


# ---------------------------------------------------------------------------------------------------- author


def test_author_of_a_file_a_folder_without_script_or_a_path_as_name(tmp_path, capsys) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["author", str(afile)]) == 1
    assert "is a file, not an operator directory" in capsys.readouterr().err
    assert main(["author", str(tmp_path / "emptx")]) == 1
    assert f"did you mean '{empty}'?" in capsys.readouterr().err
    assert main(["author", str(empty)]) == 1
    err = capsys.readouterr().err
    assert "no authoring script: " in err and "authoring/script.yaml does not exist" in err and "--script FILE" in err
    assert main(["author", str(empty), "--script", str(empty)]) == 1
    assert f"{empty} is a folder" in capsys.readouterr().err
    assert main(["author", str(empty), "--name", "../../x"]) == 2
    assert "--name '../../x' is not a trace name" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "empty"] and not any(empty.iterdir())


def test_an_authoring_script_that_is_not_text(tmp_path, capsys) -> None:
    (tmp_path / "authoring").mkdir()
    (tmp_path / "authoring" / "script.yaml").write_bytes(b"design: \xff\xfe\n")
    assert main(["author", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "not UTF-8 text" in err and "Errno" not in err and "Traceback" not in err


# -------------------------------------------------------------------------------------------------- campaign


def test_a_file_given_as_the_campaign_directory(tmp_path, capsys) -> None:
    afile = tmp_path / "results.txt"
    afile.write_text("mine\n")
    said = f"{afile} is a file, not a campaign directory"
    assert main(["campaign", "report", str(afile)]) == 1
    assert said in capsys.readouterr().err
    fixtures = Path(__file__).resolve().parent / "fixtures"
    assert main(["campaign", "run", str(fixtures / "ops" / "sqrecip"), "--out", str(afile),
                 "--agents", f"scripted:{fixtures / 'agents' / 'sqrecip' / 'script.yaml'}"]) == 1
    err = capsys.readouterr().err
    assert said in err and "Errno" not in err and afile.read_text() == "mine\n"


# ---------------------------------------------------------------------------------------------------- intake


def test_intake_shows_one_mistake_repeated_per_case_once(piped, capsys) -> None:
    from orchestrator.cli.intake import SAME_FIELD_SHOWN, _render_problems
    from runtime.opdir import IntakeReport, Problem

    problems = [Problem(file="golden.py", line=1, field="inventory", message="no inventory table")]
    problems += [Problem(file="golden.py", line=2, field="outputs.y",
                         message=f"case c{i}: golden returned fp32[64, 3], SPEC.md declares fp32[64, 256]")
                 for i in range(12)]
    _render_problems(IntakeReport(op_dir="op", ok=False, problems=problems))
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "intake failed: op: 13 problems" and "no inventory table" in err[1]
    shown = [line for line in err if "golden returned" in line]
    assert [line.split("case ")[1][:3] for line in shown] == [f"c{i}:" for i in range(SAME_FIELD_SHOWN)]
    assert err[-1] == f"  golden.py:2: outputs.y: ... and {12 - SAME_FIELD_SHOWN} more like these (`--json` lists " \
                      "every one)"
    # one more than the shown number is shown whole (a "1 more" line would save nothing)
    _render_problems(IntakeReport(op_dir="op", ok=False, problems=problems[:SAME_FIELD_SHOWN + 2]))
    assert "more like these" not in capsys.readouterr().err


# ------------------------------------------------------------------------------------------- the run summary


def test_a_run_without_a_checked_design_has_no_empty_table() -> None:
    from rich.console import Console

    from orchestrator.store.results import ModuleSummary, RunResult
    from orchestrator.ui.summary import NO_MODULES, summary_table

    out = io.StringIO()
    Console(file=out, width=100).print(summary_table(RunResult(run_id="r1", status="waiting")))
    assert out.getvalue().splitlines() == ["run r1: waiting", f"  {NO_MODULES}"]
    out = io.StringIO()
    module = ModuleSummary(id=1, name="square", status="pending", attempts=0, budget=10)
    Console(file=out, width=100).print(summary_table(RunResult(run_id="r1", status="waiting", modules=[module])))
    assert "┃ module ┃" in out.getvalue() and NO_MODULES not in out.getvalue()


def test_docs_say_what_the_commands_do(tmp_path) -> None:
    """docs/cli.md states the rules these tests hold the commands to."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "`verify` and `lint` name themselves as typed" in text and "`--help` too" in text


# ---------------------------------------------------------------------------------------------- agent scripts


def test_a_misspelled_key_of_an_agent_script_is_refused_before_the_run(tmp_path, capsys) -> None:
    """``desing:`` was ignored: the run started, called the designer twice and blocked at its gate ("the script
    has no design entries"). Now refused with the key meant, nothing written; unknown keys far from every known
    one (a script's own notes) and an authoring script's keys stay accepted."""
    from orchestrator.adapters.script_check import script_problem

    op = tmp_path / "op"
    op.mkdir()
    for name, text, said in (("a.yaml", "desing: []\n", "'desing'; did you mean 'design'?"),
                             ("b.yaml", "design: []\nimplements: {}\n", "did you mean 'implement'?")):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        assert said in (script_problem(f"scripted:{path}") or "")
        assert main(["run", str(op), "--agents", f"scripted:{path}"]) == 2
        assert said in capsys.readouterr().err and not any(op.iterdir())
    mine = tmp_path / "notes.yaml"
    (tmp_path / "k.py").write_text("x = 1\n", encoding="utf-8")
    mine.write_text("implement: {1: [k.py]}\nmy_notes: keep\nproducer: me\nverdicts: {}\ndecisions: []\n", encoding="utf-8")
    assert script_problem(f"scripted:{mine}") is None


# ------------------------------------------------------------------------------------------ the gate prompt


@pytest.mark.parametrize(("gate", "typed", "meant", "then", "decision"), [
    ("design", "aprove", "approve", "a", "approve"),
    ("module", "REJCT", "reject", "r", "reject"),
    ("blocked", "rollbak", "rollback", "3", "rollback"),
    ("blocked", "abrt", "abort", "2", "raise_budget"),
])
def test_a_mistyped_gate_answer_names_the_one_meant_and_is_not_taken(gate, typed, meant, then, decision) -> None:
    """``'aprove' is not an answer at this gate`` named none; now it says ``did you mean 'approve'?`` and asks
    again: a decision is recorded only as typed."""
    from rich.console import Console

    from orchestrator.gates import GateRequest
    from orchestrator.ui.progress import ask

    answers = iter([typed, then, *(["a note"] if decision == "reject" else ["", ""])])

    class Typed(Console):
        def input(self, prompt: object = "", **kwargs: object) -> str:  # type: ignore[override]
            self.print(prompt, end="")
            return next(answers)

    out = io.StringIO()
    prompt = ask(Typed(file=out, width=200, color_system=None))
    got = prompt(GateRequest(gate=gate, title="t"))
    text = out.getvalue()
    assert got is not None and got.decision == decision, text
    assert f"'{typed}' is not an answer at this gate; did you mean '{meant}'? type one of: " in text


# ---------------------------------------------------------------------------------------------------- import


def test_import_of_a_mistyped_source_names_the_closest_file_or_folder(tmp_path, capsys) -> None:
    """``import level1/19_ReL.py relu/`` said "give a gym op folder or its test_<op>.py" of a KernelBench task file
    and suggested nothing; now the closest entry next to it, file or folder, and nothing is written."""
    (tmp_path / "19_ReLU.py").write_text("# a task file\n")
    (tmp_path / "rms_norm").mkdir()
    for typed, meant in (("19_ReL.py", "19_ReLU.py"), ("rms_nrm", "rms_norm")):
        assert main(["import", str(tmp_path / typed), str(tmp_path / "out")]) == 1
        err = capsys.readouterr().err
        assert f"{tmp_path / typed} does not exist (give a gym op folder, its test_<op>.py or a KernelBench task " \
               f".py); did you mean '{tmp_path / meant}'?" in err, err
    assert not (tmp_path / "out").exists()


def test_bisect_names_the_closest_option_and_takes_no_prefix(capsys) -> None:
    from runtime.bisect.__main__ import main as bisect_main

    with pytest.raises(SystemExit) as ended:
        bisect_main(["--jsno", "op", "k.py"])
    assert ended.value.code == 2
    assert "runtime.bisect: unrecognized arguments: --jsno; did you mean '--json'?" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bisect_main(["--ca", "c1", "op", "k.py"])  # argparse took it for --case
    assert "unrecognized arguments: --ca" in capsys.readouterr().err


# ------------------------------------------------------------------------------------- a golden.py with a BOM


def test_a_golden_saved_with_a_byte_order_mark_runs_as_python_runs_it(tmp_path) -> None:
    """An editor's "UTF-8 with signature" golden.py was refused ("syntax error: invalid non-printable character
    U+FEFF") while ``python golden.py`` runs it; SPEC.md, kernels and lint already dropped the mark. Checked with
    golden run (its own process) and the contract read statically; the same file without the mark is unchanged."""
    import shutil

    from runtime.opdir import intake, load_op_dir

    op = tmp_path / "sqrecip"
    shutil.copytree(Path(__file__).resolve().parent / "fixtures" / "ops" / "sqrecip", op)
    plain = (op / "golden.py").read_bytes()
    (op / "golden.py").write_bytes(b"\xef\xbb\xbf" + plain)
    report = intake(op, intermediates=False)
    assert report.ok, report.problems
    assert load_op_dir(op).golden_source == plain.decode("utf-8")
