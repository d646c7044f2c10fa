"""One environment allow-list for every child process that computes numbers the verifier compares.

Why one definition: the golden process (``runtime.opdir``'s golden runner) and the candidate process
(``runtime.sandbox``) must use the *same* numerics. When the golden inherited the caller's environment and the
candidate got a fixed one, the two sides could even pick different BLAS kernels on one host (e.g. with
``OPENBLAS_CORETYPE`` set by the user), and float32 results differed in their last bits between them.

What the child gets:

* a fixed base (``PATH``, C.UTF-8 locale, ``HOME``/``TMPDIR`` = the child's work directory,
  ``PYTHONHASHSEED``, no bytecode, no user site);
* single-threaded BLAS / OpenMP for every common BLAS (reductions then sum in one fixed order);
* one OpenBLAS kernel set for every host, :data:`REFERENCE_BLAS_CORE`, whatever the parent's
  ``OPENBLAS_CORETYPE`` (:func:`blas_coretype`): a verdict must not depend on the CPU (session 42, below);
* the other *numerics-selection* variables in :data:`NUMERICS_PASSTHROUGH`, copied from the parent unchanged and
  identically to both sides;
* nothing else: no API keys, tokens or other user secrets, and nothing that tells the code it runs in a
  sandbox (a kernel must not be able to behave differently under verification).

The BLAS core (session 42): numpy's OpenBLAS picks its kernel set per CPU at load time, and both sides of a
comparison move with it - the golden's ``np.matmul`` and the device's (the emulator's matmul is float32 GEMM). On
an AMD EPYC (Haswell kernels) workspace swiglu_mlp's honest final kernel failed one unseen case that it passed with
``OPENBLAS_CORETYPE=Sandybridge`` or ``Prescott``: Haswell's FMA kernels sum a dot product in an order that depends on
the GEMM's M and N (a 16-row tile of a 230-row product differed from the whole product in 24% of its elements), so
the kernel's tile matmuls and the golden's whole one disagreed by 1.7e-5 where the SPEC allowed 1.06e-5. With the
Sandybridge (AVX, no FMA) kernels a row or column tile of a GEMM is bit-identical to the whole GEMM (measured for
K 128-7168), so an honest tiled kernel agrees with a numpy golden where it computes the same sums, on every host.
Measured in docs/emulator-fidelity.md ("Matmul numerics and the host's BLAS"). Set for every child whose numbers
the verifier compares (golden, candidate, device) on x86-64 hosts with AVX - every x86-64 CPU since 2011 but some
Pentium/Celeron/Atom parts, where forcing it would be an illegal instruction: there the parent's
``OPENBLAS_CORETYPE`` passes through as before, and verdicts at a tolerance edge may follow that host's BLAS.

The hash seed (red team s17, c01): it was ``0`` for every child, so ``hash("some text")`` was one known number
in every verification and nowhere else (a real host randomizes string hashing): a kernel that compared a string
hash with its seed-0 value knew it was being verified. The golden and the device (trusted) keep ``0``; the
candidate of a verification gets :func:`candidate_hash_seed` of the verification's secret seed - unpredictable to
the kernel, identical in a replay with the same recorded seed - and the sandbox runner removes the variable from
the candidate's ``os.environ`` before any candidate code runs (a real host does not set it either).
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
from collections.abc import Mapping

__all__ = ["NUMERICS_PASSTHROUGH", "REFERENCE_BLAS_CORE", "THREAD_VARS", "blas_coretype", "candidate_hash_seed",
           "child_env"]

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
               "NUMEXPR_NUM_THREADS", "BLIS_NUM_THREADS")
"""Thread-count variables, all forced to ``1`` (deterministic reduction order, no oversubscription)."""

NUMERICS_PASSTHROUGH = ("OPENBLAS_CORETYPE", "OPENBLAS_VERBOSE", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS",
                        "NPY_DISABLE_CPU_FEATURES", "NPY_ENABLE_CPU_FEATURES")
"""Variables that select BLAS kernels / SIMD paths; passed through from the parent, the same for both sides
(``OPENBLAS_CORETYPE`` only where :func:`blas_coretype` pins none)."""

REFERENCE_BLAS_CORE = "Sandybridge"
"""The OpenBLAS kernel set of every numbers child on an x86-64 host with AVX (see the module docstring)."""


@functools.cache
def _x86_avx() -> bool:
    """This is an x86-64 Linux host whose kernel enabled AVX (the ``avx`` flag is cleared without OS support)."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return "avx" in line.split(":", 1)[1].split()
    except OSError:
        pass
    return False


def blas_coretype(parent: Mapping[str, str] | None = None) -> str | None:
    """The ``OPENBLAS_CORETYPE`` of a numbers child: :data:`REFERENCE_BLAS_CORE` on an x86-64 host with AVX, else
    the parent's (None: unset)."""
    if _x86_avx():
        return REFERENCE_BLAS_CORE
    return (os.environ if parent is None else parent).get("OPENBLAS_CORETYPE")


_HASH_SEED_TAG = b"pto-forge/candidate-hash-seed\0"


def candidate_hash_seed(secret: int) -> int:
    """The ``PYTHONHASHSEED`` of a candidate process verified with the secret seed ``secret``: in [1, 2**32 - 1].

    Never 0 (``sys.flags.hash_randomization`` is then 1, as on a host that randomizes); a function of the secret
    alone, so a replay with the same recorded seed hashes the same way, and no kernel can predict it.
    """
    digest = hashlib.sha256(_HASH_SEED_TAG + (int(secret) & ((1 << 64) - 1)).to_bytes(8, "little")).digest()
    return 1 + int.from_bytes(digest[:8], "little") % 0xFFFFFFFF


MALLOC_PERTURB = "165"
"""glibc's ``MALLOC_PERTURB_`` for every child (:func:`child_env`): new blocks hold 0x5A bytes, freed ones 0xA5"""


def child_env(work: str | os.PathLike[str], *, parent: Mapping[str, str] | None = None,
              hash_seed: int = 0) -> dict[str, str]:
    """The complete environment of a golden or candidate child process.

    Args:
        work: the child's private working directory (becomes ``HOME`` and ``TMPDIR``).
        parent: the environment to take :data:`NUMERICS_PASSTHROUGH` from (default ``os.environ``);
            ``OPENBLAS_CORETYPE`` is :func:`blas_coretype`'s.
        hash_seed: ``PYTHONHASHSEED`` (0 to 2**32 - 1): 0 for trusted children, :func:`candidate_hash_seed` for
            the candidate of a verification.

    Returns:
        A fresh dict; callers pass it as ``env=`` and add nothing (so both sides stay identical).
    """
    if not 0 <= int(hash_seed) <= 0xFFFFFFFF:
        raise ValueError(f"PYTHONHASHSEED must be in [0, 4294967295], got {hash_seed}")
    source = os.environ if parent is None else parent
    work = os.fspath(work)
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": work,
        "TMPDIR": work,
        "PYTHONHASHSEED": str(int(hash_seed)),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        # glibc fills every malloc'd block with this byte's complement (calloc's zeros stay zeros): memory from
        # `np.empty` / `torch.empty_like` is never zero by chance. Why (session 49): a write-only output the wrapper
        # took from `torch.empty` is described to the device as a zero fill when its pages happen to be zero and as
        # uninitialised memory otherwise, so a kernel leaving part of it unwritten passed or failed - FAIL_CHEAT on
        # one run, FAIL_NUMERIC on another - with the allocator's luck. A device's fresh memory holds old bytes.
        "MALLOC_PERTURB_": MALLOC_PERTURB,
    }
    env.update(dict.fromkeys(THREAD_VARS, "1"))
    for var in NUMERICS_PASSTHROUGH:
        if var in source:
            env[var] = source[var]
    core = blas_coretype(source)
    if core is not None:
        env["OPENBLAS_CORETYPE"] = core
    return env
