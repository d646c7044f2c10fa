"""Deterministic input generation from SPEC.md (the numpy path; golden.py's ``make_inputs`` overrides it).

Same case -> identical bytes: input ``i`` of a case is drawn from ``np.random.default_rng([seed, i])``, in
float64, then rounded to fp32 and to the target dtype; values are clipped to the largest interval of
*representable* values inside the declared range first, so rounding can never leave the range (and bf16 /
fp16 / fp8 values are exactly representable by construction). Integers are uniform over the integer points
of the range (bands do not apply); bools are fair coin flips. An unseen case marked ``special`` then gets some
all-zero, constant, near-constant and tied rows (:func:`apply_special_values`); with a golden ``make_inputs`` the
golden owns the inputs and no special values are added.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from runtime.dtypes import is_float, is_integer, name_of, to_numpy
from runtime.opdir._cases import Case
from runtime.opdir._problems import OpDirError, Problem
from runtime.opdir._spec import Spec, TensorSpec

__all__ = ["DEFAULT_FLOAT_RANGE", "DEFAULT_INT_RANGE", "END_KINDS", "FAMILY_KINDS", "FEW_ROWS", "INIT_KINDS",
           "VECTOR_KINDS", "apply_special_values",
           "band_values", "few_vectors", "generate_input", "generate_inputs", "input_rng", "one_vector"]

DEFAULT_FLOAT_RANGE = (-1.0, 1.0)
DEFAULT_INT_RANGE = (0.0, 16.0)


def input_rng(case: Case, index: int) -> np.random.Generator:
    """The generator for input ``index`` of ``case``."""
    return np.random.default_rng([case.seed, index])


def _step(value: float, dtype: np.dtype, up: bool) -> float:
    """The neighbour of a representable ``value`` in ``dtype`` (one ulp up or down)."""
    if value == 0.0:
        tiny = np.zeros(1, dtype=dtype).view(f"u{dtype.itemsize}")
        tiny[0] = 1
        mag = float(tiny.view(dtype)[0])
        return mag if up else -mag
    arr = np.array([value], dtype=np.float64).astype(dtype)
    bits = arr.view(f"u{dtype.itemsize}")
    if (value > 0) == up:
        bits[0] += 1
    else:
        bits[0] -= 1
    return float(arr.astype(np.float64)[0])


def _representable_bounds(lo: float, hi: float, dtype: np.dtype) -> tuple[float, float]:
    """Smallest representable value >= lo and largest <= hi (values as float64)."""
    if dtype == np.float64:
        return lo, hi
    top = float(ml_dtypes.finfo(dtype).max)
    lo, hi = max(lo, -top), min(hi, top)
    if lo > hi:
        raise ValueError(f"no {name_of(dtype)} value lies in the range (its largest finite value is {top:g})")

    def cast(v: float) -> float:
        return float(np.array([v], dtype=np.float64).astype(np.float32).astype(dtype).astype(np.float64)[0])

    rlo, rhi = cast(lo), cast(hi)
    if rlo < lo:
        rlo = _step(rlo, dtype, up=True)
    if rhi > hi:
        rhi = _step(rhi, dtype, up=False)
    if not rlo <= rhi:
        raise ValueError(f"no {name_of(dtype)} value lies in the range [{lo:g}, {hi:g}]")
    return rlo, rhi


def band_values(lo: float, hi: float, normal: bool, band: str, shape: tuple[int, ...],
                rng: np.random.Generator) -> np.ndarray:
    """float64 values of ``shape`` in [lo, hi] for a value band (docs/opdir.md): ``normal`` = the declared
    distribution (normal around the middle when ``normal``, else uniform), ``small`` = ~1% of it near 0, ``large``
    = the top quarter of magnitudes, ``offset`` = a non-zero mean. Also what an imported task's ``make_inputs``
    draws its float inputs with (`orchestrator.adapters.kernelbench`)."""
    width = hi - lo
    n = math.prod(shape)
    if band in ("normal", "small"):
        if normal:
            base = np.clip(rng.normal((lo + hi) / 2, width / 6, n), lo, hi)
        else:
            base = rng.uniform(lo, hi, n)
        if band == "small":
            centre = min(max(0.0, lo), hi)
            base = centre + (base - centre) * 1e-2
        return base.reshape(shape)
    if band == "large":
        top = max(abs(lo), abs(hi))
        segments = [(max(lo, 0.75 * top), min(hi, top)), (max(lo, -top), min(hi, -0.75 * top))]
        segments = [(a, b) for a, b in segments if b >= a]
        total = sum(b - a for a, b in segments)
        u = rng.uniform(0.0, total, n)
        a0, b0 = segments[0]
        out = a0 + u
        if len(segments) > 1:
            a1 = segments[1][0]
            out = np.where(u <= b0 - a0, out, a1 + (u - (b0 - a0)))
        return out.reshape(shape)
    if band == "offset":
        a, b = (lo + 0.6 * width, hi) if abs(hi) >= abs(lo) else (lo, lo + 0.4 * width)
        return rng.uniform(a, b, n).reshape(shape)
    if band == TOP_BAND:
        a, b = _top_segment(lo, hi)
        return rng.uniform(a, b, n).reshape(shape)
    raise ValueError(f"unknown value band {band!r}")


TOP_BAND = "top"
"""(unseen drawing version 10) Every value of every integer input in the eighth of its range at the end of larger
magnitude, one sign: products and sums over an axis add up instead of cancelling, so an integer output reaches the
largest magnitude the SPEC allows. Red team s35: an int8 GEMM through the fp16 cube (exact while a partial sum stays
under 2**24) passed every verification - independent random operands keep a 4096-long dot product near 2e6, and
``a @ a.T`` of saturated embeddings reaches 6.6e7. Float inputs of the case take the "large" band (``generate_input``);
the band function itself serves any caller asking for it."""


TOP_SPLIT_BAND = "top-split"
"""(unseen drawing version 10) :data:`TOP_BAND`, but the first input's (if an integer one) second half along its last
axis drawn from the eighth at the other end of its range: sums along that axis climb to the largest magnitude, then cancel. Red team
s35b: a GEMM that redid its result exactly only where the final value was large passed the top band - its partial sums
of ~3e7 cancelling to a small result were never drawn."""


def _split_last_axis(values: np.ndarray, other: np.ndarray) -> None:
    """``values`` with the second half of its last axis taken from ``other`` (in place)."""
    if values.ndim and values.shape[-1] >= 2:
        half = values.shape[-1] // 2
        values[..., half:] = other[..., half:]


def _top_segment(lo: float, hi: float) -> tuple[float, float]:
    """The eighth of [lo, hi] at its end of larger magnitude."""
    w = (hi - lo) / 8
    return (hi - w, hi) if abs(hi) >= abs(lo) else (lo, lo + w)


def _int_points(lo: float, hi: float, dtype: np.dtype) -> tuple[int, int]:
    """The first and last integer point of [lo, hi] an integer input of ``dtype`` is drawn from (inclusive)."""
    info = np.iinfo(dtype)
    return max(math.ceil(lo), int(info.min)), min(math.floor(hi), int(info.max))


def generate_input(t: TensorSpec, case: Case, index: int) -> np.ndarray:
    """Input ``index`` (declared as ``t``) for ``case``."""
    shape = t.concrete_shape(case.dims)
    name = t.concrete_dtype(case.dtype)
    dtype = to_numpy(name)
    rng = input_rng(case, index)
    if name == "bool":
        return rng.random(shape) < 0.5
    if is_integer(name):
        lo, hi = t.range or DEFAULT_INT_RANGE
        ilo, ihi = _int_points(lo, hi, dtype)
        if ilo > ihi:
            raise ValueError(f"no {name} value lies in the range [{lo:g}, {hi:g}]")
        if case.band in (TOP_BAND, TOP_SPLIT_BAND):
            a, b = _top_segment(ilo, ihi)
            top = (math.ceil(a), ihi) if abs(ihi) >= abs(ilo) else (ilo, math.floor(b))
            other = (ilo, ilo + (top[1] - top[0])) if top[1] == ihi else (ihi - (top[1] - top[0]), ihi)
            values = rng.integers(top[0], top[1], size=shape, endpoint=True, dtype=np.int64)
            if case.band == TOP_SPLIT_BAND and index == 0:
                _split_last_axis(values, rng.integers(other[0], other[1], size=shape, endpoint=True, dtype=np.int64))
            return values.astype(dtype)
        return rng.integers(ilo, ihi, size=shape, endpoint=True, dtype=np.int64).astype(dtype)
    assert is_float(name)
    lo, hi = t.range or DEFAULT_FLOAT_RANGE
    rlo, rhi = _representable_bounds(lo, hi, dtype)
    # float inputs of a top case take the "large" band (every SPEC's cases run it too): an honest fp16 kernel is
    # judged by a tolerance, and the gym's sum_lstm (fp16 LSTM gates) left it on a few elements with every input at
    # the end of the imported range - the band is for integer results, which must be exact
    band = "large" if case.band in (TOP_BAND, TOP_SPLIT_BAND) else case.band
    values = np.clip(band_values(lo, hi, t.distribution == "normal", band, shape, rng), rlo, rhi)
    if dtype == np.float64:
        return values.astype(np.float64)
    return values.astype(np.float32).astype(dtype)


_SPECIAL_STREAM = 0x5BEC
_TINY_STREAM = 0x7154
_TINY_SCALE = 2.0 ** -7
"""A tiny row is its drawn values moved towards the range's point nearest 0 by this factor (exact in binary)."""
_TINY_MIN_ROWS = 6
"""Inputs with fewer rows get no tiny rows: the other special kinds keep their rows."""
_SPECIAL_SHARE = 8
"""In a case with special values, about one row in this many of each input is all zeros, one constant, one
near-constant, one with ties."""
_NEAR_OFFSET = (0.85, 0.95)
"""A near-constant row sits at this share of the range's largest magnitude (drawn per row) ..."""
_NEAR_SPREAD = 1e-3
"""... and spreads over +- this share of the range's width (at least two units in the last place of the dtype)."""
_NEAR_SPREAD_COLUMNS = 1e-2
"""(columns, unseen drawing version 7) the spread of a near-constant column: with the rows' 1e-3, an honest two-pass
fp32 BatchNorm over the batch already departed from its golden by more than 1e-4 (red team s32); 1e-2 keeps it
inside while a one-pass variance is 2.7e-2 off"""


_NEAR_SPREAD_CHANNEL = 4e-3
_CHANNEL_SHORT = 8192
"""(version 8) the spread of a near-constant vector over all axes but one middle axis (a channel of [B, C, H, W]) of
at most ``_CHANNEL_SHORT`` values; a longer one spreads over :data:`_NEAR_SPREAD_COLUMNS`. Red team s33b: at 1e-2
a one-pass variance over three RGB channels of 7424 values passed two seeds of three (4e-3: caught on all), and at
4e-3 an honest two-pass fp32 BatchNorm2d over 31360 values departed by 1.3-2.5e-4 (1e-2: inside 1e-4) - the honest
kernel's rounding grows with the count too."""


def _short(v: float, dtype: np.dtype, rlo: float, rhi: float) -> float:
    """``v`` with at most 8 significant bits when that stays in [rlo, rhi] and is exact in ``dtype`` (else ``v``):
    a row of it sums exactly in fp32 in any order, so its mean is ``v`` and its variance 0 for any kernel."""
    w = float(np.array([v], dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)[0])
    if rlo <= w <= rhi and float(np.array([w]).astype(dtype).astype(np.float64)[0]) == w:
        return w
    return v


def _signs(mag: float, rlo: float, rhi: float) -> list[float]:
    """The signs a value of magnitude ``mag`` may take in [rlo, rhi]; the larger side's when neither fits."""
    return [sg for sg in (1.0, -1.0) if rlo <= sg * mag <= rhi] or [1.0 if abs(rhi) >= abs(rlo) else -1.0]


def _near_constant(n: int, dtype: np.dtype, rlo: float, rhi: float, rng: np.random.Generator,
                   share: float = _NEAR_SPREAD) -> np.ndarray:
    """A row of ``n`` values close to one large value: ``c + u``, ``|c|`` about 0.9 of the range's largest magnitude,
    ``|u|`` at most :data:`_NEAR_SPREAD` of its width (never below two ulps of ``dtype`` at ``c``), in [rlo, rhi]."""
    top = max(abs(rlo), abs(rhi))
    mag = float(rng.uniform(*_NEAR_OFFSET)) * top
    signs = _signs(mag, rlo, rhi)
    centre = float(np.clip(signs[int(rng.integers(0, len(signs)))] * mag, rlo, rhi))
    centre = float(np.array([centre]).astype(np.float32).astype(dtype).astype(np.float64)[0])
    ulp = abs(_step(centre, dtype, up=True) - centre) if dtype != np.float64 else abs(float(np.spacing(centre)))
    spread = max(share * (rhi - rlo), 2.0 * ulp)
    row = np.clip(centre + rng.uniform(-spread, spread, n), rlo, rhi)
    return row.astype(np.float32).astype(dtype) if dtype != np.float64 else row


def apply_special_values(t: TensorSpec, case: Case, index: int, values: np.ndarray, *, ties: bool = True,
                         tiny: bool = False) -> np.ndarray:
    """``values`` (input ``index`` of ``case``, declared as ``t``) with special rows, for a ``case.special`` case.

    Random draws in bands never hold an all-zero row, a constant row or two equal values, and those are the inputs
    where a kernel without ``eps`` divides 0 by 0 (rms_norm, layer_norm) or a top-k breaks a tie the wrong way (red
    team s16 E). A "row" is a vector along the last axis. Of the rows, in a seeded random order, about 1 in
    :data:`_SPECIAL_SHARE` (at least one each, as long as rows last) become:

    - **all zeros**, only when 0 lies in the input's range (for an integer input: among its integer points);
    - **constant**: one of the row's own values everywhere (for floats shortened to 8 significant bits when that
      stays in the range, so that the row's sum is exact in any order);
    - **near-constant** (floats, rows of two or more; red team s17, c15): a large offset and a small spread, e.g.
      18 +- 0.04 in [-20, 20] (:func:`_near_constant`). A one-pass variance ``E[x^2] - mean^2`` cancels
      catastrophically there, though it is exact on zero and constant rows and fine on every band;
    - **ties**: one of the row's values (its largest, its smallest or a random one) copied to a quarter of its
      other positions (at least one, never all).

    - **tiny** (``tiny``, floats with at least :data:`_TINY_MIN_ROWS` rows; unseen drawing version 6): the drawn
      values moved towards the range's point nearest 0 by :data:`_TINY_SCALE`. The tiny rows are drawn from the case
      alone, so every input with as many rows has them at the same places (the other kinds are drawn per input and
      avoid them): an ``eps`` shows where one input's row is small while 1-D weights are not (mutation sweep s30:
      sum_lstm with eps 1e-5 for 1e-6 passed, a band scaling every input at once kept the error under atol).

    - **columns** (``case.columns``, inputs of rank 2 or more; unseen drawing version 7): the same kinds on the vectors
      along one leading axis instead - for rank 3 or more one leading axis, all leading axes together or all
      trailing axes together, the columns cases of a verification in turn (``case.orient``) -, with near-constant columns spread over :data:`_NEAR_SPREAD_COLUMNS`
      of the width, and no tiny rows (red team s32: an op reducing over the batch never met a zero or near-constant
      vector).
    - **families** (``case.families``, float inputs; unseen drawing version 17): :data:`FAMILY_KINDS` among the kinds
      of rows and columns - bell-shaped, sparse, with negative zeros, whole numbers (red team s40: a kernel 10% off
      only on one of them, detected per row on the device, passed every seed of version 16).
    - **masks** (``case.masks``, unseen drawing version 7): boolean inputs get all-False and all-True vectors (rows,
      or columns in a columns case) - a fair coin never leaves a mask row empty (red team s32b).

    Every value stays one the ordinary draw could make (in the range, representable, an integer point of it).
    The first row only gets ties (see below), and so does a 1-D input (one vector, e.g. ``gamma``); scalars, and
    booleans before drawing version 7 (``case.masks``), are left as drawn. ``ties=False`` (a SPEC with ``ties: unspecified``) leaves out the tied rows, the first
    row and 1-D inputs. The golden
    may have no finite answer on such inputs (``x / sum(x)`` on a zero row): the verifier then does not judge the
    kernel on those elements (``runtime.verify``).
    """
    name = t.concrete_dtype(case.dtype)
    arr = np.array(values, copy=True, order="C")
    if (name == "bool" and not case.masks) or arr.ndim == 0 or arr.size < 2 or arr.shape[-1] < 1:
        return arr
    if case.vector and is_float(name) and (one_vector(arr.shape) or few_vectors(arr.shape)):
        # (version 13) one vector, or a few rows: each whole vector of the input is the case's kind
        for r, vec in enumerate(arr.reshape(-1, arr.size if one_vector(arr.shape) else arr.shape[-1])):
            _whole_vector(t, case, index, vec, name, ties=ties, row=r)
        return arr
    if case.columns and arr.ndim >= 2:
        # (version 7) the same kinds along one leading axis, or (rank 3 and more) over all leading axes together or
        # all trailing axes together: the vectors an op reducing over the batch, the sequence, both (BatchNorm over
        # B and L) or a whole [T, D] block (a per-clip scale) reads (red team s32, s32b). The columns cases of a
        # verification take these layouts in turn (`Case.orient`), the two multi-axis ones first (drawn per case, a
        # one-pass variance over B x L passed a quarter of the verifications); every input takes its own rank's
        # (version 8, ``case.middle``) and one middle axis against all the others: the channel of [B, C, H, W]
        # (red team s33: a per-channel one-pass variance of an NCHW BatchNorm2d passed every verification)
        nd = arr.ndim
        middle = case.middle and nd >= 3
        n_opts = nd - 1 + 2 * (nd >= 3) + (nd - 2) * middle
        if middle:
            # k: a leading axis k >= 0, nd - 1 all leading axes, nd all trailing axes, -m middle axis m against the
            # others. Rank 3 [B, L, D]: all leading (BatchNorm1d over B x L), all trailing (per sample), the middle
            # axis, each leading axis. Rank 4 and more [B, C, H, W]: the channel first (BatchNorm2d / GroupNorm
            # statistics - red team s33b: third in turn, a ResNet-sized SPEC's byte budget left 1-3 columns cases and
            # a one-pass per-channel variance passed 91% of verifications), all trailing, all leading, the other
            # middle axes, each leading axis
            order = ([nd - 1, nd, -1] if nd == 3 else [-1, nd, nd - 1, *(-m for m in range(2, nd - 1))]) \
                + list(range(nd - 1))
            k = order[case.orient % n_opts]
        else:
            k = (case.orient + (nd - 1 if nd >= 3 else 0)) % n_opts
        if k < 0:  # middle axis -k: one vector per index of it
            moved = np.ascontiguousarray(np.moveaxis(arr, -k, 0)).reshape(arr.shape[-k], -1)
        elif k < nd - 1:
            moved = np.ascontiguousarray(np.moveaxis(arr, k, -1))
        elif k == nd - 1:
            moved = np.ascontiguousarray(arr.reshape(-1, arr.shape[-1]).T)
        else:
            moved = arr.reshape(arr.shape[0], -1)  # a view: changed in place
        if moved.shape[-1] < 1 or moved.size < 2:
            return arr
        _special_vectors(t, case, index, moved, name, ties=ties, tiny=False,
                         spread=_NEAR_SPREAD_CHANNEL if k < 0 and moved.shape[-1] <= _CHANNEL_SHORT
                         else _NEAR_SPREAD_COLUMNS)
        if k < 0:
            rest = np.moveaxis(arr, -k, 0).shape
            return np.ascontiguousarray(np.moveaxis(moved.reshape(rest), 0, -k))
        if k < nd - 1:
            return np.ascontiguousarray(np.moveaxis(moved, -1, k))
        if k == nd - 1:
            return np.ascontiguousarray(moved.T).reshape(arr.shape)
        return arr
    _special_vectors(t, case, index, arr, name, ties=ties, tiny=tiny, spread=_NEAR_SPREAD)
    return arr


def _special_vectors(t: TensorSpec, case: Case, index: int, arr: np.ndarray, name: str, *, ties: bool, tiny: bool,
                     spread: float) -> None:
    """`apply_special_values`' kinds on the last-axis vectors of ``arr`` (C-contiguous, changed in place)."""
    dtype = to_numpy(name)
    rng = np.random.default_rng([case.seed, index, _SPECIAL_STREAM])
    if name == "bool":
        # (version 7, ``case.masks``) all-False and all-True vectors: a fair coin never leaves a row of a mask empty
        # (red team s32b: a masked mean `sum / count` without a clamp gave NaN for a user's empty row)
        vecs = arr.reshape(-1, arr.shape[-1])
        if vecs.shape[0] > 1:
            order = 1 + rng.permutation(vecs.shape[0] - 1)
            each = max(1, vecs.shape[0] // _SPECIAL_SHARE)
            vecs[order[:each]] = False
            vecs[order[each:2 * each]] = True
        return
    if is_integer(name):
        lo, hi = t.range or DEFAULT_INT_RANGE
        zero_ok, shorten = math.ceil(lo) <= 0 <= math.floor(hi), None
    else:
        lo, hi = t.range or DEFAULT_FLOAT_RANGE
        rlo, rhi = _representable_bounds(lo, hi, dtype)
        zero_ok = rlo <= 0.0 <= rhi

        def shorten(v: float) -> float:
            return _short(v, dtype, rlo, rhi)
    n = arr.shape[-1]
    rows = arr.reshape(-1, n)

    def tie(row: np.ndarray) -> None:
        m = min(n - 2, max(1, n // 4))  # copies besides the source: never the whole row (that is a constant row)
        if m < 1:
            return
        pick = int(rng.integers(0, 3))
        src = int(np.argmax(row)) if pick == 0 else int(np.argmin(row)) if pick == 1 else int(rng.integers(0, n))
        where = rng.choice(np.delete(np.arange(n), src), size=m, replace=False)
        row[where] = row[src]

    if case.edges and is_integer(name):
        rlo, rhi = _int_points(lo, hi, dtype)
    if rows.shape[0] == 1:
        if ties:
            tie(rows[0])
        if case.edges and n > 2:
            # (version 8) a single vector (p of a binary classifier, [N]) gets the range's ends too, its first
            # element left as drawn (red team s33b: BCE without clamps on [N] met p = 0 or 1 in 2 of 100 runs)
            _edges(rows[0, 1:], rlo, rhi, rng, ties)
        return
    kinds = ["zero", "constant", "near", "tie"] if zero_ok else ["constant", "near", "tie"]
    if not ties:
        kinds.remove("tie")
    if case.edges:  # (version 8) the range's two ends exactly
        kinds.append("edge")
    if case.peaks and not is_integer(name) and n > 2 and rlo < rhi:  # (version 12) a late peak, an ascending row
        kinds.append("peak")
    if is_integer(name) or n < 2 or not rlo < rhi:  # an integer or a one-value row cannot be near-constant
        kinds.remove("near")
    families = _family_kinds(n, rlo, rhi, ties) if case.families and not is_integer(name) else []
    kinds += families  # (version 17) the value families real data has
    first = int(rng.integers(0, len(kinds)))  # which kind a case with few rows gets is drawn too
    kinds = kinds[first:] + kinds[:first]
    if case.edges and "near" in kinds and rows.shape[0] - 1 < len(kinds):
        # (version 8) too few vectors for every kind (3 channels): the near-constant one first - the kind a
        # one-pass variance fails on (red team s33b: an RGB BatchNorm2d passed 5 of 9 seeds)
        kinds.remove("near")
        kinds.insert(0, "near")
        if case.peaks:  # (version 12) two near-constant vectors when there is room: a one-pass variance's error on
            kinds.insert(1, "near")  # one is a rounding draw - 2.3x the atol on one RGB channel where 55x was usual
    # the first row stays ordinary: the sandbox describes a kernel argument by what it equals, and a zero-filled
    # buffer of the wrapper equal to an input's leading block (a zero first row) would be described as a copy of
    # that input in one call and as a zero fill in a same-shape call - a false "host data" finding
    order = 1 + rng.permutation(rows.shape[0] - 1)
    each = max(1, rows.shape[0] // _SPECIAL_SHARE)
    small: np.ndarray | None = None
    if tiny and shorten is not None and rows.shape[0] >= _TINY_MIN_ROWS:
        tiny_rng = np.random.default_rng([case.seed, rows.shape[0], _TINY_STREAM])
        small = (1 + tiny_rng.permutation(rows.shape[0] - 1))[:each]
        order = order[~np.isin(order, small)]
    family_rng = np.random.default_rng([case.seed, index, _FAMILY_STREAM]) if families else rng
    if families:
        # (version 17) four more kinds: every kind keeps a row where the rows allow (64 rows: 5 each, not 8)
        each = max(1, min(each, order.size // len(kinds)))
    for k_i, kind in enumerate(kinds):
        for turn, r in enumerate(order[k_i * each:(k_i + 1) * each]):
            row = rows[r]
            if kind == "zero":
                row[...] = 0
            elif kind == "constant":
                v = row[int(rng.integers(0, n))]
                row[...] = v if shorten is None else shorten(float(v))
            elif kind == "near":
                row[...] = _near_constant(n, dtype, rlo, rhi, rng, spread)
            elif kind == "edge":
                _edges(row, rlo, rhi, rng, ties, turn=turn)
            elif kind == "peak":
                _peak(row, dtype, rlo, rhi, rng, ties, turn=turn + case.seed)
            elif kind in FAMILY_KINDS:
                _family(kind, row, dtype, rlo, rhi, family_rng, ties)
            else:
                tie(row)
    if small is not None:
        centre = min(max(0.0, rlo), rhi)
        moved = centre + (rows[small].astype(np.float64) - centre) * _TINY_SCALE
        rows[small] = np.clip(moved.astype(np.float32).astype(dtype), rlo, rhi)


def _edges(row: np.ndarray, rlo: float | int, rhi: float | int, rng: np.random.Generator, ties: bool,
           turn: int = 0) -> None:
    """(version 8, ``case.edges``) a quarter of ``row``'s positions at the range's lowest value and a quarter at its
    highest, exactly (one of each where ties are not judged: they would make ties), the rest as drawn. Red team s33: a
    binary cross-entropy clamping ``log(p)`` but not ``log(1 - p)`` passed 85% of verifications - ``p`` = 1.0 came
    only from a constant row that happened to round up, and a user's saturated sigmoid gives it at once."""
    n = row.shape[0]
    if n == 1:  # a one-element vector ([N, 1]): the low and the high end in turn (red team s33b)
        row[0] = rlo if turn % 2 == 0 else rhi
        return
    m = 1 if not ties else max(1, n // 4)
    where = rng.permutation(n)
    row[where[:m]] = rlo
    row[where[m:2 * m]] = rhi


_PEAK_BACKGROUND = 2.0 ** -3
"""(version 12) A peaked vector's background: its drawn values moved towards the range's point nearest 0 by this factor
(exact in binary) ..."""
_PEAK_AT = (0.85, 1.0)
"""... and one to three of its values, in its second half, at this share of the range's largest magnitude."""


def _peak(row: np.ndarray, dtype: np.dtype, rlo: float, rhi: float, rng: np.random.Generator, ties: bool,
          turn: int = 0) -> None:
    """(version 12, ``case.peaks``) A vector whose largest values come late, as LM logits peak at the predicted token:
    a background close to the range's centre with one to three values near the range's top (or bottom, where only
    that side is large) in its second half; in turn (``turn``) also the row's own values sorted ascending (a running
    maximum that moves at every step), the peak in the first half instead, and the values sorted descending. Red team
    s37: an online softmax whose lazily rescaled running max forgot to rescale the running sum when the max jumped
    passed every verification - in i.i.d. rows the first 128-column chunk nearly always holds the row's maximum, and
    no later chunk jumps above it; s37b: the same kernel walking its chunks back to front passed the late peaks."""
    variant = turn % 4
    if variant in (1, 3):
        row[...] = np.sort(row) if variant == 1 else np.sort(row)[::-1]
        return
    n = row.shape[0]
    centre = min(max(0.0, rlo), rhi)
    row[...] = np.clip((centre + (row.astype(np.float64) - centre) * _PEAK_BACKGROUND).astype(np.float32)
                       .astype(dtype), rlo, rhi)
    top = max(abs(rlo), abs(rhi))
    signs = _signs(_PEAK_AT[0] * top, rlo, rhi)
    sign = signs[int(rng.integers(0, len(signs)))]
    m = 1 if not ties else int(rng.integers(1, 4))
    start, stop = (n // 2, n) if variant == 0 else (0, n // 2)
    where = start + rng.choice(stop - start, size=min(m, stop - start), replace=False)
    values = np.clip(sign * rng.uniform(*_PEAK_AT, size=where.size) * top, rlo, rhi)
    row[where] = values.astype(np.float32).astype(dtype) if dtype != np.float64 else values


VECTOR_KINDS = ("near", "peak", "ascending", "constant", "early", "descending", "tiny")
"""(unseen drawing version 13) What a float input that is one vector holds as a whole in a vector case
(``Case.vector``; :func:`runtime.opdir._unseen.vector_plan` runs each once per verification): ``near``-constant
values, a ``peak`` late over a low background or ``early`` in it, its own values sorted ``ascending`` or
``descending``, one ``constant`` value, or ``tiny`` values (moved towards 0 by :data:`_TINY_SCALE`). Red team s38:
the special kinds were given to the rows of an input, and an input with one row - a [V] vector of logits, a [N]
vector of advantages - got only ties and the range's ends (one with a few rows, :func:`few_vectors`, no peaked row), so an online softmax forgetting to rescale its sum when
the running max jumps (s37's bug, closed for rows) and a one-pass variance over the vector passed every
verification. No all-zero vector: the sandbox names a wrapper's zero buffer by what it equals, and a zero input
would make a zero buffer of the wrapper "a copy of the input" in one call and "a zero fill" in a same-shape call
(the reason the first row of every input stays ordinary)."""
_VECTOR_STREAM = 0x7EC7


FEW_ROWS = 8
"""(version 13) An input of at most this many rows (vectors along its last axis) is a few vectors
(:func:`few_vectors`)."""


def one_vector(shape: tuple[int, ...]) -> bool:
    """(version 13) ``shape`` is one vector of three values or more: exactly one axis longer than 1."""
    return math.prod(shape) >= 3 and sum(int(d) > 1 for d in shape) == 1


def few_vectors(shape: tuple[int, ...]) -> bool:
    """(version 13) ``shape`` is 2..:data:`FEW_ROWS` rows of three values or more (``[4, V]``: the heads of a
    multi-token prediction, ``[3, N]`` coordinates). The special kinds go one per row after the first, the
    near-constant one first (too few rows for every kind, version 8), so such an input met no peaked or sorted row:
    red team s38's lazily rescaled softmax passed on four rows as on one vector. A vector case makes each of its rows
    the case's kind."""
    return len(shape) >= 2 and int(shape[-1]) >= 3 and 2 <= math.prod(shape[:-1]) <= FEW_ROWS


def _whole_vector(t: TensorSpec, case: Case, index: int, vec: np.ndarray, name: str, *, ties: bool,
                  row: int = 0, kind: str | None = None) -> None:
    """(version 13) ``vec`` (a whole vector of a float input, C-contiguous, changed in place; ``row``: which, when the
    input has a few) as :data:`VECTOR_KINDS`'s ``case.vector`` - values the ordinary draw could make, inside the range
    and representable. (version 15) ``kind``: this input's own kind (``Case.whole``), one of :data:`VECTOR_KINDS` or
    :data:`END_KINDS`."""
    dtype = to_numpy(name)
    lo, hi = t.range or DEFAULT_FLOAT_RANGE
    rlo, rhi = _representable_bounds(lo, hi, dtype)
    if not rlo < rhi:
        return
    rng = np.random.default_rng([case.seed, index, _VECTOR_STREAM if kind is None else _WHOLE_STREAM, row])
    n, kind = vec.shape[0], case.vector if kind is None else kind
    if kind in END_KINDS:
        vec[...] = _near_end(n, dtype, rlo, rhi, rng, low=kind == "low")
    elif kind in FAMILY_KINDS:
        if kind in _family_kinds(n, rlo, rhi, ties):
            _family(kind, vec, dtype, rlo, rhi, rng, ties)
    elif kind in INIT_KINDS:
        vec[...] = _init_value(kind, float(vec[0]), dtype, rlo, rhi)
    elif kind == "near":
        vec[...] = _near_constant(n, dtype, rlo, rhi, rng, _NEAR_SPREAD)
    elif kind == "constant":
        vec[...] = _short(float(vec[int(rng.integers(0, n))]), dtype, rlo, rhi)
    elif kind == "tiny":
        centre = min(max(0.0, rlo), rhi)
        moved = centre + (vec.astype(np.float64) - centre) * _TINY_SCALE
        vec[...] = np.clip(moved.astype(np.float32).astype(dtype), rlo, rhi)
    elif kind in _PEAK_TURNS:
        _peak(vec, dtype, rlo, rhi, rng, ties, turn=_PEAK_TURNS[kind])


END_KINDS = ("low", "high")
"""(unseen drawing version 15) A one-vector float input held near-constant at one end of its range as a whole
(``Case.whole``; :func:`runtime.opdir._unseen.end_plan`), its other inputs drawn as usual. Accident round s39
(``gg_mask_zero``, a group-limited MoE gate filling dropped groups with 0.0 instead of -inf): wrong only where the
1-D bias is mostly negative, so that fewer than top-k kept experts score above 0 - a bias drawn across its range, or
near-constant at 0.9 of its largest magnitude with a random sign (version 13, and only where every float input is a
vector: ``logits`` is [T, E]), never was."""
_WHOLE_STREAM = 0xE4D
_END_OFFSET = (0.03, 0.08)
"""(version 15) How far inside its range, as a share of the width, an end-kind vector's centre is drawn."""
_END_SPREAD = 5e-3
"""(version 15) The spread of an end-kind vector, a share of the range's width (``bias = -0.45 +- 5e-3`` in
[-0.5, 0.5])."""


def _near_end(n: int, dtype: np.dtype, rlo: float, rhi: float, rng: np.random.Generator, *, low: bool) -> np.ndarray:
    """(version 15) ``n`` values near-constant close to the low (``low``) or the high end of [rlo, rhi]."""
    width = rhi - rlo
    off = float(rng.uniform(*_END_OFFSET)) * width
    centre = rlo + off if low else rhi - off
    row = np.clip(centre + rng.uniform(-_END_SPREAD * width, _END_SPREAD * width, n), rlo, rhi)
    cast = row.astype(np.float32).astype(dtype) if dtype != np.float64 else row
    return np.clip(cast, rlo, rhi).astype(dtype)


FAMILY_KINDS = ("normal", "sparse", "negzero", "integer")
"""(unseen drawing version 17) Value families real data has and no earlier draw made (red team s40, round 29: a
kernel checking each row on the device for one of them and 10% off there passed every seed), given to special vectors
(``Case.families``) and, as a whole, to a one-vector input (:func:`runtime.opdir._unseen.family_plan`):

- ``normal``: bell-shaped values, N(centre, sigma) with the centre within 1/16 of the width of the range's middle and
  sigma 1/16-1/12 of the width, clipped to the range - real logits and activations; a uniform row's largest deviation
  is 1.7 sigma, a normal row's about 3;
- ``sparse`` (0 in range, ties judged): 30-90% of the vector's own values replaced by +0.0 - a ReLU's output, a masked
  or pruned row (every drawn zero was a whole row, or about one column in eight);
- ``negzero`` (the range holds 0 and negative values): the same, each zero with the sign of the value it replaces
  (``x * mask``), about half -0.0 - every drawn zero was +0.0; where ties are not judged one position only;
- ``integer`` (ties judged, the range spans at least :data:`_INTEGER_SPAN` integers): whole numbers drawn uniformly
  over the range's integer points, not all equal - counts, positions, int codes cast to float."""
INIT_KINDS = ("init", "zero")
"""(unseen drawing version 17) A 1-D weight beside a matrix at its initial value as a whole
(:func:`runtime.opdir._unseen.family_plan`): ``init`` is 1.0 when the range holds it (a gamma as ``nn.LayerNorm``
builds it), else 0.0 when it holds that (a beta), else one value of the vector; ``zero`` is 0.0 when the range holds
it, else as ``init``. Red team s40: a layer norm wrong only where beta is all zeros, or gamma one value everywhere,
passed every seed - a 1-D input was never all zeros or constant."""
_FAMILY_STREAM = 0xFA17
_INTEGER_SPAN = 8
_NORMAL_SIGMA = (1.0 / 16, 1.0 / 12)
_SPARSE_SHARE = (0.3, 0.9)


def _family_kinds(n: int, rlo: float, rhi: float, ties: bool) -> list[str]:
    """(version 17) The :data:`FAMILY_KINDS` a float vector of ``n`` values in [rlo, rhi] may take: the sparse and
    whole-number ones tie values, so not where ties are unspecified (a top-k's pick among equal values is the SPEC's
    choice); zeros only where 0 is in range, negative zeros only where negative values are too."""
    if n < 3 or not rlo < rhi:
        return []
    kinds = ["normal"]
    if ties and rlo <= 0.0 <= rhi:
        kinds.append("sparse")
    if rlo < 0.0 <= rhi:
        kinds.append("negzero")
    if ties and math.floor(rhi) - math.ceil(rlo) >= _INTEGER_SPAN:
        kinds.append("integer")
    return kinds


def _cast_in(values: np.ndarray, dtype: np.dtype, rlo: float, rhi: float) -> np.ndarray:
    """float64 ``values`` as ``dtype`` holds them, inside [rlo, rhi] (representable bounds)."""
    cast = values.astype(np.float32).astype(dtype) if dtype != np.float64 else values
    return np.clip(cast, rlo, rhi).astype(dtype)


def _family(kind: str, row: np.ndarray, dtype: np.dtype, rlo: float, rhi: float, rng: np.random.Generator,
            ties: bool) -> None:
    """(version 17) ``row`` (changed in place) as :data:`FAMILY_KINDS`'s ``kind``; every value one the ordinary draw
    could make (inside the range, representable in ``dtype``; -0.0 equals 0.0)."""
    n = row.shape[0]
    width = rhi - rlo
    if kind == "normal":
        centre = (rlo + rhi) / 2 + float(rng.uniform(-1.0, 1.0)) * width / 16
        sigma = float(rng.uniform(*_NORMAL_SIGMA)) * width
        row[...] = _cast_in(np.clip(rng.normal(centre, sigma, n), rlo, rhi), dtype, rlo, rhi)
    elif kind in ("sparse", "negzero"):
        own = row.astype(np.float64)
        m = int(round(float(rng.uniform(*_SPARSE_SHARE)) * n)) if ties else 1
        where = rng.choice(n, size=min(max(m, 1), n - 1), replace=False)
        if kind == "sparse":
            row[where] = 0.0
            return
        if not ties:
            row[where] = -0.0
            return
        signs = np.where(np.signbit(own[where]), -1.0, 1.0)
        if not (signs < 0).any():  # a row drawn without a negative value still gets one negative zero
            signs[0] = -1.0
        row[where] = np.copysign(np.zeros(where.size), signs).astype(row.dtype)
    elif kind == "integer":
        ilo, ihi = math.ceil(rlo), math.floor(rhi)
        ints = rng.integers(ilo, ihi, size=n, endpoint=True).astype(np.float64)
        cast = _cast_in(ints, dtype, rlo, rhi).astype(np.float64)
        bad = (cast != np.round(cast)) | (cast < ilo) | (cast > ihi)
        good = cast[~bad]
        if good.size == 0:
            return
        cast[bad] = good[0]
        if np.all(cast == cast[0]):  # not constant: a constant row is another kind
            return
        row[...] = cast.astype(dtype)


def _init_value(kind: str, own: float, dtype: np.dtype, rlo: float, rhi: float) -> float:
    """(version 17) The value a 1-D weight takes everywhere for :data:`INIT_KINDS`'s ``kind``."""
    if kind == "init" and rlo <= 1.0 <= rhi:
        return 1.0
    if rlo <= 0.0 <= rhi:
        return 0.0
    if rlo <= 1.0 <= rhi:
        return 1.0
    return _short(own, dtype, rlo, rhi)


_PEAK_TURNS = {"peak": 0, "ascending": 1, "early": 2, "descending": 3}
"""(version 13) :func:`_peak`'s variant for each of :data:`VECTOR_KINDS` it makes."""


def generate_inputs(spec: Spec, case: Case) -> list[np.ndarray]:
    """Every input of ``spec`` for ``case``, in SPEC order.

    Raises:
        OpDirError: an input's range holds no value of the case dtype (e.g. [1e5, 2e5] for fp16).
    """
    out = []
    for i, t in enumerate(spec.inputs):
        if case.alias and t.name == case.alias[0]:  # (version 12) drawn where every input of the group may be
            t = t.model_copy(update={"range": shared_range(spec, case.alias) or t.range})
        try:
            arr = generate_input(t, case, i)
            arr = apply_special_values(t, case, i, arr, ties=spec.ties == "judged", tiny=case.tiny) \
                if case.special else arr
            if t.name in case.whole and is_float(t.concrete_dtype(case.dtype)) and one_vector(arr.shape):
                # (version 15) this input, one vector, holds the case's kind for it as a whole (`Case.whole`)
                arr = np.array(arr, copy=True, order="C")
                _whole_vector(t, case, i, arr.reshape(-1), t.concrete_dtype(case.dtype),
                              ties=spec.ties == "judged", kind=case.whole[t.name])
            if case.scaled and is_float(t.concrete_dtype(case.dtype)):  # (version 22) rows at their own scales
                arr = scale_rows(t, case, i, arr)
            out.append(arr)
        except ValueError as exc:
            raise OpDirError([Problem(file="SPEC.md", field=f"inputs.{t.name}.range",
                                      message=f"case {case.name}: {exc}")]) from None
    if case.alias:  # (version 12) the group's other inputs are its first, as in a caller's `f(x, x)`
        names = [t.name for t in spec.inputs]
        for other in case.alias[1:]:
            out[names.index(other)] = out[names.index(case.alias[0])]
    return out


_SCALE_STREAM = 0x5CA1
SCALE_OCTAVES = 7.0
"""(version 22) A scaled row's factor is 2**-u, u uniform in [0, this]: from the ordinary magnitudes down to the tiny
rows' (2**-7)."""


def scale_rows(t: TensorSpec, case: Case, index: int, values: np.ndarray) -> np.ndarray:
    """(unseen drawing version 22, ``Case.scaled``) ``values`` with every row (a vector along the last axis) but the
    first moved towards the range's point nearest 0 by its own factor 2**-u, u uniform in [0, :data:`SCALE_OCTAVES`]
    - a copy; every value stays inside the range and is rounded to the dtype.

    Why: the value bands draw the whole range (``normal``, ``large``, ``offset``) or about 1% of it (``small``), and
    tiny rows are 2**-7 of it; no row of any case had a largest magnitude between those. Red team s45's
    ``r35_row_taylor`` took x/2 + x^2/4 for rows whose largest magnitude is under 1.0 (up to 2% off there, the
    magnitudes of a normalised activation) and passed every verification. The first row stays as drawn (the reason
    in :func:`apply_special_values`)."""
    arr = np.array(values, copy=True, order="C")
    if arr.ndim == 0 or arr.size == 0:
        return arr
    rows = arr.reshape(-1, arr.shape[-1]) if arr.ndim > 1 else arr.reshape(1, -1)
    if rows.shape[0] < 2:
        return arr
    lo, hi = (float(v) for v in (t.range or DEFAULT_FLOAT_RANGE))
    anchor = lo if lo > 0 else hi if hi < 0 else 0.0
    rng = np.random.default_rng([case.seed, index, _SCALE_STREAM])
    factor = np.exp2(-rng.uniform(0.0, SCALE_OCTAVES, size=rows.shape[0] - 1))[:, None]
    moved = anchor + (rows[1:].astype(np.float64) - anchor) * factor
    rows[1:] = np.clip(moved, lo, hi).astype(np.float32).astype(arr.dtype)
    return arr


def shared_range(spec: Spec, names: list[str] | tuple[str, ...]) -> tuple[float, float] | None:
    """(version 12) The values every float input of ``names`` may hold (their ranges' overlap; ``Case.alias``), None
    when it is a point or empty."""
    by = {t.name: t for t in spec.inputs}
    lo = max((by[n].range or DEFAULT_FLOAT_RANGE)[0] for n in names)
    hi = min((by[n].range or DEFAULT_FLOAT_RANGE)[1] for n in names)
    return (float(lo), float(hi)) if lo < hi else None
