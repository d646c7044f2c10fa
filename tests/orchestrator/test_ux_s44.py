"""UX audit of session 44 (a fresh clone, the README, a terminal; a fake OpenAI server and the local model).

Each test is a surprise the audit met, with the command that showed it:

- ``resume op --model gpt-nonexistent`` on a server without that model (HTTP 404 ``model_not_found``) said
  "fix the endpoint" - the endpoint was fine, the model name was the fix;
- ``replay op`` of a recording with a torn ``events.jsonl`` line failed only after the intake (and printed
  ``events.jsonl:16: : Invalid JSON``); with a blob missing it failed minutes in as ``internal error: TraceError``
  and advised a ``resume`` that fails the same way;
- ``resume op < /dev/null`` (piped, waiting at a gate) printed ``record a decision with `python -m`` and
  ``orchestrator approve op``` on two lines: the run's message was wrapped at the console width;
- EOF at the interactive gate prompt printed the summary table on the prompt's own line, saying nothing;
- ``campaign run SUITE --out D --gatse auto`` named ``campaign`` and suggested nothing;
- ``--version`` was "the following arguments are required: COMMAND";
- ``resume op`` after a Ctrl-C during intake said only "no run found"; a second ``run`` on a busy op dir said
  "stop it first" without how; ``prune`` of a folder that never ran said "pruned 0 checkpoint(s) in 0 run(s)";
- a model that refused ("I'm sorry, but I can't help with that.") reached the blocked gate as "the answer
  contains no JSON object": what it said was only in the trace's blobs.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from agents_fake_openai import FakeOpenAIServer, Reply, error  # noqa: E402
from orch_support import FIX  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("local_endpoint_env")


def _model_op(op_copy, base_url: str) -> Path:
    """affine with the design provided (no designer call), on the fake server, no backoff."""
    op = op_copy("affine")
    for name in ("DESIGN.md", "module_interfaces.yaml"):
        shutil.copy(FIX / "agents" / "affine" / name, op / name)
    (op / "forge.toml").write_text(f'[models]\ndefault = "fake-model"\n[llm]\nbase_url = "{base_url}"\n'
                                   "backoff_s = 0.0\nmax_tool_rounds = 0\nmax_retries = 0\n")
    return op


# ------------------------------------------------------------------------------------ the endpoint's answers


def test_a_model_the_server_lacks_is_named_as_the_fix(op_copy, cli) -> None:
    def reply(body: dict) -> Reply:
        return Reply(404, json.dumps({"error": {"message": f"The model `{body['model']}` does not exist",
                                                "type": "invalid_request_error", "code": "model_not_found"}}))

    with FakeOpenAIServer(reply) as server:
        op = _model_op(op_copy, server.base_url)
        out = cli("run", str(op), "--approve", "auto")
    err = " ".join(out.stderr.split())
    assert out.returncode == 1 and "Traceback" not in err and "internal error" not in err
    assert "The model `fake-model` does not exist" in err
    assert "the endpoint does not serve that model" in err and "fix the endpoint" not in err
    assert f"resume {op} --model M" in err and f"curl {server.base_url}/models" in err


def test_a_404_without_a_model_points_at_the_base_urls_path(op_copy, cli) -> None:
    with FakeOpenAIServer(lambda body: error(404, "Not Found")) as server:
        op = _model_op(op_copy, server.base_url)
        out = cli("run", str(op), "--approve", "auto")
    err = " ".join(out.stderr.split())
    assert out.returncode == 1 and "does not serve that model" not in err
    assert "usually ends in /v1" in err and f"resume {op}" in err


def test_a_refusal_is_quoted_where_the_run_stops(tmp_path: Path) -> None:
    """The role's error carries the start of the last answer (one line), so the blocked gate, status and
    MEMORY.md show what the model said; an empty answer is not quoted twice."""
    from agents.config import load_config
    from agents.contracts import AgentError, ImplementContext
    from agents.llm import ScriptedProvider
    from agents.roles import LLMAgents
    from agents.trace import Trace

    ctx = ImplementContext(op_dir=".", op_name="silu", module=1, module_count=1, level="L0",
                           target_file="silu_impl.py", wrapper_name="silu_wrapper", spec_md="", golden_py="",
                           design_md="", module_interfaces_yaml="")
    cfg = load_config(tmp_path, env={"FORGE_MODEL": "scripted"}, overrides={"max_repairs": 5})
    for answers, expected in (
        (["I'm sorry, but I can't help with that."] * 2,
         '(its last answer: "I\'m sorry, but I can\'t help with that.")'),
        (["word " * 200] * 2, '(its last answer: "' + ("word " * 20)[:97].strip()),
    ):
        provider = ScriptedProvider(answers)
        agents = LLMAgents(cfg, Trace(None, run_id="t"), op_dir=tmp_path, provider_factory=lambda p=provider: p)
        with pytest.raises(AgentError) as info:
            agents.implement(ctx)
        reason = info.value.reason
        assert info.value.stop and "contains no JSON object" in reason and expected in reason, reason
        assert "\n" not in reason and len(reason) < 300
    provider = ScriptedProvider(["", ""])
    agents = LLMAgents(cfg, Trace(None, run_id="t"), op_dir=tmp_path, provider_factory=lambda: provider)
    with pytest.raises(AgentError) as info:
        agents.implement(ctx)
    assert "empty" in info.value.reason and "last answer" not in info.value.reason


# ------------------------------------------------------------------------------------------ damaged replays


def _recording(tmp_path: Path) -> tuple[Path, Path]:
    op = tmp_path / "silu"
    op.mkdir()
    for name in ("SPEC.md", "golden.py"):
        shutil.copy(ROOT / "workspace" / "silu" / name, op / name)
    shutil.copytree(ROOT / "workspace" / "silu" / "traces", op / "traces")
    return op, op / "traces" / "default"


@pytest.mark.parametrize("damage", ["torn line", "missing blob"])
def test_a_damaged_recording_is_refused_before_anything_runs(tmp_path, cli, monkeypatch, damage) -> None:
    import orchestrator.api as api

    op, trace = _recording(tmp_path)
    events = trace / "events.jsonl"
    if damage == "torn line":
        lines = events.read_text(encoding="utf-8").splitlines()
        lines[5] = lines[5][: len(lines[5]) // 2]
        events.write_text("\n".join(lines) + "\n", encoding="utf-8")
        expected = "events.jsonl:6: Invalid JSON"
    else:
        blob = sorted((trace / "blobs").iterdir())[0]
        blob.unlink()
        expected = f"missing blob {blob.name}"
    intakes: list[Path] = []
    monkeypatch.setattr(api, "check_op_dir", lambda root, **_: intakes.append(root) or "silu")
    out = cli("replay", str(op))
    err = out.stderr
    assert out.returncode == 1 and "Traceback" not in err and "internal error" not in err
    assert "the recording is damaged (1 problem(s))" in err and expected in err and ": : " not in err
    assert "nothing was run" in err and "git checkout --" in err
    assert intakes == [] and not list(op.glob(".forge/run-*"))


def test_a_recording_damaged_during_a_run_is_not_an_internal_error(tmp_path, capsys) -> None:
    from agents.trace import TraceError
    from orchestrator.cli._common import drive

    def start():
        raise TraceError(f"{tmp_path}/traces/default: missing blob abc")

    assert drive(str(tmp_path), start) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "a recorded trace is damaged" in err and "missing blob abc" in err and "internal error" not in err
    assert f"run {tmp_path}" in err  # no run there yet: the next step is `run`, not `resume`


# ------------------------------------------------------------------------------------------- the terminal


def test_the_runs_message_names_a_command_on_one_line(op_copy, script, cli, monkeypatch) -> None:
    """A piped resume at a gate (no one to ask) at 40 columns: the notice keeps its command whole."""
    from orchestrator.cli import _common

    op = op_copy("affine")
    agents = f"scripted:{script('affine', implement={1: ['impl.py']})}"
    assert cli("run", str(op), "--approve", "stop", "--agents", agents).returncode == 0
    for con in (_common.console, _common.err_console):
        monkeypatch.setattr(con, "_width", 40)
    out = cli("resume", str(op), "--approve", "stop")
    assert out.returncode == 0, out.stderr
    line = next(x for x in out.stdout.splitlines() if x.startswith("still waiting at gate"))
    assert f"`python -m orchestrator approve {op}`" in line or f"approve {op}`" in line, out.stdout


def test_end_of_input_at_the_gate_prompt_says_so_on_its_own_line() -> None:
    import io

    from rich.console import Console

    from orchestrator.gates import GateRequest
    from orchestrator.ui.progress import ask

    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=False)

    def closed(*_a, **_k):
        console.file.write("decision (a = approve, r = reject) > ")
        raise EOFError

    console.input = closed  # type: ignore[method-assign]
    assert ask(console)(GateRequest(gate="design", title="Approve the design?")) is None
    text = buf.getvalue()
    assert "> \nend of input: no decision recorded; the run waits at this gate\n" in text


# -------------------------------------------------------------------------------------- the command line


def test_a_mistyped_option_of_a_nested_command_is_named_with_its_command(capsys) -> None:
    from orchestrator.cli.main import main

    assert main(["campaign", "run", "suite", "--out", "d", "--gatse", "auto"]) == 2
    err = capsys.readouterr().err
    assert "campaign run: error: unrecognized option '--gatse'; did you mean '--gates'?" in err
    assert "`python -m orchestrator campaign run --help`" in err
    assert main(["approve", "op", "--choise", "hint"]) == 2  # one level, as before
    assert "approve: error: unrecognized option '--choise'; did you mean '--choice'?" in capsys.readouterr().err


def test_version(capsys) -> None:
    from orchestrator.cli.main import main

    with pytest.raises(SystemExit) as info:  # argparse ends --version as it ends --help
        main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out.startswith("PTO Forge ")


def test_the_next_step_after_nothing_to_resume_a_busy_op_dir_and_an_empty_prune(tmp_path, cli) -> None:
    from orchestrator.store.runs import _in_progress

    out = cli("resume", str(tmp_path))
    assert out.returncode == 1 and f"start a run with `python -m orchestrator run {tmp_path}`" in out.stderr
    busy = _in_progress(tmp_path, {"run_id": "r1", "pid": 4242})
    assert "stop it first (Ctrl-C in its terminal, or `kill 4242`: it stays resumable)" in busy
    out = cli("prune", str(tmp_path))
    assert out.returncode == 0 and out.stdout.strip() == f"nothing to prune: no run under {tmp_path}/.forge"


def test_a_budget_without_raise_budget_is_refused_not_dropped(tmp_path, cli) -> None:
    """``approve op --budget 3`` at the design gate recorded a plain approval and said nothing of the 3."""
    out = cli("approve", str(tmp_path), "--budget", "3")
    assert out.returncode == 2 and "--choice raise_budget" in out.stderr and "nothing was recorded" in out.stderr


def test_ctrl_c_at_the_gate_prompt_ends_the_prompts_line() -> None:
    """The run still stops resumably (the interrupt goes on); what is printed next starts on a line of its own."""
    import io

    from rich.console import Console

    from orchestrator.gates import GateRequest
    from orchestrator.ui.progress import ask

    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=False)

    def interrupted(*_a, **_k):
        console.file.write("decision (a = approve, r = reject) > ")
        raise KeyboardInterrupt

    console.input = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        ask(console)(GateRequest(gate="design", title="Approve the design?"))
    assert buf.getvalue().endswith("> \n")


def test_show_before_anything_was_verified_points_at_status(op_copy, script, cli) -> None:
    """``show op`` while the run waits at its design gate said "run it first"."""
    op = op_copy("affine")
    assert cli("run", str(op), "--approve", "stop", "--agents",
               f"scripted:{script('affine', implement={1: ['impl.py']})}").returncode == 0
    out = cli("show", str(op), "--last")
    assert out.returncode == 1 and "run it first" not in out.stderr
    assert "its run has verified nothing yet" in out.stderr and f"status {op}" in out.stderr


def test_a_narrow_terminal_gets_the_summary_as_lines_not_chopped_words(op_copy, script, cli) -> None:
    """``COLUMNS=40 status op``: the six-column table cut ``module`` into ``modu|le`` and ``0/10`` into ``0/1|0``;
    at 80 columns the table is unchanged."""
    import io

    from rich.console import Console

    from orchestrator import api
    from orchestrator.ui.progress import summary_table

    op = op_copy("affine")
    assert cli("run", str(op), "--approve", "stop", "--agents",
               f"scripted:{script('affine', implement={1: ['impl.py']})}").returncode == 0
    result = api.status(op)
    narrow, wide = io.StringIO(), io.StringIO()
    Console(file=narrow, width=40).print(summary_table(result))
    Console(file=wide, width=80).print(summary_table(result))
    assert [x.rstrip() for x in narrow.getvalue().splitlines()[1:]] == ["  M1 affine: pending, 0/10 attempts"]
    assert "┃ module ┃" in wide.getvalue() and "0/10" in wide.getvalue()


def test_a_campaign_where_no_sample_could_run_says_why_and_what_next(tmp_path, cli) -> None:
    """``campaign run SUITE --out D`` with no model configured: ``failures: no agent 1``, exit 0, the reason only
    in results.jsonl - and the same command with ``--model`` into D is refused (D keeps its options). Now it says
    why and what next, and exits 1 (nothing was measured)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copytree(FIX / "ops" / "affine", suite / "affine")
    out = cli("campaign", "run", str(suite), "--out", str(tmp_path / "c"), "--samples", "1", "--sequential")
    text = " ".join(out.stdout.split())
    assert out.returncode == 1 and "failures: no agent 1" in text, out.stdout + out.stderr
    assert "no sample could run: no model configured" in text and "--model M" in text and "a new --out" in text


def test_a_mistyped_op_dir_names_the_closest_folder(tmp_path, cli) -> None:
    (tmp_path / "silu").mkdir()
    out = cli("status", str(tmp_path / "slu"))
    assert out.returncode == 1 and f"did you mean '{tmp_path / 'silu'}'?" in out.stderr
    out = cli("status", str(tmp_path / "zzzz"))
    assert out.returncode == 1 and "did you mean" not in out.stderr
    out = cli("intake", str(tmp_path / "slu"), "--no-golden")  # intake's message comes from runtime.opdir
    assert out.returncode == 1 and f"did you mean '{tmp_path / 'silu'}'?" in " ".join(out.stderr.split()), out.stderr
    out = cli("intake", str(tmp_path / "silu"), "--no-golden")  # exists, but no SPEC.md: no suggestion
    assert out.returncode == 1 and "did you mean" not in out.stdout + out.stderr


def test_run_of_an_invalid_op_dir_does_not_announce_its_agents_first(op_copy, cli) -> None:
    """``run badyaml/`` (a model configured) printed ``agents: model fake-model at ...`` and then that SPEC.md was
    invalid: the announcement belongs to a run that can start."""
    op = _model_op(op_copy, "http://127.0.0.1:9/v1")
    (op / "SPEC.md").write_text("---\nop_name: [unclosed\n---\n", encoding="utf-8")
    out = cli("run", str(op), "--approve", "stop")
    assert out.returncode == 1 and "SPEC.md" in out.stderr, out.stdout + out.stderr
    assert "agents:" not in out.stdout + out.stderr
