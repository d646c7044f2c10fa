"""pass@k with the unbiased estimator (Chen et al. 2021, the one KernelBench and HumanEval use).

For one task with ``n`` finished samples of which ``c`` passed, ``pass@k = 1 - C(n - c, k) / C(n, k)``: the
probability that at least one of ``k`` samples drawn without replacement from the ``n`` passes. It is
computed as a product (no large binomials). A campaign's figure is the mean over its tasks; a task with
fewer than ``k`` finished samples has no pass@k and is left out of that mean (and counted as such).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["mean_pass_at_k", "pass_at_k"]


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k of one task; None when ``n < k`` (not enough samples to say).

    Raises:
        ValueError: ``k < 1``, ``c < 0`` or ``c > n``.
    """
    if k < 1 or c < 0 or c > n:
        raise ValueError(f"pass@k needs k >= 1 and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n < k:
        return None
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def mean_pass_at_k(tasks: Iterable[tuple[int, int]], k: int) -> tuple[float | None, int]:
    """(mean pass@k over the tasks that have at least ``k`` samples, how many tasks that is)."""
    values = [v for n, c in tasks if (v := pass_at_k(n, c, k)) is not None]
    return (sum(values) / len(values) if values else None), len(values)
