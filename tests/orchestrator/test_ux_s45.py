"""UX audit of session 45 (a fresh clone, a terminal, a fake OpenAI server; the three items s44 left open).

Each test is a surprise the audit met, with the command that showed it:

- ``run op --model gpt-typo`` ran intake (golden.py on every case), saved the name in ``run.json`` and failed at
  the first model call; ``resume op --model gpt-typo2`` saved its typo over it the same way;
- ``run op --base-url http://no-such-host.invalid/v1`` (or a port where nothing listens) retried 4 times
  (~15 s of backoff, 26 s in all) to say ``Connection error.``;
- ``status op`` took ~2.3 s of CPU before printing anything: it imported LangGraph, the nodes, the agents and
  the verifier to read one checkpoint; ``show op --last`` loaded the same to render a stored report;
  ``--version`` built the whole parser;
- ``approve op --gate desing``, ``run op --approve atuo``, ``campaign rnu``: the choices listed, none suggested;
- ``report op`` on a read-only op dir: an ``OSError`` traceback;
- ``status op``: ``M1 attempt 1 FAIL_NUMERIC: FAIL_NUMERIC modules/...`` (the verdict twice); ``status``/``approve``
  of a folder that never ran said only "no run found".
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from agents_fake_openai import FakeOpenAIServer, Reply, completion, error  # noqa: E402
from orch_support import FIX  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("local_endpoint_env")


def _dead_url() -> str:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _op(op_copy, base_url: str, model: str = "good") -> Path:
    """affine with its design provided, on ``base_url``, no retries."""
    op = op_copy("affine")
    for name in ("DESIGN.md", "module_interfaces.yaml"):
        shutil.copy(FIX / "agents" / "affine" / name, op / name)
    (op / "forge.toml").write_text(f'[models]\ndefault = "{model}"\n[llm]\nbase_url = "{base_url}"\n'
                                   "backoff_s = 0.0\nmax_tool_rounds = 0\nmax_retries = 0\n")
    return op


def _only_good(body: dict) -> Reply:
    """A server that serves ``good`` and ``other`` and refuses any other name, as vLLM and OpenAI do."""
    if body.get("model") not in ("good", "other"):
        return Reply(404, json.dumps({"error": {"message": f"The model `{body.get('model')}` does not exist",
                                                "type": "invalid_request_error", "code": "model_not_found"}}))
    return error(500, "down for maintenance")


# ------------------------------------------------------------------------------------------ the endpoint


def test_an_endpoint_nothing_listens_on_is_refused_at_once_before_anything_is_written(op_copy, cli) -> None:
    op = _op(op_copy, _dead_url())
    out = cli("run", str(op), "--approve", "auto")
    err = " ".join(out.stderr.split())
    assert out.returncode == 1 and "Traceback" not in err, err
    assert "nothing listens there (connection refused" in err and "nothing was run" in err
    assert "retries" not in err and not (op / ".forge").exists()


def test_a_name_that_does_not_resolve_is_not_retried() -> None:
    """The exception chain the SDK raises for a DNS failure (APIConnectionError <- httpx.ConnectError <-
    socket.gaierror), built by hand: no resolver is asked."""
    import httpx
    import openai

    from agents.llm import OpenAIProvider
    from agents.llm._openai import unreachable_reason
    from agents.llm._types import ChatRequest, LLMError

    def chain(cause: BaseException) -> openai.APIConnectionError:
        request = httpx.Request("POST", "http://no-such-host.invalid/v1/chat/completions")
        try:
            try:
                raise cause
            except OSError as exc:
                raise httpx.ConnectError(str(exc), request=request) from exc
        except httpx.ConnectError as exc:
            wrapped = openai.APIConnectionError(request=request)
            wrapped.__cause__ = exc
            return wrapped

    dns = chain(socket.gaierror(socket.EAI_NONAME, "Name or service not known"))
    assert unreachable_reason(dns) == ("the host name does not resolve (Name or service not known); "
                                       "check the URL's host")
    assert unreachable_reason(chain(ConnectionRefusedError(111, "Connection refused"))).startswith("nothing listens")
    # a DNS server that does not answer, a timeout, a reset: waiting may help, they are retried as before
    assert unreachable_reason(chain(socket.gaierror(socket.EAI_AGAIN, "Temporary failure"))) is None
    assert unreachable_reason(chain(ConnectionResetError(104, "Connection reset by peer"))) is None

    sleeps: list[float] = []
    provider = OpenAIProvider(base_url="http://no-such-host.invalid/v1", api_key=None, sleep=sleeps.append)

    def create(**_kwargs):
        raise dns

    provider._client.chat.completions.create = create  # type: ignore[method-assign]
    with pytest.raises(LLMError) as info:
        provider.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}]))
    assert sleeps == [] and info.value.retries == 0
    assert str(info.value).startswith("cannot reach http://no-such-host.invalid/v1: the host name does not resolve")


def test_a_body_that_is_not_json_is_quoted_not_decoded() -> None:
    """A 200 of bytes that are not UTF-8 said ``'utf-16-be' codec can't decode byte 0x7b in position 12``."""
    from agents.llm import OpenAIProvider, RetryPolicy
    from agents.llm._types import ChatRequest, LLMError

    for body, expected in (("\x00\xffgarbage{{{", "the body is not JSON; it starts '\\x00ÿgarbage{{{'"),
                           ("<html>Bad Gateway</html>", "the body is not JSON; it starts '<html>Bad Gateway</html>'")):
        with FakeOpenAIServer([Reply(200, body)]) as server:
            provider = OpenAIProvider(base_url=server.base_url, api_key=None, retry=RetryPolicy(max_retries=0))
            with pytest.raises(LLMError) as info:
                provider.complete(ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}]))
        assert str(info.value) == f"{server.base_url} answered something that is not a chat completion: {expected}"


# ---------------------------------------------------------------------------------------------- the model


def test_a_model_the_server_refuses_is_refused_before_intake_and_never_saved(op_copy, cli) -> None:
    """``run --model typo``: refused before intake (nothing written), naming what the server lists; after a run
    exists, ``resume --model typo`` leaves run.json as it was, and ``resume --model good`` is kept."""
    with FakeOpenAIServer(_only_good, models=["good", "other"]) as server:
        op = _op(op_copy, server.base_url, model="gpt-typo")
        out = cli("run", str(op), "--approve", "auto")
        err = " ".join(out.stderr.split())
        assert out.returncode == 1 and not (op / ".forge").exists(), err
        assert f"{server.base_url} does not serve model 'gpt-typo'" in err and "The model `gpt-typo` does not exist" \
            in err and "it lists: good, other" in err and "nothing was run" in err

        (op / "forge.toml").write_text((op / "forge.toml").read_text().replace("gpt-typo", "good"))
        out = cli("run", str(op), "--approve", "auto")  # starts; its first call gets the server's 500
        assert out.returncode == 1 and "HTTP 500" in out.stderr, out.stderr
        (run_json,) = (op / ".forge").glob("run-*/run.json")
        before = run_json.read_text()
        out = cli("resume", str(op), "--model", "gtp-typo2")
        assert out.returncode == 1 and "does not serve model 'gtp-typo2'" in out.stderr, out.stderr
        assert run_json.read_text() == before
        out = cli("resume", str(op), "--model", "other")
        assert "HTTP 500" in out.stderr and json.loads(run_json.read_text())["model_options"] == {"model": "other"}


def test_a_server_that_answers_to_any_name_is_not_refused_for_its_listing(tmp_path) -> None:
    """llama.cpp's server lists its one GGUF file and answers to any model name; Ollama resolves ``llama3`` to
    ``llama3:latest``: a name missing from the listing is refused only when the server refuses it too."""
    from orchestrator.agent_factory import endpoint_problem

    with FakeOpenAIServer(lambda body: completion("pong"), models=["SmolLM2-135M-Instruct.Q4_1.gguf"]) as server:
        assert endpoint_problem(tmp_path, {"model": "qwen", "base_url": server.base_url}) is None
        assert len(server.requests) == 1 and server.requests[0]["max_tokens"] == 1
    with FakeOpenAIServer(_only_good) as server:  # lists nothing (404): it cannot tell, the run says later
        assert endpoint_problem(tmp_path, {"model": "typo", "base_url": server.base_url}) is None
        assert server.requests == []


# ------------------------------------------------------------------------------------------- read-only commands


def _at_design_gate(op_copy, script, cli) -> Path:
    op = op_copy("affine")
    assert cli("run", str(op), "--approve", "stop", "--agents",
               f"scripted:{script('affine', implement={1: ['impl.py']})}").returncode == 0
    return op


def test_status_reads_the_runs_copy_without_loading_langgraph(op_copy, script, cli) -> None:
    op = _at_design_gate(op_copy, script, cli)
    (copy,) = (op / ".forge").glob("run-*/status.json")
    code = ("import sys\nfrom orchestrator.cli.main import main\nassert main(['status', sys.argv[1]]) == 0\n"
            "import orchestrator.ui.screens  # what `show REPORT` renders with\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain_core', 'openai'))\n"
            "assert not heavy, heavy[:5]\n"
            "try:\n    main(['--version'])\nexcept SystemExit as exc:\n    assert exc.code == 0\n")
    proc = subprocess.run([sys.executable, "-c", code, str(op)], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert "waiting at gate 'design' #1" in proc.stdout and proc.stdout.rstrip().endswith(
        "PTO Forge " + proc.stdout.rstrip().rsplit("PTO Forge ", 1)[1])
    assert copy.is_file()


def test_a_copy_of_another_checkpoint_is_never_used(op_copy, script, cli) -> None:
    """The copy answers only for the checkpoint it names: after a resume moved the run on, or with a copy
    tampered, status reads the checkpoints (and refreshes the copy)."""
    from orchestrator import readonly
    from orchestrator.core.snapshot import snapshot
    from orchestrator.store.status_cache import checkpoint_key, read_cached

    op = _at_design_gate(op_copy, script, cli)
    (copy,) = (op / ".forge").glob("run-*/status.json")
    rid = copy.parent.name.removeprefix("run-")
    fresh = readonly.status(op).model_dump()
    data = json.loads(copy.read_text())
    assert read_cached(op, rid) is not None and data["key"] == checkpoint_key(op, rid)
    data["values"]["phase"] = "bogus"
    copy.write_text(json.dumps(data))
    assert readonly.status(op).phase == "bogus"  # proof that the copy is what answers
    data["key"] = "0" * 64
    copy.write_text(json.dumps(data))
    assert readonly.status(op).model_dump() == fresh
    assert json.loads(copy.read_text())["key"] == checkpoint_key(op, rid)  # refreshed

    assert cli("approve", str(op)).returncode == 0
    assert cli("resume", str(op), "--approve", "stop").returncode == 0  # on to the final gate (one module)
    values, nxt, interrupts = snapshot(op, rid)
    assert read_cached(op, rid) == (json.loads(json.dumps(values, default=str)), nxt,
                                    json.loads(json.dumps(interrupts, default=str)))
    assert readonly.status(op).gate.gate == "final"


# ------------------------------------------------------------------------------------------- the command line


def test_a_mistyped_choice_names_the_closest(capsys) -> None:
    from orchestrator.cli.main import main

    for argv, expected in ((["approve", "op", "--gate", "desing"], "did you mean 'design'?"),
                           (["run", "op", "--approve", "atuo"], "did you mean 'auto'?"),
                           (["campaign", "rnu", "x"], "did you mean 'run'?")):
        with pytest.raises(SystemExit) as info:
            main(argv)
        err = capsys.readouterr().err
        assert info.value.code == 2 and "invalid choice" in err and err.rstrip().endswith(expected), err
    with pytest.raises(SystemExit):
        main(["run", "op", "--approve", "zzz"])
    assert "did you mean" not in capsys.readouterr().err


def test_a_report_that_cannot_be_written_is_one_line(op_copy, script, cli, tmp_path) -> None:
    op = _at_design_gate(op_copy, script, cli)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    out = cli("report", str(op), "--out", str(blocker / "report.html"))
    assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.startswith(f"error: cannot write the report to {blocker / 'report.html'}: "), out.stderr


def test_a_failed_attempt_names_its_verdict_once() -> None:
    from orchestrator.store.results import RunResult
    from orchestrator.ui.summary import attempt_lines

    result = RunResult.model_construct(attempts=[
        {"module": 1, "attempt": 1, "verdict": "FAIL_NUMERIC", "reason": "FAIL_NUMERIC m1.py (0/56 cases pass)"},
        {"module": 2, "attempt": 1, "verdict": "FAIL_LINT", "reason": "FAIL_LINT: PF05 line 22"},
        {"module": 2, "attempt": 2, "verdict": "AGENT_ERROR", "reason": "the model sent nothing", "model_calls": 2}])
    assert attempt_lines(result) == ["M1 attempt 1 FAIL_NUMERIC: m1.py (0/56 cases pass)",
                                     "M2 attempt 1 FAIL_LINT: PF05 line 22",
                                     "M2 attempt 2 AGENT_ERROR (2 model calls): the model sent nothing"]


def test_status_and_approve_of_a_folder_that_never_ran_say_how_to_start(tmp_path, cli) -> None:
    for command in ("status", "approve"):
        out = cli(command, str(tmp_path))
        assert out.returncode == 1 and out.stderr.strip().endswith(
            f"; start a run with `python -m orchestrator run {tmp_path}`"), out.stderr
