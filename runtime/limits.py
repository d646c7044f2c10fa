"""Time limits a user sees in the command line's help as well as in the code that enforces them.

A leaf module (nothing imported): building the command-line parser imports each subcommand module, and importing
the enforcing package (``runtime.opdir``) there would load all of it for ``--help``. One constant, read by both.
"""

from __future__ import annotations

__all__ = ["GOLDEN_CASE_TIMEOUT_S"]

GOLDEN_CASE_TIMEOUT_S = 60.0
"""Seconds one case of golden.py may take (intake, ``run`` and the verifier): the first case over it stops the
run of golden.py with one clear problem."""
