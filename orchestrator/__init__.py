"""The LangGraph state machine that drives designer, implementer, verifier and debugger.

Entry point: ``python -m orchestrator --help``.
"""

__all__: list[str] = []
