"""Entry point for LangGraph Studio (``langgraph dev`` reads ``langgraph.json``).

Studio shows the wiring and lets people step through a run; the graph still needs :class:`Services` as its
runtime context (agents, verifier, trace, clock), which ``orchestrator.api`` supplies for real runs.
"""

from __future__ import annotations

from orchestrator.core.graph import compile_graph

graph = compile_graph()
