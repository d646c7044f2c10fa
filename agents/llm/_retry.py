"""Retry policy for transient endpoint failures (429, 5xx, connection errors).

Backoff is deterministic (no jitter) and the sleep function is injectable, so tests run instantly and the
same failure sequence always produces the same waits.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

__all__ = ["RetryPolicy", "is_retryable_status"]


def is_retryable_status(status: int | None) -> bool:
    """429 (rate limit) and every 5xx are transient; other statuses are the caller's mistake."""
    return status is not None and (status == 429 or 500 <= status <= 599)


class RetryPolicy(BaseModel):
    model_config = ConfigDict(frozen=True)

    max_retries: int = 4
    """Retries after the first attempt (so at most ``max_retries + 1`` requests)."""
    backoff_s: float = 1.0
    """Wait before retry i (0-based) is ``backoff_s * multiplier**i``, capped at ``max_backoff_s``."""
    multiplier: float = 2.0
    max_backoff_s: float = 30.0

    def delay(self, retry_index: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``retry_index``; a server ``Retry-After`` wins when it is larger."""
        base = min(self.backoff_s * self.multiplier**retry_index, self.max_backoff_s)
        if retry_after is not None and retry_after > base:
            return min(retry_after, self.max_backoff_s)
        return base


Sleep = Callable[[float], None]
DEFAULT_SLEEP: Sleep = time.sleep
