"""What agents may see of a measurement: coarse enough that last-bit float differences cannot move it.

ARCHITECTURE §0.2: a model request must be a function of the input files, the recorded answers and the
outcomes only - or a recorded run stops replaying on a machine whose float32 kernels (BLAS, SIMD ufuncs,
reductions) round differently. The exact numbers stay in the verify report for the audit; agents get:

* a **passing** leaf: no numbers at all (``{"path", "status": "pass"}``);
* a **failing** leaf: :data:`SIGNIFICANT_DIGITS` (two) significant digits of the max difference and of up to
  :data:`MAX_EXAMPLES` worst elements, and the out-of-tolerance share as a coarse bucket (:func:`coarse_share`),
  never the exact count (2266 vs 2267 of 4096 differs between CPUs);
* identities (:func:`evidence_id`) over input hashes and outcomes, never over measurements.

Why these precisions (measured with ``runtime.testmodes`` ulp noise, see docs/replay.md): float32 noise is
~1e-7 relative on a value, but a *difference* of two nearly equal values (a near-pass) amplifies it without
bound, so passing leaves show nothing. A failing leaf's max difference is large against the noise: over the
workspace traces and 3 noise seeds the worst leaf (sdpa, small-magnitude band) agreed to 3 digits but not 4,
i.e. its relative wobble is ~1e-4, which flips a 3-digit rounding with ~10% chance and a 2-digit one with ~1%:
hence two. Exact element counts near the tolerance edge move (1617..1619 of 23040), share buckets did not.

Everyone that builds agent-visible text from a measurement (verify reports, bisect, smoke runs, feedback,
MEMORY.md) uses these helpers: one definition (ARCHITECTURE §0.4).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

__all__ = ["MAX_EXAMPLES", "SHARE_BUCKETS", "SIGNIFICANT_DIGITS", "coarse", "coarse_share", "coarse_tree",
           "evidence_id", "leaf_view"]

SIGNIFICANT_DIGITS = 2
"""Significant digits of a failing measurement shown to agents (measured: bench/agent_view_precision.py)."""
MAX_EXAMPLES = 3
"""Worst out-of-tolerance elements shown per failing leaf."""
SHARE_BUCKETS = ((0.0, "none"), (0.001, "under 0.1%"), (0.01, "under 1%"), (0.1, "under 10%"),
                 (0.5, "under 50%"), (0.999999, "over 50%"), (1.0, "all"))
"""Upper bounds (inclusive) of the out-of-tolerance share buckets."""


def coarse(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """A float rounded to ``digits`` significant digits; non-finite floats as strings; anything else as is."""
    if isinstance(value, bool) or not isinstance(value, float):
        return value
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float(f"{value:.{digits}g}")


def coarse_tree(value: Any, digits: int = SIGNIFICANT_DIGITS) -> Any:
    """:func:`coarse` applied to every float in a JSON-like tree (dicts, lists, tuples)."""
    if isinstance(value, dict):
        return {k: coarse_tree(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [coarse_tree(v, digits) for v in value]
    return coarse(value, digits)


def coarse_share(ratio: float) -> str:
    """The out-of-tolerance share as a bucket label (``"under 10%"``), never the exact ratio."""
    if ratio != ratio:  # NaN
        return "unknown"
    for bound, label in SHARE_BUCKETS:
        if ratio <= bound:
            return label
    return "all"


def _get(leaf: Any, key: str, default: Any = None) -> Any:
    return leaf.get(key, default) if isinstance(leaf, dict) else getattr(leaf, key, default)


def leaf_view(leaf: Any) -> dict[str, Any]:
    """The agent-visible view of one compared leaf (a ``runtime.compare.LeafResult`` or its JSON dict)."""
    view: dict[str, Any] = {"path": _get(leaf, "path"), "status": "pass" if _get(leaf, "all_close") else "fail"}
    if _get(leaf, "all_close"):
        return view
    if _get(leaf, "error"):
        view["error"] = _get(leaf, "error")
    if not _get(leaf, "shape_match", True):
        view["actual_shape"], view["expected_shape"] = _get(leaf, "actual_shape"), _get(leaf, "expected_shape")
    if _get(leaf, "actual_dtype") != _get(leaf, "expected_dtype"):
        view["actual_dtype"], view["expected_dtype"] = _get(leaf, "actual_dtype"), _get(leaf, "expected_dtype")
    if not _get(leaf, "shape_match", True) or _get(leaf, "error"):
        return view
    view["out_of_tolerance"] = coarse_share(float(_get(leaf, "out_of_tolerance_ratio", 0.0)))
    view["max_diff"] = coarse(float(_get(leaf, "max_diff", 0.0)))
    for key in ("nan_count", "inf_count"):
        if _get(leaf, key):
            view["has_" + key[:3]] = True
    examples = []
    for o in list(_get(leaf, "outliers") or [])[:MAX_EXAMPLES]:
        examples.append({"index": _get(o, "index"), "actual": coarse(_float(_get(o, "actual"))),
                         "expected": coarse(_float(_get(o, "expected")))})
    if examples:
        view["worst"] = examples
    return view


def _float(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, str):  # JSON spelling of non-finite floats
        return float({"Infinity": "inf", "-Infinity": "-inf"}.get(x, x))
    return float(x)


def evidence_id(inputs: dict[str, str], outcome: Any) -> str:
    """A short identity of "this outcome on these inputs" that agents may see (no measurement in it).

    Args:
        inputs: content hashes of the input files (name -> sha256).
        outcome: JSON data of the outcome only (verdicts, per-case / per-leaf pass or fail, error kinds).
    """
    blob = json.dumps({"inputs": inputs, "outcome": outcome}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
