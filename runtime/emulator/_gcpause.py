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

A process the emulator owns (the ``python -m runtime.emulator`` launcher and its Python children) also *freezes*
what exists at its first kernel call (`freeze_at_first_call`, ``gc.freeze``): the imports of torch, the vendor
package and the script's set-up are moved out of the collector's generations for good. Why: where the paused
collector resumes, the young collection the call owes is often a generation-1 one, and that traverses every
object the imports left in the young generations (~5,400 in a torch + vendor process: 1-1.7 ms, inside the first
kernel call of the small gym operators - measured in attn_softmax, gather_pa_kv_cache, bn_training_reduce); frozen,
it traverses only what was made since (0.1-0.2 ms). Full collections skip them too, for the script's own code as
well. The price: cyclic garbage that already exists at that moment is never collected (reference counting still
frees everything else) - bounded by one snapshot, never repeated. A process that only imports the emulator
(``runtime.emulator.install()``) is not changed.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["freeze_at_first_call", "paused"]

_lock = threading.Lock()
_depth = 0
_resume = False
"""whether the outermost pause switched the collector off (and so must switch it on again)"""
_freeze = False
"""whether the next outermost pause freezes the process's objects first (`freeze_at_first_call`)"""


def freeze_at_first_call() -> None:
    """In a process the emulator owns: freeze the objects that exist when the first kernel call starts (module doc)."""
    global _freeze
    _freeze = True


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the block with the cyclic garbage collector off (restored afterwards as it was)."""
    global _depth, _resume, _freeze
    with _lock:
        if _depth == 0:
            if _freeze:
                _freeze = False
                gc.freeze()
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
