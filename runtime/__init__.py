"""The deterministic verification authority of PTO Forge.

Sub-packages: ``emulator`` (PyPTO on the CPU), ``lint`` (the OLxx rules), ``verify`` (the verification
protocol and its sandbox), ``opdir`` (the operator-directory contract), ``compare`` (tensor comparison) and
``bisect`` (first-divergence localisation). ``runtime`` never imports ``agents`` or ``orchestrator``.
"""

__all__: list[str] = []
