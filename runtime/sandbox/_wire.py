"""Framing of the two pipes between the parent and the sandboxed runner (stdin request, result channel).

A frame is ``MAGIC + kind (4 bytes) + length (8 bytes, little endian) + payload``. The parent parses the result
channel only after the whole sandbox is dead, and only as this exact grammar: anything else on the channel (bytes
after ``DONE``, an unknown kind, a torn frame from a process that was not killed) is a protocol violation that
the verifier reports, never silently accepted data.
"""

from __future__ import annotations

import struct
from typing import Any

__all__ = ["MAGIC", "WireError", "frame", "parse", "parse_prefix"]

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
    frames, error = parse_prefix(data)
    if error:
        raise WireError(error)
    return frames


def parse_prefix(data: bytes | bytearray, *, copy: bool = True) -> tuple[list[tuple[bytes, Any]], str]:
    """The well-formed frames at the start of ``data``, and what is wrong after them ("" when nothing).

    ``copy=False`` gives each payload as a memoryview of ``data`` instead of a copy (the device's channel carries
    every output of a verification: copies of it multiplied the verifier's peak memory)."""
    out: list[tuple[bytes, Any]] = []
    pos = 0
    view = memoryview(data)
    while pos < len(data):
        if len(data) - pos < _HEAD.size:
            return out, f"torn frame header at byte {pos}"
        magic, kind, size = _HEAD.unpack_from(view, pos)
        if magic != MAGIC:
            return out, f"foreign bytes at byte {pos}"
        if len(data) - pos - _HEAD.size < size:
            return out, f"torn {bytes(kind)!r} frame at byte {pos}"
        pos += _HEAD.size
        out.append((bytes(kind), bytes(view[pos:pos + size]) if copy else view[pos:pos + size]))
        pos += size
    return out, ""
