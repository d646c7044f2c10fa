"""UX audit of session 48 (a fresh clone, used as a newcomer and a demanding user would, in a terminal).

Each test is a surprise the audit met, with the command that showed it:

- ``intake sliu/`` said ``is not a directory`` of a folder that does not exist (s47 open item);
- ``intake silu/SPEC.md`` / ``run silu/golden.py`` (tab completion stops at a file) did not name the op dir meant;
- ``run op --agents scripted:empty.yaml`` (an empty script, ``{}``, only comments, ``design: []``) started a run,
  wrote ``.forge/`` and the audit repository and blocked at the design (s47 open item).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.cli.main import main


def _op(tmp_path: Path, name: str = "silu") -> Path:
    op = tmp_path / name
    op.mkdir()
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


@pytest.mark.parametrize("command", ["intake", "run"])
def test_a_file_of_the_op_dir_names_the_op_dir(tmp_path, capsys, command):
    op = _op(tmp_path)
    argv = [command, str(op / "SPEC.md")] + (["--no-golden"] if command == "intake" else [])
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "is a file, not" in err and f"did you mean '{op}'?" in err, err
    assert not (op / ".forge").exists()


def test_a_file_elsewhere_is_not_given_an_op_dir_hint(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("x", encoding="utf-8")
    assert main(["intake", str(tmp_path / "notes.txt"), "--no-golden"]) == 1
    err = capsys.readouterr().err
    assert "is a file, not a directory" in err and "did you mean" not in err, err


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
    for command in ("run", "replay"):
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
