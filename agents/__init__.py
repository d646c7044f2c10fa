"""The four agent roles (designer, implementer, verifier-audit, debugger) and the LLM layer.

``agents`` never imports ``orchestrator``. The typed boundary with the orchestrator is
:mod:`agents.contracts`; the orchestrator calls :func:`build_agents` to get an ``AgentSet`` and writes its own
events through :class:`agents.trace.Trace`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents._build import build_agents, local_model_line, local_model_problem
    from agents.config import AgentsConfig, ConfigError, load_config
    from agents.contracts import AgentError, AgentSet
    from agents.trace import ReplayMissError, Trace, TraceError

_WHERE = {"build_agents": "agents._build", "local_model_line": "agents._build", "local_model_problem": "agents._build",
          "AgentsConfig": "agents.config", "ConfigError": "agents.config", "load_config": "agents.config",
          "AgentError": "agents.contracts", "AgentSet": "agents.contracts",
          "ReplayMissError": "agents.trace", "Trace": "agents.trace", "TraceError": "agents.trace"}
"""Each public name's module, loaded on first use (PEP 562). Why: ``import agents.trace`` (what ``status`` and
``intake`` need, to read a run's events) ran this file, whose eager imports loaded the roles, their tools, the
bisect rules and LangGraph - ~0.5 s of every such command's start (test-speed audit s44)."""


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

__all__ = [
    "AgentError",
    "AgentSet",
    "AgentsConfig",
    "ConfigError",
    "ReplayMissError",
    "Trace",
    "TraceError",
    "build_agents",
    "local_model_line",
    "local_model_problem",
    "load_config",
]
