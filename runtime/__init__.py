"""The deterministic verification authority of PTO Forge.

Sub-packages: ``emulator`` (PyPTO on the CPU), ``lint`` (the OLxx rules), ``verify`` (the verification
protocol and its sandbox), ``opdir`` (the operator-directory contract), ``compare`` (tensor comparison) and
``bisect`` (first-divergence localisation). ``runtime`` never imports ``agents`` or ``orchestrator``.
"""

__all__: list[str] = []

if __import__("sys").argv[:1] == ["-m"]:  # `python -m runtime.<tool>` locating its module: see `missing_deps`
    from runtime.missing_deps import install_hook

    install_hook()
