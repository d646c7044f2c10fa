"""Frames between the candidate child and the device, read strictly (either side may be facing a liar).

A frame is ``MAGIC + kind (4 bytes) + length (8 bytes LE) + payload`` (:mod:`runtime.sandbox._wire`). A message
with a JSON head and raw blobs is one frame whose payload is ``len(head) (4 bytes LE) + head + blobs``; the head
says how long each blob is. :class:`FrameReader` reads from a blocking fd and enforces a size cap per frame, so
a peer can neither make the reader allocate without bound nor desynchronise it: anything else is
:class:`ChannelError` (the device reports it as a protocol violation of the candidate, FAIL_CHEAT).

Only the standard library: both the device and the sandboxed runner import it.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

from runtime.sandbox._wire import MAGIC

__all__ = ["ChannelError", "FrameReader", "pack", "send", "unpack"]

_HEAD = struct.Struct("<4s4sQ")
_JLEN = struct.Struct("<I")


class ChannelError(ValueError):
    """The peer broke the framing (foreign bytes, oversized or torn frame, unreadable head)."""


class FrameReader:
    """Reads whole frames from ``fd``; ``None`` at a clean end of stream."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def _exact(self, n: int) -> bytearray | None:
        buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            k = os.readv(self.fd, [view[got:]])
            if k == 0:
                if got == 0:
                    return None
                raise ChannelError(f"torn frame: {got} of {n} bytes, then end of stream")
            got += k
        return buf

    def read(self, caps: dict[bytes, int]) -> tuple[bytes, bytearray] | None:
        """The next frame ``(kind, payload)``; ``caps`` maps every allowed kind to its largest payload."""
        head = self._exact(_HEAD.size)
        if head is None:
            return None
        magic, kind, size = _HEAD.unpack(bytes(head))
        if magic != MAGIC:
            raise ChannelError("foreign bytes where a frame should start")
        kind = bytes(kind)
        if kind not in caps:
            raise ChannelError(f"unexpected frame kind {kind!r}")
        if size > caps[kind]:
            raise ChannelError(f"{kind.decode(errors='replace')} frame of {size} bytes exceeds its cap "
                               f"({caps[kind]})")
        payload = self._exact(size) if size else bytearray()
        if payload is None:
            raise ChannelError("torn frame: header without payload")
        return kind, payload


    def read_message_into(self, kind: bytes, cap: int,
                          place: Any) -> tuple[dict[str, Any], list[memoryview]] | None:
        """The next frame, which must be a :func:`pack` message of ``kind``, with its blobs read straight into
        the memory ``place(head, i, size)`` hands out (a writable byte view of exactly ``size`` bytes: the
        destination array) or, where it returns None, into fresh buffers. ``None`` at a clean end of stream.

        Why: a kernel that writes a GB output sent it back to the candidate's process in one frame, read into a
        buffer of its own and then copied into the wrapper's array: the process held the output twice.

        Raises:
            ChannelError: anything :meth:`read` or :func:`unpack` refuses.
        """
        first = self._exact(_HEAD.size)
        if first is None:
            return None
        magic, got, size = _HEAD.unpack(bytes(first))
        if magic != MAGIC:
            raise ChannelError("foreign bytes where a frame should start")
        if bytes(got) != kind:
            raise ChannelError(f"unexpected frame kind {bytes(got)!r}")
        if not _JLEN.size <= size <= cap:
            raise ChannelError(f"{kind.decode(errors='replace')} frame of {size} bytes is outside its bounds")
        (n,) = _JLEN.unpack(bytes(self._exact(_JLEN.size) or b""))
        if _JLEN.size + n > size:
            raise ChannelError("message head runs past the frame")
        head = _parse_head(bytes(self._exact(n) or b"") if n else b"", 4096)
        sizes = head.get("blobs", [])
        if _JLEN.size + n + sum(sizes) != size:
            raise ChannelError("message blobs do not add up to the frame")
        blobs: list[memoryview] = []
        for i, blob_size in enumerate(sizes):
            dest = place(head, i, blob_size) if blob_size else None
            if dest is None or len(dest) != blob_size:
                dest = memoryview(bytearray(blob_size))
            self._exact_into(dest)
            blobs.append(dest)
        return head, blobs

    def _exact_into(self, view: memoryview) -> None:
        got, n = 0, len(view)
        while got < n:
            k = os.readv(self.fd, [view[got:]])
            if k == 0:
                raise ChannelError(f"torn frame: {got} of {n} bytes, then end of stream")
            got += k


def _parse_head(raw: bytes, max_blobs: int) -> dict[str, Any]:
    """A message's JSON head, its blob table checked (a list of non-negative ints)."""
    try:
        head = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise ChannelError("message head is not JSON (or nested too deep)") from None
    if not isinstance(head, dict):
        raise ChannelError("message head is not an object")
    sizes = head.get("blobs", [])
    if not (isinstance(sizes, list) and len(sizes) <= max_blobs
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in sizes)):
        raise ChannelError("message blob table is malformed")
    return head


def pack(head: dict[str, Any], blobs: list[bytes | memoryview] = ()) -> list[bytes | memoryview]:  # type: ignore[assignment]
    """The payload pieces of a message: JSON ``head`` (``head["blobs"]`` = blob lengths) + the blobs."""
    head = {**head, "blobs": [len(memoryview(b).cast("B")) for b in blobs]}
    raw = json.dumps(head, separators=(",", ":")).encode()
    return [_JLEN.pack(len(raw)), raw, *blobs]


def unpack(payload: bytes | bytearray | memoryview, max_blobs: int = 4096) -> tuple[dict[str, Any], list[memoryview]]:
    """The JSON head (a dict) and the blobs of a message payload.

    Raises:
        ChannelError: any inconsistency (lengths, JSON, blob table).
    """
    view = memoryview(payload)
    if len(view) < _JLEN.size:
        raise ChannelError("message shorter than its head length")
    (n,) = _JLEN.unpack_from(view, 0)
    if _JLEN.size + n > len(view):
        raise ChannelError("message head runs past the frame")
    head = _parse_head(bytes(view[_JLEN.size:_JLEN.size + n]), max_blobs)
    sizes = head["blobs"] if "blobs" in head else []
    pos = _JLEN.size + n
    if pos + sum(sizes) != len(view):
        raise ChannelError("message blobs do not add up to the frame")
    blobs = []
    for s in sizes:
        blobs.append(view[pos:pos + s])
        pos += s
    return head, blobs


def send(fd: int, kind: bytes, pieces: list[bytes | memoryview]) -> None:
    """Write one frame made of ``pieces`` (blocking; large blobs are not copied into one buffer)."""
    size = sum(len(memoryview(p).cast("B")) for p in pieces)
    parts = [memoryview(_HEAD.pack(MAGIC, kind, size)), *(memoryview(p).cast("B") for p in pieces)]
    for part in parts:
        while part:
            part = part[os.write(fd, part[: 1 << 24]):]
