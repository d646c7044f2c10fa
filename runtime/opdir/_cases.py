"""The verification case list built from SPEC.md: P0 shapes x supported dtypes x seeds, plus a tail case.

Rules (docs/readme/opdir.md repeats them for users):
- one case per (P0 shape, supported dtype, seed), in that nesting order;
- the value band rotates over (shape, seed): band index = (shape_index * len(seeds) + seed_index) % 4, so
  two P0 shapes with three seeds cover all four bands, and every dtype sees the same values per seed;
- when no P0 shape has a dynamic-axis size that is not a multiple of :data:`TAIL_MULTIPLE`, one tail case is
  derived from the first P0 shape by adding 13 to every dynamic axis (first dtype, first seed, band normal);
- ``tail=True`` on every case where some dynamic axis is not a multiple of :data:`TAIL_MULTIPLE`.
Typical count: 2 shapes x 1-2 dtypes x 3 seeds = 6-12 cases (+1 derived tail case).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from runtime.opdir._spec import Spec

__all__ = ["BANDS", "TAIL_MULTIPLE", "Case", "build_cases", "case_name"]

BANDS: tuple[str, ...] = ("normal", "small", "large", "offset")
"""Value bands: normal = the declared distribution over the range; small = magnitudes ~1% of the range near
0 (or the range end nearest 0); large = the top quarter of magnitudes; offset = a non-zero-mean slice of the
range (its upper or lower 40%)."""

TAIL_MULTIPLE = 16
"""A dynamic-axis size that is not a multiple of this leaves a partial tile (16 rows covers fp32/bf16 tiles)."""

_TAIL_PAD = 13


class Case(BaseModel):
    """One verification case. Example name: ``B77_D256-fp32-s1-large``."""

    model_config = ConfigDict(frozen=True)

    name: str
    dims: dict[str, int]
    dtype: str
    seed: int
    band: str
    tail: bool = False
    unseen: bool = False
    """Drawn per verification run from the unseen-case seed (:mod:`runtime.opdir._unseen`), not from SPEC.md."""
    special: bool = False
    """Some rows of its inputs are all zeros, constant or hold ties (:func:`runtime.opdir._inputs.apply_special_values`;
    unseen cases only). Never part of the name or the report: agents see an ordinary unseen case."""
    tiny: bool = False
    """With ``special``: some rows, the same in every input with as many rows, are also scaled towards 0
    (:func:`runtime.opdir._inputs.apply_special_values`; unseen drawing version 6). Never shown either."""
    masks: bool = False
    """With ``special``: boolean inputs get all-False and all-True vectors too (unseen drawing version 7)."""
    orient: int = 0
    """With ``columns``: which layout of leading axes its special vectors take (`_inputs.apply_special_values`; the
    columns cases of a verification take them in turn)."""
    columns: bool = False
    """With ``special``: the special vectors of inputs of rank 2 or more run along a leading axis (columns) instead of
    the last one (:func:`runtime.opdir._inputs.apply_special_values`; unseen drawing version 7). Never shown either."""
    middle: bool = False
    """With ``columns``: the layouts taken in turn include, for inputs of rank 3 or more, one middle axis against all
    the others (the channel of an NCHW BatchNorm2d; unseen drawing version 8). Never shown either."""
    edges: bool = False
    """With ``special``: some vectors hold the two ends of the input's range exactly (``p`` = 1.0 in a binary
    cross-entropy; unseen drawing version 8). Never shown either."""
    peaks: bool = False
    """With ``special``: some float vectors hold a few values near the top of the range late in the vector, over a
    background drawn close to the range's centre, or their own values sorted ascending (unseen drawing version 12)."""
    vector: str = ""
    """(unseen drawing version 13) With ``special``: what every float input that is *one vector* in this case - one
    axis longer than 1, ``[N]``, ``[1, V]``, ``[N, 1]`` - holds as a whole, one of
    :data:`runtime.opdir._inputs.VECTOR_KINDS` (:func:`runtime.opdir._inputs.apply_special_values`; the vector cases
    of a verification take the kinds in turn, :func:`runtime.opdir._unseen.vector_plan`). Empty: such an input gets
    only ties and the range's two ends, as before version 13. Never shown either."""
    whole: dict[str, str] = {}
    """(unseen drawing version 15) Input name -> what that input, one vector in this case, holds as a whole: one of
    :data:`runtime.opdir._inputs.VECTOR_KINDS` or :data:`runtime.opdir._inputs.END_KINDS` (the other inputs as
    drawn: :func:`runtime.opdir._unseen.decode_vector_plan`, :func:`runtime.opdir._unseen.end_plan`). Never shown."""
    families: bool = False
    """(unseen drawing version 17) With ``special``: the special vectors of float inputs also include the value
    families real data has and no other draw makes - bell-shaped, sparse (30-90% exact zeros), with negative zeros,
    and whole numbers (:data:`runtime.opdir._inputs.FAMILY_KINDS`). Never shown either."""
    scaled: bool = False
    """(unseen drawing version 22) Every row (vector along the last axis) of every float input but the first is moved
    towards the range's point nearest 0 by its own factor 2**-u, u uniform in [0, 7]
    (:func:`runtime.opdir._inputs.scale_rows`): magnitudes between the value bands' ordinary and small ones (red team
    s45: a "small activation" path taking x/2 + x^2/4 for rows under 1.0 passed every verification). Never shown."""
    alias: list[str] = []
    """Two input names ``[a, b]``: the wrapper gets input ``a``'s very object for ``b`` too (``f(x, x)``), the golden
    the same values (:func:`runtime.opdir._unseen.alias_cases`; unseen drawing version 12). Empty: separate inputs."""
    attrs: dict[str, Any] = {}
    """SPEC attributes this case passes at other values than the SPEC's, to the golden and to the wrapper alike
    (:func:`runtime.opdir._unseen.attribute_cases`; unseen drawing version 10; a list of floats from version 11).
    Empty: the SPEC's values."""


def _dims_label(spec: Spec, dims: dict[str, int]) -> str:
    order = spec.named_dims()
    return "_".join(f"{d}{dims[d]}" for d in order) or "static"


def case_name(spec: Spec, dims: dict[str, int], dtype: str, seed: int, band: str) -> str:
    """Stable, readable name, e.g. ``B77_D256-fp32-s1-large``."""
    return f"{_dims_label(spec, dims)}-{dtype}-s{seed}-{band}"


def _has_tail(spec: Spec, dims: dict[str, int]) -> bool:
    return any(dims.get(a, 0) % TAIL_MULTIPLE != 0 for a in spec.dynamic_axes)


def build_cases(spec: Spec) -> list[Case]:
    """The full, ordered case list for a validated spec (see the module docstring for the rules)."""
    shapes = [dict(s) for s in spec.p0_shapes] or [{}]
    cases: list[Case] = []
    names: set[str] = set()

    def add(dims: dict[str, int], dtype: str, seed: int, band: str) -> None:
        name = case_name(spec, dims, dtype, seed, band)
        if name not in names:
            names.add(name)
            cases.append(Case(name=name, dims=dims, dtype=dtype, seed=seed, band=band, tail=_has_tail(spec, dims)))

    for si, dims in enumerate(shapes):
        for dtype in spec.supported_dtypes:
            for ki, seed in enumerate(spec.seeds):
                add(dims, dtype, seed, BANDS[(si * len(spec.seeds) + ki) % len(BANDS)])
    if spec.dynamic_axes and not any(_has_tail(spec, d) for d in shapes):
        dims = dict(shapes[0])
        for a in spec.dynamic_axes:
            dims[a] = dims[a] + _TAIL_PAD
        add(dims, spec.supported_dtypes[0], spec.seeds[0], BANDS[0])
    return cases
