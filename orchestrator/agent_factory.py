"""Choose the agents of a run: ``scripted:<script.yaml>`` or the model-backed roles.

The model-backed roles come from ``agents.build_agents`` (the one builder); :func:`model_agents` only checks
the configuration first and turns its problems into one-line `ForgeError` messages. :func:`agents_from_spec`
handles the ``--agents`` option.
"""

from __future__ import annotations

from pathlib import Path

from agents import Trace, build_agents, local_model_problem
from agents.config import AgentsConfig, ConfigError, load_config
from agents.contracts import AgentSet
from agents.roles import LLMAgents
from agents.trace import TraceMode
from orchestrator.adapters.scripted import ScriptedAgents
from orchestrator.errors import ForgeError


def _config(op_dir: Path, options: dict | None) -> AgentsConfig:
    try:
        config = load_config(op_dir, overrides=dict(options or {}))
    except Exception as exc:  # ConfigError names the file and key
        raise ForgeError(f"model configuration: {exc}") from exc
    missing = [role for role, model in config.models.items() if not model]
    if missing:
        raise ForgeError("no model configured for " + ", ".join(missing) + ": set FORGE_MODEL (or "
                         "FORGE_MODEL_<ROLE>) or a forge.toml [models] table, or run with "
                         "--agents scripted:<script.yaml>")
    problem = local_model_problem(op_dir, options) if config.uses_local else None
    if problem:
        raise ForgeError(f"model configuration: the local model cannot run here: {problem}")
    return config


def uses_local_model(op_dir: Path, options: dict | None = None) -> bool:
    """Whether the configured model is the embedded local one (model name ``local``)."""
    try:
        return load_config(op_dir, overrides=dict(options or {})).uses_local
    except ConfigError:
        return False


def endpoint_configured(op_dir: Path, options: dict | None = None) -> bool:
    """Whether an endpoint is configured (``--base-url``, ``OPENAI_BASE_URL``, forge.toml ``[llm] base_url``)."""
    try:
        return load_config(op_dir, overrides=dict(options or {})).llm.base_url is not None
    except ConfigError:
        return True  # a broken config is reported by the run, not papered over with the local model


def close_agents(agents: AgentSet | None) -> None:
    """Stop what model-backed agents started (the local model server); other agent sets start nothing."""
    if isinstance(agents, LLMAgents):
        agents.close()


def preflight(spec: str, op_dir: Path, options: dict | None = None) -> None:
    """Fail before anything is written when the agents cannot be built (missing script, no model)."""
    if spec.startswith("scripted:"):
        ScriptedAgents(spec[len("scripted:"):])
    elif spec in ("factory", "", "default"):
        _config(op_dir, options)
    elif spec != "injected":
        raise ForgeError(f"unknown --agents value {spec!r}: use scripted:<script.yaml> or leave it out")


def model_configured(op_dir: Path, options: dict | None = None) -> bool:
    """Whether every role has a model (options, ``FORGE_MODEL*`` or forge.toml)."""
    try:
        _config(op_dir, options)
    except ForgeError:
        return False
    return True


def model_agents(op_dir: Path, trace: Trace, options: dict | None = None, *,
                 mode: TraceMode | None = None) -> AgentSet:
    """The model-backed AgentSet (``agents.build_agents``), or a clear "no model configured" error.

    ``options`` are CLI-style overrides (``model``, ``model_<role>``, ``base_url``). In ``replay`` mode the
    models come from the recorded manifest and no model needs to be configured; otherwise a role without a
    model stops the run before anything is written.
    """
    if mode != "replay":
        _config(op_dir, options)
    try:
        return build_agents(op_dir, trace=trace, mode=mode, overrides=dict(options or {}))
    except ConfigError as exc:
        raise ForgeError(f"model configuration: {exc}") from exc


def agents_from_spec(spec: str, op_dir: Path, trace: Trace, options: dict | None = None) -> AgentSet:
    """``scripted:<path>`` -> ScriptedAgents; ``factory`` -> :func:`model_agents`."""
    if spec.startswith("scripted:"):
        return ScriptedAgents(spec[len("scripted:"):])
    if spec in ("factory", "", "default"):
        return model_agents(op_dir, trace, options)
    raise ForgeError(f"unknown --agents value {spec!r}: use scripted:<script.yaml> or leave it out")
