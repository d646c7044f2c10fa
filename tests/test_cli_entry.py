"""The command line answers --help everywhere and reports unbuilt capabilities clearly."""

from __future__ import annotations

import subprocess
import sys

import pytest

from orchestrator.cli.main import SUBCOMMANDS, build_parser


def test_every_subcommand_is_registered() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert set(SUBCOMMANDS) <= set(sub.choices)


@pytest.mark.slow  # one CLI process per subcommand
@pytest.mark.parametrize("command", sorted(set(SUBCOMMANDS) - {"verify", "lint"}))
def test_help_for_each_subcommand(command: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", command, "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" in proc.stdout


def test_top_level_help() -> None:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    for command in SUBCOMMANDS:
        assert command in proc.stdout


def test_unknown_command_is_misuse() -> None:
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "frobnicate"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2


@pytest.mark.parametrize(("command", "module"), [("verify", "runtime.verify"), ("lint", "runtime.lint")])
def test_pass_through_commands_show_the_runtime_help(command: str, module: str) -> None:
    """The runtime command's help, naming the command typed (UX audit s47: it said ``python -m runtime.verify``)."""
    proc = subprocess.run([sys.executable, "-m", "orchestrator", command, "--help"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"usage: python -m orchestrator {command} " in proc.stdout and module not in proc.stdout


def test_building_the_command_line_loads_no_pipeline() -> None:
    """``--help`` (and every command's argument parsing) builds the parser, which imports each subcommand module:
    one of them importing the progress display at its top pulled in LangGraph and the whole pipeline, and
    `python -m orchestrator --help` took 4-8 s (session 21). Commands import what they run when they run."""
    code = ("import sys; from orchestrator.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in ('langgraph', 'orchestrator.ui.progress', 'runtime.opdir', 'torch') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]", proc.stdout
