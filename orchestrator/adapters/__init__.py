"""Tooling around the run API: scripted agents, trace authoring, the portability check, the gym importer.

Adapters depend on the facade, ``core`` and ``store``; nothing in ``core`` or ``store`` depends on them.
"""
