"""The messy-reply trial of issue #26, as a user runs it: the CLI, model-backed agents, the real openai client
over HTTP to an OpenAI-compatible server on 127.0.0.1 answering the way real models do.

- a fenced answer with a lead-in is accepted at once and the run delivers;
- the same failure twice stops the module at the blocked gate after 2 model calls (not 10 attempts / 28 calls),
  and progress, status, the HTML report and MEMORY.md show the same reason and the same counts;
- an endpoint that keeps failing says what happened (HTTP status, endpoint, retries, body), not "internal error".
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "agents"))
from agents_fake_openai import FakeOpenAIServer, Reply, completion, error  # noqa: E402
from orch_support import FIX  # noqa: E402

IMPL = (FIX / "agents" / "affine" / "impl.py").read_text(encoding="utf-8")
LINE = next(i for i, s in enumerate(IMPL.splitlines(), 1) if "xt * 2.0 + 1.0" in s)


def _role(body: dict) -> str:
    system = body["messages"][0]["content"]
    return next(r for r in ("designer", "implementer", "verifier", "debugger") if f"**{r}**" in system)


def _op(op_copy, base_url: str) -> Path:
    op = op_copy("affine")
    for name in ("DESIGN.md", "module_interfaces.yaml"):  # a design the user provides: no designer call
        shutil.copy(FIX / "agents" / "affine" / name, op / name)
    (op / "forge.toml").write_text(f'[models]\ndefault = "fake-model"\n[llm]\nbase_url = "{base_url}"\n'
                                   "backoff_s = 0.0\nmax_tool_rounds = 0\n")
    return op


def _audit() -> Reply:
    return completion(json.dumps({"rows": [{"index": 1, "status": "✅", "pypto_call": "yt = xt * 2.0 + 1.0",
                                            "line": LINE}], "verdict": "ok", "summary": "row 1 is line " + str(LINE)}))


def test_a_fenced_answer_with_a_lead_in_is_accepted(op_copy, cli) -> None:
    answer = {"path": "affine_impl.py", "content": IMPL, "notes": "y = 2x + 1"}

    def reply(body: dict) -> Reply:
        if _role(body) == "implementer":
            return completion("Here you go:\n\n```json\n" + json.dumps(answer, indent=2) + "\n```\n\nHope it helps!")
        return _audit()

    with FakeOpenAIServer(reply) as server:
        op = _op(op_copy, server.base_url)
        out = cli("run", str(op), "--approve", "auto")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "delivered" in out.stdout
    implementer = [r for r in server.requests if _role(r) == "implementer"]
    assert len(implementer) == 1  # accepted at once, no repair round


def test_a_repeated_failure_stops_early_and_every_view_agrees(op_copy, cli) -> None:
    def reply(body: dict) -> Reply:
        if _role(body) == "implementer":
            return completion("The kernel should compute y = 2x + 1 with a row loop over tiles of 16.")
        return _audit()

    with FakeOpenAIServer(reply) as server:
        op = _op(op_copy, server.base_url)
        out = cli("run", str(op), "--approve", "auto", "--budget", "10")
    assert out.returncode == 1
    assert len(server.requests) == 2  # one attempt, one repair: not 10 attempts and 28 calls
    reason = "the model sent a byte-identical answer twice in a row (2 tries): the answer contains no JSON object"
    # progress: the attempt's line says why it failed and after how many model calls
    assert re.search(r"implement .*failed after 2 model calls: implementer failed: " + re.escape(reason), out.stdout)
    assert "aborted: M1: attempt 1 stopped early, trying again cannot help" in out.stdout.replace("\n", " ")

    status = cli("status", str(op))
    text = status.stdout.replace("\n", " ")
    assert "implementer 1 (2 model calls)" in text
    assert "M1 attempt 1 AGENT_ERROR (2 model calls): implementer failed: " + reason in text
    st = json.loads(cli("status", str(op), "--json").stdout)
    assert st["agent_calls"] == {"implementer": 1} and st["model_calls"] == {"implementer": 2}
    assert st["modules"][0]["attempts"] == 1 and reason in st["modules"][0]["last_failure"]
    assert [(a["attempt"], a["verdict"], a["model_calls"]) for a in st["attempts"]] == [(1, "AGENT_ERROR", 2)]

    assert cli("report", str(op)).returncode == 0
    html = next((op / ".forge").glob("run-*/report.html")).read_text(encoding="utf-8")
    assert "model calls<b>2</b>" in html and "attempts<b>1</b>" in html
    assert "implementer 1 (2 model calls)" in html
    assert html.count("answer rejected: the answer contains no JSON object") == 2  # each call's error cell
    assert reason in html  # the module's attempt table

    memory = (op / "MEMORY.md").read_text(encoding="utf-8")
    assert "implementer failed: " + reason in memory


def test_an_endpoint_that_keeps_failing_says_what_happened(op_copy, cli) -> None:
    with FakeOpenAIServer(lambda body: error(503, "the model is loading")) as server:
        op = _op(op_copy, server.base_url)
        (op / "forge.toml").write_text((op / "forge.toml").read_text() + "max_retries = 2\n")
        out = cli("run", str(op), "--approve", "auto")
    assert out.returncode == 1 and len(server.requests) == 3
    err = " ".join(out.stderr.split())
    assert f"model call failed: HTTP 503 from {server.base_url} after 2 retries: " in err
    assert "the model is loading" in err and "internal error" not in err and "resume" in err


pytestmark = pytest.mark.usefixtures("local_endpoint_env")
