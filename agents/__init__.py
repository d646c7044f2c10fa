"""The four agent roles (designer, implementer, verifier-audit, debugger) and the LLM layer.

``agents`` never imports ``orchestrator``. The typed boundary with the orchestrator is
:mod:`agents.contracts`.
"""

from agents.contracts import AgentError, AgentSet

__all__ = ["AgentError", "AgentSet"]
