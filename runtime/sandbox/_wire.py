"""Framing of the two pipes between the parent and the sandboxed runner (stdin request, result channel).

A frame is ``MAGIC + kind (4 bytes) + length (8 bytes, little endian) + payload``. The parent parses the result
channel only after the whole sandbox is dead, and only as this exact grammar: anything else on the channel (bytes
after ``DONE``, an unknown kind, a torn frame from a process that was not killed) is a protocol violation that
the verifier reports, never silently accepted data.
"""

from __future__ import annotations

import struct

__all__ = ["MAGIC", "WireError", "frame", "parse"]

MAGIC = b"PTOR"
_HEAD = struct.Struct("<4s4sQ")


class WireError(ValueError):
    """The byte stream is not a sequence of well-formed frames."""


def frame(kind: bytes, payload: bytes) -> bytes:
    """One frame (``kind`` is exactly 4 bytes)."""
    if len(kind) != 4:
        raise ValueError("frame kind must be 4 bytes")
    return _HEAD.pack(MAGIC, kind, len(payload)) + payload


def parse(data: bytes) -> list[tuple[bytes, bytes]]:
    """All frames of ``data`` in order.

    Raises:
        WireError: a torn or foreign frame (the message says where).
    """
    out: list[tuple[bytes, bytes]] = []
    pos = 0
    view = memoryview(data)
    while pos < len(data):
        if len(data) - pos < _HEAD.size:
            raise WireError(f"torn frame header at byte {pos}")
        magic, kind, size = _HEAD.unpack_from(view, pos)
        if magic != MAGIC:
            raise WireError(f"foreign bytes at byte {pos}")
        pos += _HEAD.size
        if len(data) - pos < size:
            raise WireError(f"torn {kind!r} frame at byte {pos}")
        out.append((bytes(kind), bytes(view[pos:pos + size])))
        pos += size
    return out
