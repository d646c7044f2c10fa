"""The cyclic garbage collector is paused while a kernel call runs (tracing, lowering, execution).

Why: a kernel call allocates tens of thousands of small container objects (the traced graph, the program, its
prepared form) that live until the call ends and are then freed by reference counting. With the collector on,
the young-generation collections that run during the call promote them, and every such promotion brings the
next *full* collection closer - which scans every object of the process: with torch imported, ~190 ms of CPU
(measured: one full collection landed inside one 30 ms call of ``llada2_gate_select`` and made it 200 ms).
Paused, those objects are never promoted and die young, so full collections become rarer instead of only
being moved elsewhere. The collector is switched back on when the call ends (also on errors); cyclic garbage
made during the call is then collected by the ordinary young-generation collections. A caller that disabled
the collector itself keeps it disabled; nested and concurrent calls are counted.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["paused"]

_lock = threading.Lock()
_depth = 0
_resume = False
"""whether the outermost pause switched the collector off (and so must switch it on again)"""


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off (restored afterwards as it was)."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            if _resume:
                gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                _resume = False
                gc.enable()
