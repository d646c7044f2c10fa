"""The four agent roles (designer, implementer, verifier-audit, debugger) and the LLM layer.

``agents`` never imports ``orchestrator``. The typed boundary with the orchestrator is
:mod:`agents.contracts`; the orchestrator calls :func:`build_agents` to get an ``AgentSet`` and writes its own
events through :class:`agents.trace.Trace`.
"""

from agents._build import build_agents, local_model_line, local_model_problem
from agents.config import AgentsConfig, ConfigError, load_config
from agents.contracts import AgentError, AgentSet
from agents.trace import ReplayMissError, Trace, TraceError

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
