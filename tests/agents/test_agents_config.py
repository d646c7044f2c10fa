"""Model configuration: files, environment, overrides and their precedence."""

from __future__ import annotations

from pathlib import Path

import pytest
from agents_fixtures import _isolated_env  # noqa: F401  (autouse)

from agents.config import ConfigError, load_config


def test_precedence_override_env_file(tmp_path: Path) -> None:
    op = tmp_path / "op"
    op.mkdir()
    (op / "forge.toml").write_text('[models]\ndefault = "file-default"\ndebugger = "file-debugger"\n'
                                   '[llm]\ntimeout_s = 30\n')
    env = {"FORGE_MODEL": "env-default", "FORGE_MODEL_VERIFIER": "env-verifier"}
    cfg = load_config(op, cwd=tmp_path, env=env, overrides={"model_implementer": "cli-implementer"})
    assert cfg.models == {"designer": "env-default", "implementer": "cli-implementer",
                          "verifier": "env-verifier", "debugger": "env-default"}
    assert cfg.llm.timeout_s == 30 and cfg.source.endswith("forge.toml")
    file_only = load_config(op, cwd=tmp_path, env={})
    assert file_only.models["debugger"] == "file-debugger" and file_only.models["designer"] == "file-default"
    cli = load_config(op, cwd=tmp_path, env=env, overrides={"model": "cli-all", "max_retries": 1})
    assert set(cli.models.values()) == {"cli-all"} and cli.llm.max_retries == 1


def test_op_dir_config_beats_cwd_and_yaml_is_read(tmp_path: Path) -> None:
    op = tmp_path / "op"
    op.mkdir()
    (tmp_path / "forge.toml").write_text('[models]\ndefault = "cwd"\n')
    (op / ".forge.yaml").write_text("models:\n  default: op-yaml\nllm:\n  base_url: http://127.0.0.1:9/v1\n")
    cfg = load_config(op, cwd=tmp_path, env={})
    assert cfg.models["designer"] == "op-yaml" and cfg.base_url == "http://127.0.0.1:9/v1"
    assert load_config(None, cwd=tmp_path, env={}).models["designer"] == "cwd"


def test_env_base_url_and_prices(tmp_path: Path) -> None:
    (tmp_path / "forge.toml").write_text('[prices."m"]\nprompt_per_mtok = 1.0\ncompletion_per_mtok = 2.0\n')
    cfg = load_config(None, cwd=tmp_path, env={"OPENAI_BASE_URL": "http://env/v1"})
    assert cfg.base_url == "http://env/v1" and cfg.price_table.prices["m"].completion_per_mtok == 2.0
    assert load_config(None, cwd=tmp_path / "nowhere", env={}).base_url == "https://api.openai.com/v1"


@pytest.mark.parametrize("text, message", [
    ('[llm]\napi_key = "sk-x"\n', "API keys do not belong"),
    ('[llm]\ntimeout_s = "soon"\n', "timeout_s"),
    ('[models]\nplanner = "m"\n', "unknown role"),
    ('[modles]\n', "unknown section"),
    ("[llm\n", "cannot parse"),
])
def test_bad_config_is_one_clear_error(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "forge.toml").write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_config(None, cwd=tmp_path, env={})
    assert "forge.toml" in str(info.value) or "overrides" in str(info.value)
