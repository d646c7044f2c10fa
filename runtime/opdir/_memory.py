"""Will a case fit in memory? Estimated from SPEC.md before anything is allocated.

Why before: a SPEC with huge shapes used to reach numpy's allocator (in intake, in the golden child, in
the verifier) and end in an ``_ArrayMemoryError`` traceback. The estimate needs only shapes and dtypes.
"""

from __future__ import annotations

import math
import os

from runtime.dtypes import itemsize
from runtime.opdir._cases import Case
from runtime.opdir._problems import Problem
from runtime.opdir._spec import Spec

__all__ = ["WORKING_SET_FACTOR", "available_memory", "case_bytes", "memory_problems"]

WORKING_SET_FACTOR = 4
"""A case's peak is several times its inputs + outputs: the golden's intermediates, the candidate's own
copy in the sandbox, and the float32 copies the comparison makes. Four is a deliberately low bound: a case
refused by it cannot run at all; one that passes may still be slow."""

MEMORY_ENV = "FORGE_MEMORY_LIMIT_BYTES"
"""Overrides the memory the estimate is compared with (tests; machines whose procfs lies, e.g. containers)."""


def available_memory() -> int | None:
    """Bytes this machine can give a verification now (``MemAvailable``), or None when unknown."""
    override = os.environ.get(MEMORY_ENV)
    if override and override.isdigit():
        return int(override)
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return None


def case_bytes(spec: Spec, case: Case) -> int:
    """Bytes of one case's inputs and outputs as SPEC.md declares them."""
    total = 0
    for t in [*spec.inputs, *spec.outputs]:
        total += math.prod(t.concrete_shape(case.dims)) * itemsize(t.concrete_dtype(case.dtype))
    return total


def _gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def memory_problems(spec: Spec, cases: list[Case], limit: int | None = None) -> list[Problem]:
    """One problem for the largest case that cannot fit (none when all fit or memory is unknown)."""
    limit = available_memory() if limit is None else limit
    if not limit or not cases:
        return []
    need, worst = max((case_bytes(spec, c), c.name) for c in cases)
    if need * WORKING_SET_FACTOR <= limit:
        return []
    return [Problem(file="SPEC.md", field="p0_shapes",
                    message=f"case {worst} needs about {_gib(need * WORKING_SET_FACTOR)} ({_gib(need)} of inputs "
                            f"and outputs, x{WORKING_SET_FACTOR} working set) but this machine has "
                            f"{_gib(limit)} available: use smaller shapes")]
