"""Fresh memory for the emulator's arrays without transparent-huge-page stalls.

numpy asks the kernel for transparent huge pages (``madvise(MADV_HUGEPAGE)``) on every array of 4 MiB or more. Where
the kernel's THP ``defrag`` setting is ``madvise`` (the default of many distributions, and of the machines this
project runs on), the first touch of such an array may *compact memory synchronously* to find 2 MiB pages - on a
machine whose free memory is fragmented by the page cache, a stall of 0.1-0.4 s in one process. Measured on
``rms_norm`` (one call over a 16 MiB input, fresh process): its first execution 0.17 s with the advice, 0.06 s
without; the gym operator as its user runs it, median of 3 fresh processes: 8.0-8.7x the golden with the advice,
2.9x without (torch, which computes the golden, does not ask for huge pages). The emulator's arrays are short-lived
tiles streamed once or twice, where huge pages save little; a process the emulator owns - the ``python -m
runtime.emulator`` launcher and its Python children, the verifier's device process - therefore runs numpy without
the advice. A user who set ``NUMPY_MADVISE_HUGEPAGE`` keeps numpy's own reading of it; a process that only imports
the emulator (``runtime.emulator.install()``) is not changed.
"""

from __future__ import annotations

import importlib
import logging
import os

__all__ = ["no_hugepage_advice"]

log = logging.getLogger(__name__)


def no_hugepage_advice() -> bool:
    """Stop numpy from advising huge pages for its large arrays in this process, unless ``NUMPY_MADVISE_HUGEPAGE``
    is set (then numpy already did what the user asked). Returns whether the advice is off now. Only a performance
    hint: no array's contents depend on it."""
    if os.environ.get("NUMPY_MADVISE_HUGEPAGE") is not None:
        return False
    switch = None
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):  # numpy 2, numpy 1.x
        try:
            switch = getattr(importlib.import_module(name), "_set_madvise_hugepage", None)
        except ImportError:
            continue
        break
    if switch is None:  # a numpy without the switch: nothing to do
        return False
    switch(False)
    log.debug("numpy's huge-page advice is off in this process (see runtime.emulator.device._pages)")
    return True
