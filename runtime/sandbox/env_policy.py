"""One environment allow-list for every child process that computes numbers the verifier compares.

Why one definition: the golden process (``runtime.opdir``'s golden runner) and the candidate process
(``runtime.sandbox``) must use the *same* numerics. When the golden inherited the caller's environment and the
candidate got a fixed one, the two sides could even pick different BLAS kernels on one host (e.g. with
``OPENBLAS_CORETYPE`` set by the user), and float32 results differed in their last bits between them.

What the child gets:

* a fixed base (``PATH``, C.UTF-8 locale, ``HOME``/``TMPDIR`` = the child's work directory,
  ``PYTHONHASHSEED=0``, no bytecode, no user site);
* single-threaded BLAS / OpenMP for every common BLAS (reductions then sum in one fixed order);
* the *numerics-selection* variables in :data:`NUMERICS_PASSTHROUGH`, copied from the parent unchanged and
  identically to both sides (a user who pins ``OPENBLAS_CORETYPE`` pins it for golden and candidate alike);
* nothing else: no API keys, tokens or other user secrets, and nothing that tells the code it runs in a
  sandbox (a kernel must not be able to behave differently under verification).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["NUMERICS_PASSTHROUGH", "THREAD_VARS", "child_env"]

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS")
"""Thread-count variables, all forced to ``1`` (deterministic reduction order, no oversubscription)."""

NUMERICS_PASSTHROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_VERBOSE", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS",
                        "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES")
"""Variables that select BLAS kernels / SIMD paths; passed through from the parent, the same for both sides."""


def child_env(work: str | os.PathLike[str], *, parent: Mapping[str, str] | None = None) -> dict[str, str]:
    """The complete environment of a golden or candidate child process.

    Args:
        work: the child's private working directory (becomes ``HOME`` and ``TMPDIR``).
        parent: the environment to take :data:`NUMERICS_PASSTHROUGH` from (default ``os.environ``).

    Returns:
        A fresh dict; callers pass it as ``env=`` and add nothing (so both sides stay identical).
    """
    source = os.environ if parent is None else parent
    work = os.fspath(work)
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": work,
        "TMPDIR": work,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }
    env.update(dict.fromkeys(THREAD_VARS, "1"))
    for var in NUMERICS_PASSTHROUGH:
        if var in source:
            env[var] = source[var]
    return env
