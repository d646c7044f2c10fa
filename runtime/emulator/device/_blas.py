"""One BLAS thread while a kernel runs, whatever the process was started with.

Why: OpenBLAS splits a GEMM over its threads in a way that changes a float32 sum's order, so a kernel's matmul bits
depended on the host's core count (1 vs 2 threads differ on 4x6144x512, 128^3, 33x257x129), while every golden and
candidate process of the verifier runs one BLAS thread (`runtime.sandbox.env_policy`). And a kernel's matmuls are
tile-sized: on a loaded 2-core host the threaded GEMM of one 4 x 6144 x 512 tile took 230 ms against 5 ms on one
thread (the gym's quant_batch_matmul, 390 s for its four cases; bench/gym_cases.md).

threadpoolctl finds the BLAS numpy loaded and sets its threads; the count is restored after the kernel, so the
user's own numpy work (a vendor golden) keeps the process's setting. Where the environment already pins one thread
(OpenBLAS reads OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, then OMP_NUM_THREADS: every sandboxed child and device
process) nothing is looked up: those processes refuse ``ctypes.dlopen`` (the audit guard), which the lookup uses.

Only a program with a matmul asks (``needed``): the lookup scans every shared library of the process (81 realpaths
in a torch process, 11-15 ms plus 3 ms to import threadpoolctl), and it ran on the first call of every kernel - a
1-tile softmax paid more for it than for its whole run. No other device kernel calls BLAS.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator
from typing import Any

__all__ = ["one_blas_thread"]

log = logging.getLogger(__name__)

_controller: Any = False
"""not looked up yet; then None (one thread already, or no BLAS threadpoolctl can control) or the BLAS controller"""


def _env_pins_one() -> bool:
    for var in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"):  # OpenBLAS's own precedence
        value = os.environ.get(var, "").strip()
        if value:
            return value == "1"
    return False


def _blas() -> Any:
    global _controller
    if _controller is False:
        _controller = None
        if not _env_pins_one():
            try:
                from threadpoolctl import ThreadpoolController

                found = ThreadpoolController().select(user_api="blas")
                _controller = found if found.lib_controllers else None
            except Exception:  # noqa: BLE001 - no thread control is a slower matmul, never a failed kernel
                log.debug("BLAS thread control unavailable", exc_info=True)
    return _controller


@contextlib.contextmanager
def one_blas_thread(needed: bool = True) -> Iterator[None]:
    """Run the body with numpy's BLAS on one thread (restored after); a no-op where it already is, or where the body
    does not use BLAS (``needed`` False: nothing is looked up)."""
    blas = _blas() if needed else None
    if blas is None or all(lib.num_threads == 1 for lib in blas.lib_controllers):
        yield
        return
    with blas.limit(limits=1):
        yield
