"""Unseen drawing version 9 (red team s34): every telling class runs whatever the number of dtypes and axes.

Version 8 planned its classes in a fixed order and kept the first 21 pairs (44 calls): with 3 dtypes x 2 axes or
2 dtypes x 3 axes the size 1 and one-less-than-a-tile were never drawn, so an ``S == 1`` decode-step path and a
``B == 1`` single-request path with a ``(n + 7) // 16`` tile count passed every seed; and the byte budget, spent on
the fp32 fill and power of two first, dropped the bf16 power of two (a bf16-only 128-row block slip passed 84% of
verifications). The SPECs here are synthetic; the candidates themselves run in tests/redteam/test_round14_s34.py."""

from __future__ import annotations

import hashlib
import itertools

import pytest

from runtime.opdir import TAIL_MULTIPLE
from runtime.opdir._cases import BANDS, Case
from runtime.opdir._memory import case_bytes
from runtime.opdir._spec import Spec, TensorSpec
from runtime.opdir._unseen import (
    _POW2_MIN,
    MAX_BLOCK_PER_DTYPE_AXIS,
    MAX_COVER_PER_DTYPE_AXIS,
    MAX_SWEEP_PER_DTYPE,
    MAX_TAIL_COVER_PER_AXIS,
    MAX_UNSEEN,
    MAX_UNSEEN_V9,
    total_cap,
    unseen_cases,
)

_DTYPES = ["fp32", "fp16", "bf16"]
_AXES = ["B", "H", "S"]


def _spec(n_dtypes: int, n_axes: int, d: int = 64) -> tuple[Spec, list[Case]]:
    axes = _AXES[:n_axes]
    dtypes = _DTYPES[:n_dtypes]
    shape = [*axes, "D"]
    p0 = [{**{a: 2 + i for i, a in enumerate(axes)}, "D": d}, {**{a: 3 + 13 * i for i, a in enumerate(axes)}, "D": d}]
    spec = Spec(schema_version=1, op_name="norm", inputs=[TensorSpec(name="x", shape=shape, dtype="T")],
                outputs=[TensorSpec(name="y", shape=shape, dtype="T")], dynamic_axes=axes, p0_shapes=p0,
                supported_dtypes=dtypes, tolerance={t: {"atol": 1e-2, "rtol": 1e-2} for t in dtypes}, seeds=[0, 1])
    cases = [Case(name=f"c{i}{t}", dims=dict(p), dtype=t, seed=s, band=BANDS[0])
             for i, p in enumerate(p0) for t in dtypes for s in (0, 1)]
    return spec, cases


def _gelu(*sizes: int) -> tuple[Spec, list[Case]]:
    """GELU on [B, 8192] in fp32, fp16 and bf16 with SPEC sizes ``sizes`` of B (the red team's gelu_wide / gelu_big)."""
    dtypes = ["fp32", "fp16", "bf16"]
    spec = Spec(schema_version=1, op_name="gelu", inputs=[TensorSpec(name="x", shape=["B", "D"], dtype="T")],
                outputs=[TensorSpec(name="y", shape=["B", "D"], dtype="T")], dynamic_axes=["B"],
                p0_shapes=[{"B": b, "D": 8192} for b in sizes], supported_dtypes=dtypes,
                tolerance={t: {"atol": 1e-2, "rtol": 1e-2} for t in dtypes}, seeds=[0])
    return spec, [Case(name=f"c{b}{t}", dims={"B": b, "D": 8192}, dtype=t, seed=0, band=BANDS[0])
                  for b in sizes for t in dtypes]


@pytest.mark.parametrize(("n_dtypes", "n_axes"), list(itertools.product((1, 2, 3), (1, 2, 3))))
def test_every_axis_gets_one_and_a_tile_less_one_in_every_verification(n_dtypes: int, n_axes: int) -> None:
    spec, cases = _spec(n_dtypes, n_axes)
    for seed in range(12):
        unseen = unseen_cases(spec, cases, seed)
        # (version 21) the sweep after every other case is bounded apart (tests/verify/test_unseen_v21_s44.py)
        v20 = len(unseen_cases(spec, cases, seed, 20))
        # (version 22) and so is the cover (tests/verify/test_unseen_v22_s45.py), (version 23) and the block plan
        # (tests/verify/test_unseen_v23_s46.py), (version 24) and the tail cover (tests/redteam/test_round37_s47.py)
        assert v20 <= MAX_UNSEEN_V9 and len(unseen) - v20 <= (
            MAX_SWEEP_PER_DTYPE + (MAX_COVER_PER_DTYPE_AXIS + MAX_BLOCK_PER_DTYPE_AXIS) * n_axes) * n_dtypes + \
            MAX_TAIL_COVER_PER_AXIS * n_axes
        if n_axes >= 2:  # every axis at 1 at once, in every dtype (one decode step of one request)
            for dtype in spec.supported_dtypes:
                assert any(c.dtype == dtype and all(c.dims[a] == 1 for a in spec.dynamic_axes) for c in unseen), seed
        if n_axes >= 3:  # each pair of axes at 1
            for a, b in itertools.combinations(spec.dynamic_axes, 2):
                assert any(c.dims[a] == c.dims[b] == 1 and all(c.dims[o] % TAIL_MULTIPLE == 1 for o in
                                                               spec.dynamic_axes if o not in (a, b)) for c in unseen)
        for axis in spec.dynamic_axes:  # one size of each 2-adic valuation 16, 32, 64, 128 (2**j times an odd number)
            for j in (5, 6, 7):
                assert any(c.dims[axis] % (1 << j) == 0 and c.dims[axis] % (2 << j) for c in unseen), (seed, axis, j)
        for axis in spec.dynamic_axes:
            for dtype in spec.supported_dtypes:  # size 1 in every dtype (version 4's promise)
                assert any(c.dims[axis] == 1 and c.dtype == dtype for c in unseen), (seed, axis, dtype)
            assert any(c.dims[axis] % TAIL_MULTIPLE == TAIL_MULTIPLE - 1 for c in unseen), (seed, axis)
            if n_axes >= 2:  # size 1 with every other axis at a tail of 1 (16k + 1)
                assert any(c.dims[axis] == 1 and all(c.dims[o] % TAIL_MULTIPLE == 1 for o in spec.dynamic_axes
                                                     if o != axis) for c in unseen), (seed, axis)
            for dtype in spec.supported_dtypes:  # a tail of 1 and the power of two in every dtype
                assert any(c.dtype == dtype and c.dims[axis] % TAIL_MULTIPLE == 1 for c in unseen), (seed, axis)
                # (three axes: a power of two >= 128 on one axis with the others of the larger P0 shape is over the
                # 4 MiB case cap of these small SPECs and halved below 128 - the cap binds, as in version 8)
                assert n_axes == 3 or any(c.dtype == dtype and c.dims[axis] >= _POW2_MIN and
                                          c.dims[axis] & (c.dims[axis] - 1) == 0 for c in unseen), (seed, axis, dtype)


def test_a_pair_over_the_byte_budget_is_shrunk_not_dropped() -> None:
    """gelu_wide [B, 8192], SPEC B 128 and 141, fp32/fp16/bf16 (~9 MiB cases): version 8 spent the budget on the fp32
    fill and power of two and never drew a bf16 power of two in three verifications (4 of 40 seeds)."""
    spec, cases = _gelu(128, 141)
    for seed in range(20):
        unseen = unseen_cases(spec, cases, seed)
        assert sum(case_bytes(spec, c) for c in unseen) <= total_cap(spec, cases)
        for dtype in spec.supported_dtypes:
            pows = [c.dims["B"] for c in unseen if c.dtype == dtype and c.dims["B"] >= 2 * _POW2_MIN
                    and c.dims["B"] & (c.dims["B"] - 1) == 0]
            assert pows, (seed, dtype, sorted({(c.dims["B"], c.dtype) for c in unseen}))


def test_a_spec_twice_as_big_still_gets_four_blocks_in_every_dtype() -> None:
    """gelu_big [B, 8192], SPEC B 256 and 269 (18 MiB fp32 cases), 3 dtypes (red team s34b): the fp32 power of two at
    the 64 MiB case cap left bf16 a power of two of 512 or none - a bf16 path right for two 256-row blocks (a slot
    index for the block index) passed every seed. Every dtype now gets one of at least four blocks (1024)."""
    spec, cases = _gelu(256, 269)
    for seed in range(20):
        unseen = unseen_cases(spec, cases, seed)
        assert sum(case_bytes(spec, c) for c in unseen) <= total_cap(spec, cases)
        for dtype in spec.supported_dtypes:
            assert any(c.dtype == dtype and c.dims["B"] >= 1024 and c.dims["B"] & (c.dims["B"] - 1) == 0
                       for c in unseen), (seed, dtype, sorted({(c.dims["B"], c.dtype) for c in unseen}))


def _digests(version: int, draws: tuple) -> list[str]:
    got = []
    for n_dtypes, n_axes, seed in draws:
        spec, cases = _spec(n_dtypes, n_axes)
        drawn = unseen_cases(spec, cases, seed, version=version)
        got.append(hashlib.sha256(repr([(c.name, c.seed, c.band, c.special, c.columns) for c in drawn]).encode())
                   .hexdigest()[:16])
    return got


def test_released_drawings_stay_as_they_were() -> None:
    """Reports name their cases: a released drawing is kept as it was. Version 8's digests were taken with the code
    before version 9, version 9's at its release (same SPECs, seeds and fields)."""
    assert _digests(8, ((3, 2, 7), (2, 3, 5), (1, 1, 3))) == ["ef06845f422d97b7", "4ee437bf823637e2",
                                                               "ee24679d2f132861"]
    assert len(unseen_cases(*_spec(3, 2), 7, version=8)) <= MAX_UNSEEN
    assert _digests(9, ((3, 2, 7), (2, 3, 5), (1, 1, 3), (3, 3, 1))) == [
        "76a5d6420a82c3d0", "b213c8485669b025", "d6bbf8722212d7d5", "fac0c59a1979a1a3"]
