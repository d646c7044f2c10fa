"""Newcomer audit s30, section 5 of the brief: OPENAI_BASE_URL checked like --base-url, a refused API key points
at OPENAI_API_KEY, `intake --timeout -1` refused, one progress line per gate with --approve auto."""

from __future__ import annotations

import io

from rich.console import Console


def test_a_malformed_openai_base_url_is_refused_before_anything_runs(op_copy, cli, monkeypatch) -> None:
    """Before: 15 s of retries, then `no answer from localhost:8000 after 4 retries`, and a run dir was created."""
    op = op_copy("affine")
    monkeypatch.setenv("FORGE_MODEL", "gpt-x")
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:8000")
    p = cli("run", str(op))
    assert p.returncode == 2 and "OPENAI_BASE_URL 'localhost:8000' is not an http(s) URL" in p.stderr, p.stderr
    assert not (op / ".forge").exists()


def test_a_refused_api_key_points_at_openai_api_key(monkeypatch) -> None:
    """Before: `HTTP 401 ... Incorrect API key provided ...; nothing is lost: fix the endpoint, then continue`."""
    from agents.llm import LLMError
    from orchestrator.cli import _common

    buf = io.StringIO()
    monkeypatch.setattr(_common, "err_console", Console(file=buf, width=300))

    def refused():
        raise LLMError("HTTP 401 from http://127.0.0.1:1/v1 after 0 retries: Incorrect API key provided",
                       status=401)

    assert _common.drive("/tmp/op", refused) == 1
    assert "set OPENAI_API_KEY" in buf.getvalue() and "fix the endpoint" not in buf.getvalue(), buf.getvalue()


def test_intake_refuses_a_timeout_that_is_not_positive(op_copy, cli) -> None:
    op = op_copy("affine")
    for value in ("-1", "0"):
        p = cli("intake", str(op), "--timeout", value)
        assert p.returncode == 2 and "--timeout must be a positive number" in p.stderr, p.stderr


def test_a_gate_run_again_after_its_interrupt_is_one_progress_line() -> None:
    """Before, in a pipe with --approve auto: `-> gate_design` twice (LangGraph re-runs the gate once answered)."""
    from orchestrator.ui.progress import Progress

    buf = io.StringIO()
    progress = Progress(Console(file=buf, width=120), live=False)
    progress.start("gate_design", {})
    progress.start("gate_design", {})
    progress({"node": "gate_design", "gate": {"decision": "approve", "source": "auto"}})
    progress.start("gate_design", {})  # a later instance of the gate (after a redesign) gets its own line
    assert buf.getvalue().count("-> gate_design") == 2, buf.getvalue()


def test_run_again_after_delivery_does_not_offer_resume(op_copy, script, cli) -> None:
    """Before: `... To continue the latest run (...) where it stopped: python -m orchestrator resume ...`, and that
    resume then said `nothing to resume: ... already finished`."""
    op = op_copy("affine")
    s = script("affine", implement={1: ["impl.py"]})
    assert cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}").returncode == 0
    p = cli("run", str(op), "--approve", "auto", "--agents", f"scripted:{s}")
    assert p.returncode == 1 and "has finished (delivered)" in p.stderr and "--fresh" in p.stderr, p.stderr
    assert "resume" not in p.stderr
    stopped = op_copy("sqrecip")  # a run waiting at a gate is still offered `resume`
    s2 = script("sqrecip", name="s2.yaml", implement={1: ["m1.py"], 2: ["m12.py"], 3: ["m123.py"]})
    assert cli("run", str(stopped), "--approve", "stop", "--agents", f"scripted:{s2}").returncode == 0
    p = cli("run", str(stopped), "--approve", "stop", "--agents", f"scripted:{s2}")
    assert p.returncode == 1 and "resume" in p.stderr, p.stderr
