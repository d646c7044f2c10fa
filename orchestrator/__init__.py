"""The LangGraph state machine that drives designer, implementer, verifier and debugger.

Layers (``docs/architecture.md``; ``tests/test_layering.py`` enforces the import rule):

* facade: :mod:`orchestrator.api` (``run``, ``resume``, ``replay``, ``approve``, ``reject``, ``status``,
  ``audit``, ``prune``), :mod:`orchestrator.agent_factory`; leaves every layer shares:
  :mod:`orchestrator.errors`, :mod:`orchestrator.gates`;
* :mod:`orchestrator.core`: the graph (:mod:`orchestrator.core.graph`, one node per module under
  ``orchestrator/core/nodes``), its state, routing, services, the driver and the steps the nodes call;
* :mod:`orchestrator.store`: what a run keeps on disk and how to read it back (status, reports, audit);
* :mod:`orchestrator.ui` (views, progress, HTML report), :mod:`orchestrator.cli` (``python -m orchestrator``),
  :mod:`orchestrator.adapters` (scripted agents, authoring, portability, gym import).
"""

__all__: list[str] = []
