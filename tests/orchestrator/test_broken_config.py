"""Newcomer audit s30, C1: a broken forge.toml is reported as what it is (file:line and the problem, one line),
not as "no model configured" (which it said even with ``--model local``)."""

from __future__ import annotations

from pathlib import Path

import pytest

CASES = [
    ("[local\nthreads = 1\n", "forge.toml:1: syntax error: Expected ']'"),
    ('[local]\nthreads = "two"\n', "forge.toml:2: [local] threads: Input should be a valid integer"),
    ('[models]\ndefault = "gpt-4o"\n\n[llm]\ntimeout_s = "x"\n', "forge.toml:5: [llm] timeout_s: Input should be"),
]


@pytest.fixture(autouse=True)
def _no_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FORGE_MODEL", "FORGE_MODEL_DESIGNER", "FORGE_MODEL_IMPLEMENTER", "FORGE_MODEL_VERIFIER",
                "FORGE_MODEL_DEBUGGER", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize(("toml", "expected"), CASES)
@pytest.mark.parametrize("model", [None, "local", "gpt-4o"])
def test_a_broken_forge_toml_is_named_with_its_line(op_copy, cli, toml: str, expected: str, model: str | None) -> None:
    op = op_copy("affine")
    (op / "forge.toml").write_text(toml, encoding="utf-8")
    p = cli("run", str(op), *(["--model", model] if model else []))
    assert p.returncode == 1, p.stdout + p.stderr
    assert "no model configured" not in p.stderr and expected in p.stderr, p.stderr
    err = "".join(ln for ln in p.stderr.splitlines(keepends=True) if not ln.startswith("warning: no OS sandbox"))
    assert err.startswith("error: model configuration: ") and len(err.strip().splitlines()) == 1, p.stderr
    assert not (op / ".forge").exists()  # refused before anything was written


def test_the_line_is_left_out_when_it_cannot_be_found(tmp_path: Path) -> None:
    from agents.config import ConfigError
    from orchestrator.agent_factory import config_problem_line

    assert config_problem_line(ConfigError("overrides: llm.timeout_s: Input should be a valid number")) == \
        "overrides: llm.timeout_s: Input should be a valid number"
    f = tmp_path / "forge.toml"
    f.write_text("[llm]\ntimeout_s.x = 1\n", encoding="utf-8")
    assert config_problem_line(ConfigError(f"{f}: llm.timeout_s: bad")) == f"{f}: llm.timeout_s: bad"
