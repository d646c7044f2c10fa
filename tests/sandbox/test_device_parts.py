"""The pieces of the host/device boundary that need no kernel: sealed shared memory, descriptors, frames and the
child's provenance finder (each a function of data, tested as such)."""

from __future__ import annotations

import mmap
import os

import ml_dtypes
import numpy as np
import pytest

from runtime.dtypes import to_numpy
from runtime.sandbox._channel import ChannelError, FrameReader, pack, send, unpack
from runtime.sandbox._desc import (
    DescError,
    build,
    canonical_nans,
    honest_cast,
    kernel_written,
    signature,
    uninit_array,
    value_cast_source,
)
from runtime.sandbox._finder import Provenance, digest
from runtime.sandbox._shm import (
    SealedArrays,
    is_sealed,
    map_private,
    map_readonly,
    slot_view,
    slots_from_json,
)

# ------------------------------------------------------------------------------------------ shared memory


def test_sealed_inputs_cannot_be_changed_by_anyone_and_copies_are_private() -> None:
    arrays = {"c0_in0": np.arange(6, dtype=np.float32).reshape(2, 3), "c0_in1": np.ones(4, ml_dtypes.bfloat16),
              "c1_in0": np.arange(5, dtype=np.int32)}
    with SealedArrays.create(arrays, {"c0": ["c0_in0", "c0_in1"], "c1": ["c1_in0"]}) as shm:
        assert is_sealed(shm.fd)
        start, _length = shm.regions["c1"]
        assert start % mmap.ALLOCATIONGRANULARITY == 0  # each case maps alone
        with pytest.raises(OSError):
            mmap.mmap(shm.fd, shm.size)  # a shared writable mapping
        with pytest.raises(OSError):
            os.ftruncate(shm.fd, 0)
        with pytest.raises(OSError):
            os.pwrite(shm.fd, b"x", 0)
        again = os.open(f"/proc/self/fd/{shm.fd}", os.O_RDWR)  # reopening works; the seals hold on the file
        try:
            with pytest.raises(OSError):
                os.write(again, b"x")
            with pytest.raises(OSError):
                mmap.mmap(again, shm.size)
        finally:
            os.close(again)
        private = map_private(shm.fd, shm.size)
        mine = slot_view(private, shm.slots["c0_in0"])
        mine[...] = -1  # copy-on-write: only this mapping changes
        trusted = slot_view(map_readonly(shm.fd, shm.size), shm.slots["c0_in0"])
        np.testing.assert_array_equal(trusted, arrays["c0_in0"])
        assert not trusted.flags.writeable
        assert slot_view(map_readonly(shm.fd, shm.size), shm.slots["c0_in1"]).dtype == ml_dtypes.bfloat16
        assert slots_from_json(shm.table(), shm.size) == shm.slots
    with pytest.raises(ValueError):
        slots_from_json({"x": [shm.size, "fp32", [4]]}, shm.size)  # outside the memory


# ------------------------------------------------------------------------------------------ descriptors

X = np.arange(12, dtype=np.float32).reshape(3, 4)
X.setflags(write=False)


@pytest.mark.parametrize(("desc", "expected"), [
    (["in", 0], X),
    (["view", ["in", 0], 16, [2, 4], [16, 4], "fp32"], X[1:]),
    (["copy", ["view", ["in", 0], 0, [4, 3], [4, 16], "fp32"]], X.T),
    (["cast", ["in", 0], "fp16"], X.astype(np.float16)),
    (["pad", ["in", 0], [[0, 1], [0, 2]], "00000000"], np.pad(X, [[0, 1], [0, 2]])),
    (["const", [2, 2], "int32", "07000000"], np.full((2, 2), 7, np.int32)),
])
def test_descriptors_build_from_trusted_data(desc: list, expected: np.ndarray) -> None:
    got = build(desc, [X], [], [], 1 << 20).array
    assert got.dtype == expected.dtype and np.array_equal(got, expected)


def test_a_view_of_a_buffer_writes_through_to_it() -> None:
    buf = np.zeros((3, 4), np.float32)
    b = build(["view", ["buf", 0], 16, [4], [4], "fp32"], [X], [buf], [0], 1 << 20)
    b.array[:] = 5
    assert b.root == 0 and buf[1].tolist() == [5, 5, 5, 5] and buf[0].sum() == 0


@pytest.mark.parametrize("desc", [
    ["view", ["in", 0], 4, [3, 4], [16, 4], "fp32"],   # one element past the end
    ["view", ["in", 0], 0, [2], [-4], "fp32"],        # negative stride
    ["in", 1], ["buf", 0], ["in", True], ["host"], [], "in", ["uninit", [2], "complex128"],
    ["const", [1 << 39], "fp32", "00000000"],           # over the budget
    ["const", [2], "fp32", "zz"], ["pad", ["in", 0], [[0, 1]], "00000000"],
    ["copy"] * 1 + [["copy", ["copy", ["copy", ["copy", ["copy", ["copy", ["copy", ["copy", ["in", 0]]]]]]]]]],
])
def test_descriptors_the_device_refuses(desc: list) -> None:
    with pytest.raises(DescError):
        build(desc, [X], [], [], 1 << 20)


def test_outputs_must_come_from_a_written_buffer_and_blanks_compare_equal() -> None:
    assert kernel_written(["view", ["buf", 1], 0, [2], [4], "fp32"], {1}, [0, 1])
    assert not kernel_written(["in", 0], {1}, [0, 1])
    assert not kernel_written(["cast", ["buf", 1], "fp16"], {1}, [0, 1])
    assert not kernel_written(["buf", 0], {1}, [0, 1])
    assert signature(["const", [2], "fp32", "00000000"], True) == signature(["uninit", [2], "fp32"], True)
    assert signature(["const", [2], "fp32", "0000803f"], True) != signature(["uninit", [2], "fp32"], True)
    assert signature(["const", [2], "fp32", "00000000"], False) != signature(["uninit", [2], "fp32"], False)


# ------------------------------------------------------------------------------------------ frames


def test_frames_round_trip_and_refuse_what_breaks_them() -> None:
    r, w = os.pipe()
    try:
        send(w, b"KERN", pack({"a": [1, 2]}, [b"blob", memoryview(np.arange(3, dtype=np.float32).view(np.uint8))]))
        kind, payload = FrameReader(r).read({b"KERN": 1 << 20})
        head, blobs = unpack(payload)
        assert kind == b"KERN" and head["a"] == [1, 2] and bytes(blobs[0]) == b"blob" and len(blobs[1]) == 12
        send(w, b"KERN", pack({}, [b"x" * 100]))
        with pytest.raises(ChannelError, match="cap"):
            FrameReader(r).read({b"KERN": 50})
    finally:
        os.close(r)
        os.close(w)
    for bad in (b"\x00\x00", b"\x05\x00\x00\x00{}", b"\x02\x00\x00\x00[]",
                b"\x0f\x00\x00\x00{\"blobs\": [99]}", b"\x04\x00\x00\x00" + b"[" * 4):
        with pytest.raises(ChannelError):
            unpack(bytearray(bad))
    deep = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ChannelError):
        unpack(bytearray(len(deep).to_bytes(4, "little") + deep))


# ------------------------------------------------------------------------------------------ the child's finder


def test_the_finder_names_views_copies_casts_pads_and_host_data() -> None:
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    p = Provenance()
    p.reset([x])
    assert p.describe(x) == ["in", 0]
    assert p.describe(x[2:4])[0] == "view"
    assert p.describe(x.reshape(4, 8))[0] == "view"
    assert p.describe(np.ascontiguousarray(x.T))[0] == "copy"
    assert p.describe(x.astype(np.float16))[0] == "cast"
    assert p.describe(np.pad(x, [[0, 8], [0, 0]]))[0] == "pad"
    assert p.describe(np.zeros((3, 3), np.float32))[0] == "const"
    assert p.describe(x * 2) == ["host"]
    assert p.describe(np.empty((5, 5), np.float32) * 0 + np.arange(25, dtype=np.float32).reshape(5, 5),
                      write_only=True)[0] == "uninit"
    y = np.arange(32, dtype=np.float32).reshape(8, 4) + 0.5
    p.register(7, y)
    assert p.describe(y[1:]) [:2] == ["view", ["buf", 7]]
    assert p.describe(y.copy(), output=True)[0] == "copy"
    assert p.describe(y * 2, output=True) == ["host"]
    for desc in (p.describe(x[2:4]), p.describe(np.ascontiguousarray(x.T)), p.describe(np.pad(x, [[0, 8], [0, 0]]))):
        built = build(desc, [x], [y], [1], 1 << 20).array  # the device rebuilds exactly the child's bytes
        assert digest(built) in {digest(x[2:4]), digest(np.ascontiguousarray(x.T)), digest(np.pad(x, [[0, 8], [0, 0]]))}


def test_the_finder_names_a_permuted_input_laid_out_in_another_shape_maybe_cast() -> None:
    """A wrapper's ``x.to(bf16).permute(0, 2, 1, 3).contiguous().view(B * N * S, D)`` (BSND -> BNSD rows, the gym's
    gated_delta_rule) was host data: the permutation was only searched for an argument of the permuted shape."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 6, 4, 8)).astype(np.float32)
    b = rng.standard_normal((1, 6, 4)).astype(np.float32)
    p = Provenance()
    p.reset([x, b])
    args = [np.ascontiguousarray(x.transpose(0, 2, 1, 3)).reshape(24, 8),
            np.ascontiguousarray(x.transpose(0, 2, 1, 3).astype(ml_dtypes.bfloat16)).reshape(24, 8),
            np.ascontiguousarray(b.transpose(0, 2, 1)).reshape(24, 1),
            np.ascontiguousarray(x.transpose(2, 0, 3, 1)).reshape(4, 48)]
    for arg in args:
        desc = p.describe(arg)
        assert desc[0] == "view" and desc != ["host"], desc
        assert digest(build(desc, [x, b], [], [], 1 << 20).array) == digest(arg)  # the device's bytes are the child's
    assert p.describe(np.ascontiguousarray(x.transpose(0, 2, 1, 3)).reshape(24, 8) + 1) == ["host"]
    swapped = np.ascontiguousarray(x.transpose(0, 2, 1, 3)).reshape(24, 8)
    swapped[3, 5] += 1  # same first row, one element off: a full comparison decides
    assert p.describe(swapped) == ["host"]


def test_the_finder_names_a_padded_then_permuted_input_in_another_shape() -> None:
    """``F.pad(q, (0, 0, 0, 0, 0, pad)).permute(0, 2, 1, 3).contiguous().view(-1, D)``: the gym's gated_delta_rule
    pads the sequence to its tile, then lays heads out as rows; a cast on the way, or another pad value, too."""
    rng = np.random.default_rng(5)
    q = rng.standard_normal((1, 5, 3, 8)).astype(np.float32)
    g = rng.standard_normal((1, 5, 3)).astype(np.float32)
    p = Provenance()
    p.reset([q, g])
    padded = np.pad(q, [[0, 0], [0, 3], [0, 0], [0, 0]])
    args = [np.ascontiguousarray(padded.transpose(0, 2, 1, 3)).reshape(24, 8),
            np.ascontiguousarray(padded.transpose(0, 2, 1, 3)).astype(ml_dtypes.bfloat16).reshape(24, 8),
            np.ascontiguousarray(np.pad(g, [[0, 0], [0, 3], [0, 0]], constant_values=-1.0).transpose(0, 2, 1))
            .reshape(24, 1)]
    for arg in args:
        desc = p.describe(arg)
        assert desc[0] == "view" and "pad" in str(desc), desc
        assert digest(build(desc, [q, g], [], [], 1 << 20).array) == digest(arg)
    noisy = args[0].copy()
    noisy[-1, -1] = 0.5  # the padding is not one constant: host data
    assert p.describe(noisy) == ["host"]
    assert p.describe(np.cumsum(args[2], axis=0)) == ["host"]


def test_a_copy_of_an_input_that_is_constant_by_chance_is_a_copy_not_a_constant() -> None:
    """Held-out attack A13 (a false rejection): a one-element copy of an input (an unseen N = 1 case) was described
    as a constant; its value differs between two seeds of the same shape, which looked like smuggling."""
    from runtime.sandbox._finder import Provenance

    for value in (3.5, -1.25):
        x = np.full((1, 1), value, dtype=np.float32)
        prov = Provenance()
        prov.reset([x])
        desc = prov.describe(x.astype(np.float32))  # astype copies
        assert "const" not in str(desc), desc
        assert "['in', 0]" in str(desc), desc


def test_an_output_tiled_by_kernel_written_buffers_is_their_join_and_gaps_or_overlaps_are_refused() -> None:
    """Held-out false rejection A14: one kernel call writes ``y[:h]`` and ``y[h:]`` through two arguments and the
    wrapper returns ``y``. The finder names ``y`` as a join of the two device buffers; the device rebuilds exactly
    the child's bytes from its own buffers; a piece nobody wrote on the device, a gap and an overlap are refused."""
    from runtime.sandbox._desc import build_join

    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    y = np.zeros((10, 4), np.float32)
    top, bottom = x[:6] * 2, x[6:] * 3  # what the device computed and sent back into the child's views
    y[:6], y[6:] = top, bottom
    p = Provenance()
    p.reset([x])
    p.register(0, x)  # argument 0 of the kernel call: the input
    p.register(1, y[:6])
    p.register(2, y[6:])
    desc = p.describe(y, output=True)
    assert desc[0] == "join" and [piece[3] for piece in desc[3]] == [["buf", 2], ["buf", 1]], desc
    buffers, roots = [x.copy(), top.copy(), bottom.copy()], [0, 1, 2]
    joined = build_join(desc, [x], buffers, roots, {1, 2}, 1 << 20)
    assert digest(joined) == digest(y)
    cols = np.zeros((10, 4), np.float32)  # column halves: strided pieces
    cols[:, :2], cols[:, 2:] = x[:, :2] * 5, x[:, 2:] * 7
    q = Provenance()
    q.reset([x])
    q.register(1, cols[:, :2])
    q.register(2, cols[:, 2:])
    col_desc = q.describe(cols, output=True)
    assert digest(build_join(col_desc, [x], [x, np.ascontiguousarray(cols[:, :2]), np.ascontiguousarray(cols[:, 2:])],
                             [0, 1, 2], {1, 2}, 1 << 20)) == digest(cols)
    with pytest.raises(DescError, match="not a buffer a kernel wrote"):
        build_join(desc, [x], buffers, roots, {1}, 1 << 20)  # buffer 2 was not written by a kernel
    with pytest.raises(DescError, match="not a buffer a kernel wrote"):
        build_join(["join", [10, 4], "fp32", [[0, [10, 4], [16, 4], ["in", 0]]]], [x], buffers, roots, {1, 2}, 1 << 20)
    gap = ["join", [10, 4], "fp32", [desc[3][1]]]
    with pytest.raises(DescError, match="unwritten"):
        build_join(gap, [x], buffers, roots, {1, 2}, 1 << 20)
    overlap = ["join", [10, 4], "fp32", [desc[3][1], [16, [6, 4], [16, 4], ["buf", 1]], desc[3][0]]]
    with pytest.raises(DescError, match="overlap|outside"):
        build_join(overlap, [x], buffers, roots, {1, 2}, 1 << 20)
    self_overlap = ["join", [10, 4], "fp32", [[0, [10, 4], [8, 4], ["buf", 0]]]]
    with pytest.raises(DescError):
        build_join(self_overlap, [x], buffers, roots, {0}, 1 << 20)
    assert Provenance.describe(q, np.zeros((10, 4), np.float32), output=True) == ["host"]  # nothing of the device's
    half = np.zeros((10, 4), np.float32)
    half[:6] = top
    h = Provenance()
    h.reset([x])
    h.register(1, half[:6])  # the other rows were filled on the host: no join covers them
    assert h.describe(half, output=True)[0] != "join"


def test_a_reply_is_read_straight_into_the_wrapper_array_and_bad_frames_are_still_refused() -> None:
    """The device's reply carries what a kernel wrote (a GB output for a several-GB op); the candidate's process
    reads it straight into the wrapper's array instead of a buffer of its own plus a copy (peak memory)."""
    r, w = os.pipe()
    try:
        y = np.zeros(6, np.float32)
        other = np.arange(3, dtype=np.float32)
        send(w, b"RESP", pack({"back": [0, 1]}, [memoryview(np.arange(6, dtype=np.float32).view(np.uint8)),
                                                 memoryview(other.view(np.uint8))]))
        placed = []

        def place(head: dict, i: int, size: int):
            if head["back"][i] == 0 and size == y.nbytes:
                placed.append(i)
                return memoryview(y.view(np.uint8))
            return None

        head, blobs = FrameReader(r).read_message_into(b"RESP", 1 << 20, place)
        assert head["back"] == [0, 1] and placed == [0]
        np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32))  # no copy needed: it is there
        assert bytes(blobs[1]) == other.tobytes()  # a blob nobody placed gets a buffer of its own
        send(w, b"KERN", pack({}, []))
        with pytest.raises(ChannelError, match="unexpected frame kind"):
            FrameReader(r).read_message_into(b"RESP", 1 << 20, place)
    finally:
        os.close(r)
        os.close(w)
    r, w = os.pipe()
    try:
        send(w, b"RESP", pack({}, [b"x" * 100]))
        with pytest.raises(ChannelError, match="bounds"):
            FrameReader(r).read_message_into(b"RESP", 50, lambda *_: None)
    finally:
        os.close(r)
        os.close(w)
    r, w = os.pipe()
    os.write(w, b"PTORRESP" + (40).to_bytes(8, "little") + (2).to_bytes(4, "little") + b"{}" + b"x" * 10)
    os.close(w)
    try:
        with pytest.raises(ChannelError, match="add up|torn"):
            FrameReader(r).read_message_into(b"RESP", 1 << 20, lambda *_: None)
    finally:
        os.close(r)


@pytest.mark.parametrize(("dt", "pair"), [("bool", (False, True)), ("int32", (-2**31, 2**31 - 1)),
                                          ("int8", (-128, 127)), ("uint8", (255, 0))])
def test_an_uninitialised_allocation_mixes_two_extremes_in_every_row_and_column(dt: str, pair: tuple) -> None:
    """Red team s32: an uninitialised bool buffer was all False on the device - the golden's value where a mask kernel
    wrote only its True region, so it passed (a user gets torch.empty's garbage there); s32b: alternating by parity,
    every even column of an even-width buffer held one value, and a kernel that never wrote column 0 passed. The
    device builds the fill, the child digests with the same."""
    for shape in ((3, 5), (16, 64), (64, 2), (7,)):
        got = build(["uninit", list(shape), dt], [], [], [], 1 << 20).array
        assert set(np.unique(got).tolist()) == set(pair)
        np.testing.assert_array_equal(uninit_array(shape, got.dtype), got)
        if len(shape) == 2 and shape[0] >= 8:
            for axis in (0, 1):
                if got.shape[1 - axis] >= 4:
                    assert all(len(np.unique(v)) == 2 for v in np.moveaxis(got, axis, 0)), (shape, axis)
    assert np.isnan(build(["uninit", [4], "bf16"], [], [], [], 1 << 20).array.astype(np.float32)).all()


def test_an_output_may_be_one_value_cast_of_a_device_buffer_and_nothing_else() -> None:
    """Red team s32: an fp32 kernel whose wrapper returns ``y.to(x.dtype)`` was FAIL_CHEAT. One cast to a float or
    integer dtype of views of a buffer is a candidate (the device casts its own bytes); a cast of an input, of a
    constant, a cast of a cast, a cast to bool or with a computation under it is not."""
    buf = ["buf", 0]
    view = ["view", buf, 0, [2, 3], [12, 4], "fp32"]
    assert value_cast_source(["cast", view, "bf16"]) == view
    assert value_cast_source(["cast", view, "int64"]) == view  # whether the device accepts it: `honest_cast`
    assert value_cast_source(["view", ["cast", ["copy", buf], "fp16"], 0, [6], [2], "fp16"]) == ["copy", buf]
    for bad in (["cast", view, "bool"], ["cast", ["in", 0], "bf16"], ["cast", ["const", [2], "fp32", "00000000"],
                "bf16"], ["cast", ["cast", view, "fp16"], "bf16"], ["cast", view, "no_such_dtype"], view,
                ["pad", ["cast", view, "bf16"], [[0, 1], [0, 0]], "0000"]):
        assert value_cast_source(bad) is None, bad


def test_the_casts_an_output_may_be_round_a_float_or_keep_every_value() -> None:
    """Red team s33: an argmax wrapper returning the kernel's int32 ids as ``.long()`` (to match ``torch.argmax``)
    was FAIL_CHEAT. A float-to-float rounding or an exact widening is the device's own cast; a float to an integer
    (a floor computed on the host), a narrowing or sign-losing integer cast (it wraps) and a cast to bool are not."""
    bf16 = to_numpy("bf16")
    for ok in ((np.float32, bf16), (bf16, np.float32), (np.float32, np.float16), (np.int32, np.int64),
               (np.int8, np.int32), (np.uint8, np.int16), (np.bool_, np.int64), (np.int16, np.float32),
               (np.int32, np.float64)):
        assert honest_cast(np.dtype(ok[0]), np.dtype(ok[1])), ok
    for bad in ((np.float32, np.int32), (bf16, np.int64), (np.int64, np.int32), (np.int32, np.uint32),
                (np.int32, np.int16), (np.int32, np.float32), (np.int32, np.bool_), (np.uint32, np.int32)):
        assert not honest_cast(np.dtype(bad[0]), np.dtype(bad[1])), bad


def test_cast_digests_compare_without_nan_payloads() -> None:
    """torch and numpy round a float32 NaN to different bf16 / fp16 payloads (measured: every NaN differs, nothing
    else): the host's cast and the device's are compared with every NaN made the one quiet NaN."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(32)
    nans = (np.uint32(0x7F800001) + rng.integers(0, 0x7FFFFF, 64, dtype=np.uint32)) | (
        rng.integers(0, 2, 64, dtype=np.uint32) << np.uint32(31))
    x = np.concatenate([np.array([1.5, np.inf, -2.25e-3, 7e4, 3e-8], np.float32), nans.view(np.float32)])
    for np_dt, t_dt in ((ml_dtypes.bfloat16, torch.bfloat16), (np.float16, torch.float16)):
        dev = x.astype(np_dt)
        host = torch.from_numpy(x).to(t_dt).view(torch.int16).numpy().view(np_dt)
        assert digest(dev) != digest(host)  # the payloads differ (measured on torch 2.x / ml_dtypes)
        assert np.array_equal(dev[:5].view(np.uint16), host[:5].view(np.uint16))  # nothing else does
        assert digest(canonical_nans(dev)) == digest(canonical_nans(host))
    plain = np.arange(4, dtype=np.float32)
    assert canonical_nans(plain) is plain  # no NaN: no copy
