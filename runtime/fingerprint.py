"""The numerics fingerprint of this machine: what decides the last bits of float32 results.

Recorded in every trace manifest and printed by a replay miss when it differs, so that "the replay missed on
this machine" comes with its likely cause (another BLAS core, another SIMD level, another numpy). Nothing here
reaches an agent: it is a host fact (ARCHITECTURE §0.2).
"""

from __future__ import annotations

import ctypes
import functools
import glob
import os
import platform
from typing import Any

__all__ = ["fingerprint_diff", "numerics_fingerprint"]


def _blas_core() -> str:
    """The BLAS kernel set in use (OpenBLAS core name), via threadpoolctl when installed, else numpy's library."""
    try:
        from threadpoolctl import threadpool_info  # type: ignore[import-not-found]

        for info in threadpool_info():
            if info.get("user_api") == "blas":
                return str(info.get("architecture") or info.get("internal_api") or "?")
    except ImportError:
        pass
    import numpy as np

    libs = glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "*openblas*"))
    for lib in libs:
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                     "openblas_get_corename"):
            fn = getattr(handle, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                return (fn() or b"?").decode(errors="replace")
    return "unknown"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=4)
def _cached(coretype: str | None) -> dict[str, Any]:
    import numpy as np

    blas: dict[str, Any] = {}
    simd: list[str] = []
    try:
        config = np.show_config(mode="dicts")  # type: ignore[call-arg]
        dep = (config.get("Build Dependencies") or {}).get("blas") or {}
        blas = {k: dep.get(k) for k in ("name", "version")}
        simd = list((config.get("SIMD Extensions") or {}).get("found") or [])
    except (TypeError, AttributeError):
        pass
    return {
        "numpy": np.__version__,
        "blas": blas.get("name") or "?",
        "blas_version": blas.get("version") or "?",
        "blas_core": _blas_core(),
        "openblas_coretype_env": coretype or "",
        "simd_dispatch": simd,
        "cpu": _cpu_model(),
        "machine": platform.machine(),
    }


def numerics_fingerprint() -> dict[str, Any]:
    """BLAS build and core type, numpy version and SIMD dispatch targets, CPU model (JSON-ready)."""
    return dict(_cached(os.environ.get("OPENBLAS_CORETYPE")))


def fingerprint_diff(recorded: dict[str, Any] | None, current: dict[str, Any] | None = None) -> list[str]:
    """Human lines ``key: recorded -> current`` for every fingerprint field that differs (empty: same)."""
    if not recorded:
        return []
    current = current or numerics_fingerprint()
    return [f"{k}: {recorded.get(k)!r} -> {current.get(k)!r}" for k in sorted(set(recorded) | set(current))
            if recorded.get(k) != current.get(k)]
