"""Tensor comparison: the one numeric judge of PTO Forge.

``detailed_tensor_compare`` follows the upstream v2 semantics (workflow.md Part B §8.1) so that statistics
quoted in MEMORY.md mean the same thing as in the upstream workflow:

* argument 1 is the candidate, argument 2 the reference; an element passes iff
  ``|a - b| <= atol + rtol * |b|`` (asymmetric, relative to the reference);
* no broadcasting: a shape mismatch is a failure with ``inf`` diffs, never an exception;
* NaN anywhere fails (even NaN vs NaN); same-signed infinities match; finite vs inf and +inf vs -inf fail;
* both operands are normalised to float32 first (bf16/fp16/fp8/int/bool up, fp64 down), like upstream's
  ``.cpu().float()``.

``compare_outputs`` walks tuple/list/dict outputs leaf by leaf (paths like ``output[1]['m']``) and returns
JSON-safe :class:`LeafResult` models; container mismatches become failing results with a clear message. Unlike
upstream, it judges a leaf whose two sides hold integers or booleans in float64 (exact up to 2**53), not float32.
Works on numpy arrays and, when torch is installed, on torch tensors (imported lazily).
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = [
    "CompareOptions",
    "LeafResult",
    "Outlier",
    "TensorCompareOptions",
    "compare_outputs",
    "detailed_tensor_compare",
    "tensor_leaf_pairs",
    "to_float32",
]

log = logging.getLogger(__name__)

_REL_EPS = 1e-8
_LEGACY_ORDER = ("rtol", "atol", "verbose", "max_outliers_display")


@dataclass(frozen=True)
class CompareOptions:
    """Tolerances and reporting knobs (upstream ``TensorCompareOptions``)."""

    rtol: float = 1e-3
    atol: float = 1e-3
    verbose: bool = True
    max_outliers_display: int = 20


TensorCompareOptions = CompareOptions  # upstream name


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _is_tensor(x: Any) -> bool:
    return isinstance(x, np.ndarray | np.generic) or _is_torch(x)


def to_float32(x: Any) -> np.ndarray:
    """Normalise a numpy array / numpy scalar / torch tensor to a float32 numpy array (upstream ``.float()``)."""
    if _is_torch(x):
        x = x.detach().cpu().float().numpy()
    arr = np.asarray(x)
    if arr.dtype == np.float32:
        return arr
    return arr.astype(np.float32)


def _resolve_options(
    tensor_name: Any, legacy: tuple[Any, ...], options: CompareOptions | None, legacy_kw: dict[str, Any]
) -> tuple[str, CompareOptions]:
    name_alias = legacy_kw.pop("name", None)
    if tensor_name is not None and not isinstance(tensor_name, str):
        # `detailed_tensor_compare(a, b, 1e-3, 1e-3)`: the third positional is a legacy rtol, not a label
        legacy = (tensor_name, *legacy)
        tensor_name = None
    if tensor_name is not None and name_alias is not None:
        raise TypeError("detailed_tensor_compare: give the label either as tensor_name or as name=, not both")
    label = tensor_name if tensor_name is not None else (name_alias if name_alias is not None else "tensor")
    if len(legacy) > len(_LEGACY_ORDER):
        raise TypeError(
            f"detailed_tensor_compare: at most {len(_LEGACY_ORDER)} legacy positional options "
            f"({', '.join(_LEGACY_ORDER)}), got {len(legacy)}"
        )
    unknown = sorted(set(legacy_kw) - set(_LEGACY_ORDER))
    if unknown:
        raise TypeError(f"detailed_tensor_compare: unknown option(s) {unknown}; known: {list(_LEGACY_ORDER)}")
    updates: dict[str, Any] = dict(zip(_LEGACY_ORDER, legacy, strict=False))
    both = sorted(set(updates) & set(legacy_kw))
    if both:
        raise TypeError(f"detailed_tensor_compare: option(s) {both} given both positionally and by keyword")
    updates.update(legacy_kw)
    opts = options if options is not None else CompareOptions()
    if updates:
        opts = dataclasses.replace(opts, **updates)
    return str(label), opts


def detailed_tensor_compare(
    tensor1: Any,
    tensor2: Any,
    tensor_name: Any = None,
    *legacy: Any,
    options: CompareOptions | None = None,
    **legacy_kw: Any,
) -> dict[str, Any]:
    """Compare candidate ``tensor1`` with reference ``tensor2`` elementwise; never raises on mismatch.

    Returns the upstream v2 statistics dict (see module docstring). ``outlier_*`` entries hold at most
    ``options.max_outliers_display`` outliers, sorted by descending absolute diff (ties: flat index order);
    they are ``None`` when every element passes.

    Raises:
        TypeError: misuse of the option arguments (too many legacy positionals, unknown keyword, an option
            given twice, label given twice).
    """
    label, opts = _resolve_options(tensor_name, legacy, options, dict(legacy_kw))
    return _compare(to_float32(tensor1), to_float32(tensor2), label, opts)


def _compare(a: np.ndarray, b: np.ndarray, label: str, opts: CompareOptions,
             equal: np.ndarray | None = None) -> dict[str, Any]:
    """`detailed_tensor_compare` on two arrays already in the float type the judgement works in (float32, as
    upstream; float64 for integer leaves) and ``equal``, the elements equal as integers, which alone pass when given
    (:func:`_judged_arrays`)."""
    ft = a.dtype.type
    result: dict[str, Any] = {
        "tensor_name": label,
        "tensor1_shape": tuple(int(d) for d in a.shape),
        "tensor2_shape": tuple(int(d) for d in b.shape),
        "rtol": float(opts.rtol),
        "atol": float(opts.atol),
    }
    if a.shape != b.shape:
        total = max(a.size, b.size)
        result.update(
            total_elements=int(total),
            out_of_tolerance_count=int(total),
            out_of_tolerance_ratio=1.0 if total else 0.0,
            max_diff=math.inf,
            mean_diff=math.inf,
            std_diff=0.0,
            max_out_of_tolerance_diff=math.inf,
            mean_out_of_tolerance_diff=math.inf,
            all_close=False,
            shape_match=False,
            tolerance_mask=None,
            diff_tensor=None,
            **_no_outliers(),
        )
        if opts.verbose:
            log.info("%s: shape mismatch %s vs %s", label, a.shape, b.shape)
        return result

    total = int(a.size)
    with np.errstate(invalid="ignore", over="ignore"):
        finite_pair = np.isfinite(a) & np.isfinite(b)
        same_inf = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
        diff = np.where(finite_pair, np.abs(a - b), ft(0.0)).astype(ft)
        invalid = ~(finite_pair | same_inf)
        diff = np.where(invalid, ft(np.inf), diff).astype(ft)
        rel = np.where(finite_pair, diff / (np.abs(b) + ft(_REL_EPS)), ft(0.0))
        rel = np.where(invalid, ft(np.inf), rel).astype(ft)
        threshold = ft(opts.atol) + ft(opts.rtol) * np.abs(b)
        passed = same_inf | (finite_pair & (diff <= threshold))
        if equal is not None:  # built only for leaves of one shape
            unequal = ~equal & passed
            passed = passed & equal
            diff = np.where(unequal & (diff == 0), ft(1.0), diff).astype(ft)  # apart by 1 at least, below float64's step
    failed = ~passed
    count = int(failed.sum())
    if total:
        d64 = diff.astype(np.float64)
        max_diff = float(d64.max())
        mean_diff = float(d64.mean()) if not np.isinf(max_diff) else math.inf
        std_diff = float(d64.std()) if not np.isinf(max_diff) else math.inf
    else:
        max_diff = mean_diff = std_diff = 0.0
    bad = diff[failed].astype(np.float64)
    result.update(
        total_elements=total,
        out_of_tolerance_count=count,
        out_of_tolerance_ratio=(count / total) if total else 0.0,
        max_diff=max_diff,
        mean_diff=mean_diff,
        std_diff=std_diff,
        max_out_of_tolerance_diff=float(bad.max()) if count else 0.0,
        mean_out_of_tolerance_diff=(float(bad.mean()) if not np.isinf(bad.max()) else math.inf) if count else 0.0,
        all_close=count == 0,
        shape_match=True,
        tolerance_mask=passed,
        diff_tensor=diff,
    )
    if count:
        flat_bad = np.flatnonzero(failed.ravel())
        order = np.argsort(-diff.ravel()[flat_bad], kind="stable")[: max(0, int(opts.max_outliers_display))]
        pick = flat_bad[order]
        idx = np.unravel_index(pick, a.shape) if a.ndim else ()
        result.update(
            outlier_indices=tuple(np.asarray(i) for i in idx),
            outlier_values1=a.ravel()[pick],
            outlier_values2=b.ravel()[pick],
            outlier_diffs=diff.ravel()[pick],
            outlier_relative_diffs=rel.ravel()[pick],
        )
    else:
        result.update(_no_outliers())
    if opts.verbose:
        _log_report(label, result, opts)
    return result


def _no_outliers() -> dict[str, Any]:
    return dict.fromkeys(
        ("outlier_indices", "outlier_values1", "outlier_values2", "outlier_diffs", "outlier_relative_diffs")
    )


def _log_report(label: str, r: dict[str, Any], opts: CompareOptions) -> None:
    if not log.isEnabledFor(logging.INFO):
        return
    log.info(
        "%s: total=%d out_of_tol=%d (%.4f%%) max=%.6g mean=%.6g std=%.6g atol=%g rtol=%g",
        label, r["total_elements"], r["out_of_tolerance_count"], 100 * r["out_of_tolerance_ratio"],
        r["max_diff"], r["mean_diff"], r["std_diff"], opts.atol, opts.rtol,
    )
    if r["outlier_diffs"] is not None:
        for i in range(len(r["outlier_diffs"])):
            index = tuple(int(ix[i]) for ix in r["outlier_indices"])
            log.info("  %s a=%r b=%r abs=%g rel=%g", index, float(r["outlier_values1"][i]),
                     float(r["outlier_values2"][i]), float(r["outlier_diffs"][i]),
                     float(r["outlier_relative_diffs"][i]))
        rest = r["out_of_tolerance_count"] - len(r["outlier_diffs"])
        if rest > 0:
            log.info("  ... and %d more", rest)
    log.info("%s: Tensor Matching: %s", label, r["all_close"])


# ----------------------------------------------------------------------------------------------------------
# leaf recursion


def tensor_leaf_pairs(actual: Any, expected: Any, path: str = "output") -> list[tuple[str, Any, Any]]:
    """Pair up the tensor leaves of two output structures (upstream helper).

    Raises:
        AssertionError: container types, lengths or dict keys differ.
        TypeError: a leaf is not a tensor.
        ValueError: there are no leaves at all.
    """
    pairs = list(_walk(actual, expected, path))
    if not pairs:
        raise ValueError(f"{path}: no tensor leaves to compare")
    return pairs


def _kind(x: Any) -> str:
    if _is_tensor(x):
        return "tensor"
    if isinstance(x, Mapping):
        return "dict"
    if isinstance(x, tuple | list):
        return "sequence"
    return type(x).__name__


def _walk(actual: Any, expected: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    ka, kb = _kind(actual), _kind(expected)
    if ka != kb:
        raise AssertionError(f"{path}: candidate is a {ka}, reference is a {kb}")
    if ka == "tensor":
        yield path, actual, expected
    elif ka == "dict":
        if set(actual) != set(expected):
            missing = sorted(map(str, set(expected) - set(actual)))
            extra = sorted(map(str, set(actual) - set(expected)))
            raise AssertionError(f"{path}: dict keys differ (missing {missing}, unexpected {extra})")
        for key in expected:
            yield from _walk(actual[key], expected[key], f"{path}[{key!r}]")
    elif ka == "sequence":
        if len(actual) != len(expected):
            raise AssertionError(f"{path}: candidate has {len(actual)} items, reference has {len(expected)}")
        for i, (x, y) in enumerate(zip(actual, expected, strict=True)):
            yield from _walk(x, y, f"{path}[{i}]")
    else:
        raise TypeError(f"{path}: leaf of type {ka} is not a tensor")


class Outlier(BaseModel):
    """One out-of-tolerance element (the only golden values an agent ever sees)."""

    model_config = ConfigDict(frozen=True, ser_json_inf_nan="strings")

    index: list[int]
    actual: float
    expected: float
    abs_diff: float
    rel_diff: float


class LeafResult(BaseModel):
    """JSON-safe comparison result of one output leaf."""

    model_config = ConfigDict(frozen=True, ser_json_inf_nan="strings")

    path: str
    all_close: bool
    shape_match: bool = False
    actual_shape: list[int] = []
    expected_shape: list[int] = []
    actual_dtype: str = ""
    expected_dtype: str = ""
    total_elements: int = 0
    out_of_tolerance_count: int = 0
    out_of_tolerance_ratio: float = 0.0
    max_diff: float = 0.0
    mean_diff: float = 0.0
    std_diff: float = 0.0
    max_out_of_tolerance_diff: float = 0.0
    mean_out_of_tolerance_diff: float = 0.0
    max_rel_diff: float = 0.0
    nan_count: int = 0
    inf_count: int = 0
    atol: float = 0.0
    rtol: float = 0.0
    outliers: list[Outlier] = []
    error: str | None = None


def _dtype_name(x: Any) -> str:
    if _is_torch(x):
        return str(x.dtype).removeprefix("torch.")
    try:
        from runtime.dtypes import name_of

        return name_of(np.asarray(x).dtype)
    except Exception:  # noqa: BLE001 - a label only
        return str(np.asarray(x).dtype)


CHUNK_ELEMENTS = 1 << 22
"""Leaves of more elements than :data:`CHUNKED_ABOVE` are compared in chunks of this many (16 MiB of fp32)."""
CHUNKED_ABOVE = 1 << 24
"""Element count above which a numpy leaf is compared chunk by chunk: the whole-array statistics held about ten
float32/float64 temporaries the size of the leaf (a 1 GiB output made the verifier peak ~8 GiB above its data)."""


def _judged_arrays(a: Any, b: Any, atol: float, rtol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Both leaves in the float type their judgement works in, and where they are equal as integers (else None).

    Leaves that both hold integers or booleans are judged in float64, exact up to 2**53 (red team s35: an int32
    result computed through one fp32 rounding - ``slot * 2**24 + hid`` - compared equal to the golden's int32 once both
    were normalised to float32, so every id above 2**24 was judged right whatever its last bits), and with tolerance 0
    as integers, which float64 cannot tell apart above 2**53 (red team s35b: packed int64 ids near 2**57 one apart
    compared equal). Every other leaf is judged in float32, as upstream."""
    def integral(x: Any) -> bool:
        if _is_torch(x):
            return not (x.dtype.is_floating_point or x.dtype.is_complex)
        return np.asarray(x).dtype.kind in "iub"

    if not (integral(a) and integral(b)):
        return to_float32(a), to_float32(b), None
    x, y = (v.detach().cpu().numpy() if _is_torch(v) else np.asarray(v) for v in (a, b))
    equal = None
    if not (atol or rtol) and x.shape == y.shape:
        if {x.dtype.kind, y.dtype.kind} == {"i", "u"} and max(x.dtype.itemsize, y.dtype.itemsize) == 8:
            equal = np.asarray(x.astype(object) == y.astype(object), dtype=bool)  # int64 vs uint64 promote to float
        else:
            equal = np.asarray(x == y, dtype=bool)
    return x.astype(np.float64), y.astype(np.float64), equal


def _leaf_result(path: str, a: Any, b: Any, atol: float, rtol: float, max_outliers: int) -> LeafResult:
    if (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
            and a.size > CHUNKED_ABOVE):
        return _leaf_result_chunked(path, a, b, atol, rtol, max_outliers, CHUNK_ELEMENTS)
    af, bf, equal = _judged_arrays(a, b, atol, rtol)
    r = _compare(af, bf, path, CompareOptions(rtol=rtol, atol=atol, verbose=False, max_outliers_display=max_outliers),
                 equal)
    outliers: list[Outlier] = []
    if r["outlier_diffs"] is not None:
        for i in range(len(r["outlier_diffs"])):
            outliers.append(
                Outlier(
                    index=[int(ix[i]) for ix in r["outlier_indices"]],
                    actual=float(r["outlier_values1"][i]),
                    expected=float(r["outlier_values2"][i]),
                    abs_diff=float(r["outlier_diffs"][i]),
                    rel_diff=float(r["outlier_relative_diffs"][i]),
                )
            )
    max_rel = 0.0
    if r["shape_match"] and r["total_elements"]:
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            rel = r["diff_tensor"].astype(np.float64) / (np.abs(bf.astype(np.float64)) + _REL_EPS)
        max_rel = float(np.nanmax(rel)) if rel.size else 0.0
    elif not r["shape_match"]:
        max_rel = math.inf
    return LeafResult(
        path=path,
        all_close=bool(r["all_close"]),
        shape_match=bool(r["shape_match"]),
        actual_shape=list(r["tensor1_shape"]),
        expected_shape=list(r["tensor2_shape"]),
        actual_dtype=_dtype_name(a),
        expected_dtype=_dtype_name(b),
        total_elements=r["total_elements"],
        out_of_tolerance_count=r["out_of_tolerance_count"],
        out_of_tolerance_ratio=r["out_of_tolerance_ratio"],
        max_diff=r["max_diff"],
        mean_diff=r["mean_diff"],
        std_diff=r["std_diff"],
        max_out_of_tolerance_diff=r["max_out_of_tolerance_diff"],
        mean_out_of_tolerance_diff=r["mean_out_of_tolerance_diff"],
        max_rel_diff=max_rel,
        nan_count=int(np.isnan(af).sum()),
        inf_count=int(np.isinf(af).sum()),
        atol=float(atol),
        rtol=float(rtol),
        outliers=outliers,
    )


def _leaf_result_chunked(path: str, a: np.ndarray, b: np.ndarray, atol: float, rtol: float, max_outliers: int,
                         chunk: int) -> LeafResult:
    """:func:`_leaf_result` for a large leaf, in bounded memory: the same statistics merged over flat chunks.

    Counts, maxima, outliers (order: largest diff first, then flat index) and NaN/inf counts are exactly the
    whole-array ones; the mean and standard deviation of the diffs are merged per chunk (Chan et al.), equal to
    the whole-array values up to float64 rounding.
    """
    fa, fb = a.reshape(-1), b.reshape(-1)
    opts = CompareOptions(rtol=rtol, atol=atol, verbose=False, max_outliers_display=max_outliers)
    total = int(fa.size)
    count = nan_count = inf_count = 0
    max_diff = max_oot = max_rel = 0.0
    n_seen, mean, m2 = 0, 0.0, 0.0
    oot_sum, oot_inf, diff_inf = 0.0, False, False
    picked: list[tuple[float, int, float, float, float]] = []
    for start in range(0, total, chunk):
        af, bf, equal = _judged_arrays(fa[start:start + chunk], fb[start:start + chunk], atol, rtol)
        r = _compare(af, bf, path, opts, equal)
        n = int(r["total_elements"])
        count += int(r["out_of_tolerance_count"])
        max_diff = max(max_diff, float(r["max_diff"]))
        if math.isinf(r["max_diff"]):
            diff_inf = True
        elif n:
            delta = float(r["mean_diff"]) - mean
            both = n_seen + n
            mean += delta * n / both
            m2 += float(r["std_diff"]) ** 2 * n + delta * delta * n_seen * n / both
            n_seen = both
        k = int(r["out_of_tolerance_count"])
        if k:
            max_oot = max(max_oot, float(r["max_out_of_tolerance_diff"]))
            if math.isinf(r["mean_out_of_tolerance_diff"]):
                oot_inf = True
            else:
                oot_sum += float(r["mean_out_of_tolerance_diff"]) * k
        if r["outlier_diffs"] is not None:
            (idx,) = r["outlier_indices"]
            picked += [(float(r["outlier_diffs"][i]), start + int(idx[i]), float(r["outlier_values1"][i]),
                        float(r["outlier_values2"][i]), float(r["outlier_relative_diffs"][i]))
                       for i in range(len(idx))]
            picked = sorted(picked, key=lambda t: (-t[0], t[1]))[: max(0, int(max_outliers))]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            rel = r["diff_tensor"].astype(np.float64) / (np.abs(bf.astype(np.float64)) + _REL_EPS)
        if rel.size:
            max_rel = max(max_rel, float(np.nanmax(rel)))
        nan_count += int(np.isnan(af).sum())
        inf_count += int(np.isinf(af).sum())
    mean_diff = math.inf if diff_inf else mean
    std_diff = math.inf if diff_inf else math.sqrt(m2 / n_seen) if n_seen else 0.0
    outliers = [Outlier(index=[int(i) for i in np.unravel_index(flat, a.shape)] if a.ndim else [],
                        actual=v1, expected=v2, abs_diff=d, rel_diff=rd)
                for d, flat, v1, v2, rd in picked]
    return LeafResult(
        path=path, all_close=count == 0, shape_match=True, actual_shape=[int(d) for d in a.shape],
        expected_shape=[int(d) for d in b.shape], actual_dtype=_dtype_name(a), expected_dtype=_dtype_name(b),
        total_elements=total, out_of_tolerance_count=count, out_of_tolerance_ratio=count / total if total else 0.0,
        max_diff=max_diff, mean_diff=mean_diff, std_diff=std_diff, max_out_of_tolerance_diff=max_oot,
        mean_out_of_tolerance_diff=(math.inf if oot_inf else oot_sum / count) if count else 0.0,
        max_rel_diff=max_rel, nan_count=nan_count, inf_count=inf_count, atol=float(atol), rtol=float(rtol),
        outliers=outliers,
    )


def compare_outputs(
    actual: Any,
    expected: Any,
    *,
    atol: float,
    rtol: float,
    prefix: str = "output",
    max_outliers: int = 20,
) -> list[LeafResult]:
    """Compare every leaf of two output structures; never raises on mismatch.

    A structural mismatch (container types, lengths, keys, non-tensor leaves, no leaves) yields a single
    failing :class:`LeafResult` whose ``error`` says what differs.
    """
    try:
        pairs = tensor_leaf_pairs(actual, expected, prefix)
    except (AssertionError, TypeError, ValueError) as exc:
        return [LeafResult(path=prefix, all_close=False, error=str(exc))]
    return [_leaf_result(path, a, b, atol, rtol, max_outliers) for path, a, b in pairs]
