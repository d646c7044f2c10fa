"""The state machine: graph, state, routing, services, driver, nodes and the steps they call.

Imports the leaves (``orchestrator.errors``, ``orchestrator.gates``) and ``orchestrator.store``; never
``ui``, ``cli``, ``adapters`` or the facade (``tests/test_layering.py``).
"""
