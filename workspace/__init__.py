"""The example operators, shipped in the wheel as ``orchestrator.examples`` (SPEC.md, golden.py and the shipped
trace of each; ``pto-forge demo workspace/<op>`` replays one from an installed wheel, wherever it runs).

Package data only: nothing here is imported (``pyproject.toml`` maps the package to this folder).
"""
