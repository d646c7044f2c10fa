"""What a run keeps on disk: paths, run files, checkpoint pruning, results and status, artifacts, stored
reports, the op dir's audit history.

Imports only the leaves (``orchestrator.errors``, ``orchestrator.gates``); never ``core``, ``ui``, ``cli``,
``adapters`` or the facade (``tests/test_layering.py``).
"""
