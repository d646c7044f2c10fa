"""The LangGraph state machine that drives designer, implementer, verifier and debugger.

Library API: :mod:`orchestrator.api` (``run``, ``resume``, ``replay``, ``approve``, ``reject``, ``status``,
``audit``, ``prune``). The graph is wired in :mod:`orchestrator.graph` (one node per module under
``orchestrator/nodes``), its state in :mod:`orchestrator.state`, injected services in
:mod:`orchestrator.services`. Entry point: ``python -m orchestrator --help``.
"""

__all__: list[str] = []
