"""``build_agents``: the one call the orchestrator makes to get an ``AgentSet`` for a run."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from agents.config import ConfigError, load_config, resolve_for_trace
from agents.contracts import AgentSet
from agents.llm import ChatProvider
from agents.roles import LLMAgents
from agents.trace import Trace, TraceMode
from runtime.yamlio import load_yaml

__all__ = ["build_agents"]


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
    seeds = _spec_seeds(Path(op_dir))
    if seeds and not trace.manifest.seeds:
        trace.update_manifest(seeds=seeds)
    return agents


def _spec_seeds(op_dir: Path) -> list[int]:
    """``seeds`` from SPEC.md's front matter (for the manifest); [] when absent or unreadable."""
    path = op_dir / "SPEC.md"
    try:
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---"):
            return []
        front = load_yaml(text.split("---", 2)[1]) or {}
        seeds = front.get("seeds") if isinstance(front, dict) else None
        return [int(s) for s in seeds] if isinstance(seeds, list) else []
    except (OSError, yaml.YAMLError, ValueError, TypeError, IndexError):
        return []
