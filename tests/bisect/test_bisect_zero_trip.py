"""A loop that runs no trip in the case bisect runs (session 22, ``sig_floor_rows`` of the fourth gym corpus).

``bs_loop = B // TILE_B`` where ``(B + TILE_B - 1) // TILE_B`` was meant is right for every B that is a multiple of
the tile and drops the tail rows otherwise; for B below one tile (a decode batch of 1) the loop runs no trip, the
kernel records no op at all, and bisect had nothing to compare: "not localized". The trip count of the loops around
the kernel's writes is worked out from the call's argument shapes and the source (``_rules.static_zero_trip_source``):
the outermost one that is 0 is where the kernel wrote nothing, and the line computing it is named.
"""

from __future__ import annotations

from runtime.bisect._rules import static_zero_trip_source

KERNEL = '''\
import pypto

TILE_B = 16
TILE_D = 512


@pypto.frontend.jit
def kern(x, out):
    B = x.shape[0]
    D = x.shape[1]
    bs_loop = B // TILE_B
    ds_loop = (D + TILE_D - 1) // TILE_D
    for b_idx in pypto.loop(bs_loop, name="b"):
        for d_idx in pypto.loop(ds_loop, name="d"):
            actual_b = (B - b_idx * TILE_B).min(TILE_B)
            t = pypto.view(x, [TILE_B, TILE_D], [b_idx * TILE_B, d_idx * TILE_D], valid_shape=[actual_b, TILE_D])
            out[b_idx * TILE_B:, d_idx * TILE_D:] = pypto.sigmoid(t)
'''


def test_the_outermost_loop_with_no_trip_names_the_line_computing_its_count() -> None:
    got = static_zero_trip_source(KERNEL, [("kern", {"x": (1, 16384), "out": (1, 16384)})])
    assert got is not None and got[0] == 11, got
    assert "bs_loop = B // TILE_B" in got[1] and "is 0" in got[1]


def test_an_inner_loop_with_no_trip_is_named_when_the_outer_one_runs() -> None:
    inner = KERNEL.replace("ds_loop = (D + TILE_D - 1) // TILE_D", "ds_loop = D // TILE_D").replace(
        "bs_loop = B // TILE_B", "bs_loop = pypto.ceildiv(B, TILE_B)")
    got = static_zero_trip_source(inner, [("kern", {"x": (20, 300), "out": (20, 300)})])
    assert got is not None and got[0] == 12, got


def test_no_claim_when_every_loop_runs_or_a_count_cannot_be_worked_out() -> None:
    assert static_zero_trip_source(KERNEL, [("kern", {"x": (20, 16384), "out": (20, 16384)})]) is None
    from_data = KERNEL.replace("bs_loop = B // TILE_B", "bs_loop = x[0, 0]")
    assert static_zero_trip_source(from_data, [("kern", {"x": (1, 16384), "out": (1, 16384)})]) is None
    assert static_zero_trip_source(KERNEL, [("other", {"x": (1, 16384)})]) is None
    assert static_zero_trip_source("def broken(:", [("kern", {"x": (1, 1)})]) is None
