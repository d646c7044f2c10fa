"""``runtime.verify`` / ``runtime.bisect`` (and ``orchestrator verify``) name the closest op dir or kernel file.

UX audit s48/s49: ``verify slu k.py`` said only "does not exist" (the orchestrator's commands name the closest
folder since s44), ``bisect nodir k.py`` named the folder twice ("invalid op directory nodir: nodir: does not
exist"), and ``bisect silu silu`` said "stage file not found" for a directory. Everything here is refused before a
kernel or golden runs (exit 2), so the tests are cheap.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runtime.bisect.__main__ import main as bisect_main
from runtime.cli_io import kernel_path_problem
from runtime.verify.__main__ import main as verify_main


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    op = tmp_path / "silu"
    (op / "modules").mkdir(parents=True)
    for name in ("SPEC.md", "golden.py", "silu_impl.py", "modules/silu_module1_impl.py",
                 "modules/silu_module12_impl.py"):
        (op / name).write_text("x = 1\n")
    (tmp_path / "unrelated.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


CASES = [  # (op_dir, target, what the message says)
    ("slu", "k.py", "operator directory slu does not exist; did you mean 'silu'?"),
    ("nodir", "k.py", "operator directory nodir does not exist"),
    ("silu/SPEC.md", "k.py", "operator directory silu/SPEC.md is a file, not a directory; did you mean 'silu'?"),
    ("silu", "silu", "silu is a directory: give the kernel's .py file (a stage file or <op>_impl.py inside silu); "
                     "did you mean 'silu/silu_impl.py'?"),
    ("silu", "modules", "modules is a directory: give the kernel's .py file (a stage file or <op>_impl.py inside "
                        "silu); did you mean 'silu/modules/silu_module12_impl.py'?"),
    ("silu", "silu_imp.py", "silu_imp.py does not exist (give a path inside silu); did you mean 'silu/silu_impl.py'?"),
    ("silu", "modules/silu_modul1_impl.py", "did you mean 'silu/modules/silu_module1_impl.py'?"),
    ("silu", "silu/silu_impl", "did you mean 'silu/silu_impl.py'?"),
]


@pytest.mark.parametrize(("op_dir", "target", "said"), CASES)
def test_the_message_names_the_closest_path(here: Path, op_dir: str, target: str, said: str) -> None:
    problem = kernel_path_problem(op_dir, target)
    assert problem is not None and said in problem, problem
    assert f"{op_dir}: {op_dir}" not in problem and "\n" not in problem, problem


def test_a_file_outside_the_op_dir_is_never_suggested(here: Path) -> None:
    problem = kernel_path_problem("silu", "unrelate.py")
    assert problem is not None and "unrelated" not in problem and "did you mean" not in problem


def test_an_existing_kernel_is_no_problem(here: Path) -> None:
    assert kernel_path_problem("silu", "silu_impl.py") is None
    assert kernel_path_problem("silu", "silu/modules/silu_module1_impl.py") is None
    assert kernel_path_problem(os.fspath(here / "silu"), "modules/silu_module12_impl.py") is None


@pytest.mark.parametrize(("argv", "said"), [
    (["slu", "k.py"], "error: operator directory slu does not exist; did you mean 'silu'?"),
    (["silu", "silu"], "error: stage file silu is a directory"),
    (["silu", "silu_imp.py"], "error: stage file silu_imp.py does not exist (give a path inside silu); did you mean"),
])
def test_bisect_says_it_once_exit_2(here: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                    said: str) -> None:
    assert bisect_main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1 and "not found" not in err, err
    assert "slu: " not in err  # the folder named once, not "invalid op directory slu: slu: ..."


@pytest.mark.parametrize("prog", [None, "python -m orchestrator verify"])
def test_verify_names_the_closest_path_as_typed(here: Path, capsys: pytest.CaptureFixture[str],
                                                prog: str | None) -> None:
    assert verify_main(["slu", "k.py"], prog=prog) == 2
    assert capsys.readouterr().err == f"{prog or 'runtime.verify'}: operator directory slu does not exist; did you " \
                                      f"mean 'silu'?\n"
    assert verify_main(["silu", "modules/silu_module1_imp.py"], prog=prog) == 2
    assert "did you mean 'silu/modules/silu_module1_impl.py'?" in capsys.readouterr().err
