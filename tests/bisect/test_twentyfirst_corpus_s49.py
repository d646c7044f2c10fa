"""The twenty-first gym corpus (``gym_corpus_twentyfirst``, session 49) and the rules it asked for: on source text
(fast tier), and on the real operators (slow tier).

Each row is planted in the real gym operator at test time and bisected with no case given (hit = the named culprit
is on the bugged statement). Blind scores and the rows' causes: ``bench/bisect_gym_corpus.md`` (session 49 section).

The general rules (each shown below on material that fails without it; all four read only the source and the error
message, ``runtime/bisect/_extents.py``):

* a ``reshape`` that cannot hold its operand, one of whose target dims is a local bound to *another* tensor's extent
  and the only such dim the element count asks to change: that local's line (``value_dim = key_cache.shape[3]``);
* a scalar read outside its tensor whose index on the bad axis is one local plus loop indices that are 0 in the
  failing trip: the local's line (``table_offset = seq_offset[q]``, tokens where blocks were meant);
* a write landing outside its destination whose offset steps by ``i * S`` while the tile is ``E`` long and the loop
  over ``i`` counts tiles of ``E``: the line computing ``i * S`` (``token_offset = block_idx * key_dim``);
* a write landing outside its destination that starts at ``a[i]`` of an offsets array while its valid extent is
  bounded by ``a[i + 1]`` read bare: the length's line (``seq_len = seq_lens[q + 1]``, the start not subtracted).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gym_corpus_twentyfirst import BUGS, EXPECTED, materialize, prepare

from runtime.bisect import bisect

NAMED: list[str] = [b.id for b in BUGS]


def _line(src: str, needle: str) -> int:
    return next(i for i, ln in enumerate(src.splitlines(), 1) if needle in ln)


# ----------------------------------------------------------------------------------------------- source-level rules

_PAGED = '''
import pypto


def gather(k_cache, v_cache, table, ends, k_out, v_out, first):
    nb = k_cache.shape[0]
    bs = k_cache.shape[1]
    kd = k_cache.shape[3]
    vd = v_cache.shape[3]
    k3 = pypto.reshape(k_cache, [nb * bs, 1, kd], inplace=True)
    v3 = pypto.reshape(v_cache, [nb * bs, 1, vd], inplace=True)
    for q in pypto.loop(table.shape[0], name="Q_LOOP", idx_name="q"):
        start = ends[q]
        n = ends[q + 1] - start
        base = first[q] // bs
        for b in pypto.loop(pypto.ceildiv(n, bs), name="B_LOOP", idx_name="b"):
            blk = table[q, base + b]
            t_off = b * bs
            valid = (n - t_off).min(bs)
            tile = pypto.view(k3, [bs, 1, kd], [blk * bs, 0, 0], valid_shape=[valid, 1, kd])
            pypto.assemble(tile, [start + t_off, 0, 0], k_out)
'''

_RESHAPE_MSG = "ValueError: cannot reshape array of size 327680 into shape (5120,1,512)"
_SCALAR_MSG = "scalar read table[0, 512] outside shape [4, 6] (iteration Q_LOOP=0, B_LOOP=0)"
_OUT_MSG = ("assemble into 'k_out': region [{}, {}) on axis 0 is outside the destination extent 6 (the device/oracle "
            "rejects this: ASSEMBLEOpError)")


def test_a_reshape_dim_read_from_another_tensor_names_that_read() -> None:
    from runtime.bisect._extents import static_sibling_extent_source

    bad = _PAGED.replace("vd = v_cache.shape[3]", "vd = k_cache.shape[3]")
    at = _line(bad, "v3 = pypto.reshape")
    got = static_sibling_extent_source(bad, at, _RESHAPE_MSG)
    assert got is not None and got[0] == _line(bad, "vd = k_cache.shape[3]") and "k_cache.shape[3]" in got[1], got
    # the operand's own extent read there: nothing to name (the error is someone else's); nor a count no dim fixes
    assert static_sibling_extent_source(_PAGED, at, _RESHAPE_MSG) is None
    assert static_sibling_extent_source(bad, at, _RESHAPE_MSG.replace("327680", "327681")) is None


def test_a_scalar_read_past_its_tensor_at_loop_index_zero_names_the_local_index() -> None:
    from runtime.bisect._extents import static_scalar_index_source

    bad = _PAGED.replace("base = first[q] // bs", "base = first[q]")
    at = _line(bad, "tile = pypto.view")  # (the emulator raises where the lazy scalar is used)
    got = static_scalar_index_source(bad, at, _SCALAR_MSG)
    assert got is not None and got[0] == _line(bad, "base = first[q]"), got
    # in a later trip of the block loop the loop index shares the value: no claim
    assert static_scalar_index_source(bad, at, _SCALAR_MSG.replace("B_LOOP=0", "B_LOOP=3")) is None
    # an index that is the loop index alone has no local to blame
    only_loop = bad.replace("table[q, base + b]", "table[q, b]")
    assert static_scalar_index_source(only_loop, at, _SCALAR_MSG) is None


def test_a_write_whose_offset_steps_by_another_extent_names_the_stride() -> None:
    from runtime.bisect._extents import static_write_stride_source

    bad = _PAGED.replace("t_off = b * bs", "t_off = b * kd")
    at = _line(bad, "pypto.assemble(tile")
    got = static_write_stride_source(bad, at, _OUT_MSG.format(512, 512))
    assert got is not None and got[0] == _line(bad, "t_off = b * kd"), got
    assert static_write_stride_source(_PAGED, at, _OUT_MSG.format(512, 512)) is None  # steps by the tile: no claim


def test_a_write_bounded_by_the_next_offset_read_bare_names_the_length() -> None:
    from runtime.bisect._extents import static_offsets_length_source

    bad = _PAGED.replace("n = ends[q + 1] - start", "n = ends[q + 1]")
    at = _line(bad, "pypto.assemble(tile")
    got = static_offsets_length_source(bad, at, _OUT_MSG.format(4, 9))
    assert got is not None and got[0] == _line(bad, "n = ends[q + 1]"), got
    assert static_offsets_length_source(_PAGED, at, _OUT_MSG.format(4, 9)) is None  # the start subtracted


_CHSUM = Path(__file__).parent / "eighteenth_data" / "chsum" / "chsum_impl.py"
_MOVE_MSG = ("`sum_out[:] = ...` / move: source shape [1, 2, 1, 1] != destination shape [1, 8, 1, 1] (0.2.0 SIM "
             "silently writes only the overlap; use assemble with offsets)")


def test_a_shape_unpacked_out_of_order_names_the_unpacking() -> None:
    from runtime.bisect._extents import static_unpack_order_source

    src = _CHSUM.read_text()
    bad = src.replace("n, c, h, w = x.shape", "n, h, c, w = x.shape")
    at = _line(bad, "sum_out.move(")
    shapes = {"x": (64, 8, 2, 1), "sum_out": (1, 8, 1, 1)}
    got = static_unpack_order_source(bad, at, _MOVE_MSG, shapes)
    assert got is not None and got[0] == _line(bad, "n, h, c, w = x.shape"), got
    # the extent wanted at no other position of x's shape (or at two): no claim; nor without the argument's shape
    assert static_unpack_order_source(bad, at, _MOVE_MSG, {"x": (64, 8, 2, 8)}) is None
    assert static_unpack_order_source(bad, at, _MOVE_MSG, {}) is None


_TWINS = """
import pypto


def small(x, y, t):
    n = x.shape[0]
    for i in pypto.loop(n, name="A", idx_name="i"):
        b = t[i]
        base = b * 16
        v = pypto.view(x, [16, 64], [base, 0])
        w = pypto.mul(v, 2.0)
        pypto.set_vec_tile_shapes(16, 64)
        pypto.assemble(w, [i * 16, 0], y)


def large(x, y, t):
    n = x.shape[0]
    for i in pypto.loop(n, name="A_large", idx_name="i"):
        b = t[i]
        base = b * 16
        v = pypto.view(x, [16, 64], [base, 0])
        w = pypto.mul(v, 2.0)
        pypto.set_vec_tile_shapes(8, 64)
        pypto.assemble(w, [i * 16, 0], y)
"""


def test_the_one_statement_a_kernel_differs_from_its_twin_in_is_the_suspect() -> None:
    from runtime.bisect._twin import twin_difference

    write = _line(_TWINS, "pypto.assemble(w")
    assert twin_difference(_TWINS, write) is None  # (constants - tile shapes, loop names - are no difference)
    bad = _TWINS.replace("base = b * 16\n        v = pypto.view(x, [16, 64], [base, 0])\n        w = pypto.mul(v, 2.0)\n"
                         "        pypto.set_vec_tile_shapes(16",
                         "base = b * 16 + i\n        v = pypto.view(x, [16, 64], [base, 0])\n        w = pypto.mul(v, 2.0)\n"
                         "        pypto.set_vec_tile_shapes(16", 1)
    got = twin_difference(bad, write)
    assert got is not None and got[0] == _line(bad, "base = b * 16 + i") and "'large'" in got[1], got
    # a difference after the departing line explains nothing; two differences name nothing
    assert twin_difference(bad, _line(bad, "b = t[i]")) is None
    two = bad.replace("w = pypto.mul(v, 2.0)", "w = pypto.mul(v, v)", 1)
    assert twin_difference(two, write) is None


# ----------------------------------------------------------------------------------------------- the real gym


@pytest.mark.slow
@pytest.mark.parametrize("bug_id", NAMED)
def test_twentyfirst_gym_bug_is_named_at_its_line(op_root, tmp_path, bug_id: str, golden_cache: dict) -> None:
    from gym_corpus import assert_named_at_line

    bug = next(b for b in BUGS if b.id == bug_id)
    d, stage, span = materialize(bug, prepare(bug.op, op_root), tmp_path)
    assert span[0] <= EXPECTED[bug_id] <= span[1]
    rep = bisect(d, stage, golden_cache=golden_cache, timeout=1800.0)
    assert_named_at_line(bug_id, rep, span)


@pytest.mark.slow
def test_the_prepared_gather_pa_kv_cache_passes_as_the_vendor_wrote_it(op_root, golden_cache: dict) -> None:
    # (the operator directory this corpus writes must not make the pristine kernel fail: its rows would measure that)
    from runtime.bisect.api import order_cases
    from runtime.opdir import load_op_dir

    d = prepare("gather_pa_kv_cache", op_root)
    rep = bisect(d, "gather_pa_kv_cache_impl.py", golden_cache=golden_cache,
                 case=order_cases(load_op_dir(d).cases())[-1].name)
    assert rep.status == "NO_DIVERGENCE", rep.summary
