"""Sealed shared memory: the case inputs, written once by the verifier and then immutable for every process.

Why: the device process must execute kernels on *its own trusted copy* of the inputs, the candidate child needs
fresh copies per call, and a several-GB op must not be copied through pipes. The parent writes every input
array into one ``memfd`` and seals it (``F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL``): from then
on no process - the candidate included, even through ``/proc/self/fd`` - can change or truncate those bytes.
The device maps it read-only; the candidate child maps it copy-on-write (``MAP_PRIVATE``), so a wrapper that
writes into its inputs changes only its own pages, and a fresh mapping per call is a fresh copy that costs
nothing until written.

Only numpy and :mod:`runtime.dtypes` are imported: the sandboxed runner and the device load this module.
"""

from __future__ import annotations

import fcntl
import mmap
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime.dtypes import name_of, to_numpy

__all__ = ["ALIGN", "SealedArrays", "Slot", "is_sealed", "map_private", "map_readonly", "slot_view", "slots_from_json"]

ALIGN = 64
"""Every array starts at a multiple of this (cache lines; any dtype's alignment)."""
_SEALS = fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL


@dataclass(frozen=True)
class Slot:
    """Where one array lives in the sealed file."""

    offset: int
    dtype: str
    """A :mod:`runtime.dtypes` name (``fp32``, ``bf16``, ...)."""
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n * to_numpy(self.dtype).itemsize

    def to_json(self) -> list[Any]:
        return [self.offset, self.dtype, list(self.shape)]


def slots_from_json(data: Any, size: int) -> dict[str, Slot]:
    """Parse a slot table (``{name: [offset, dtype, shape]}``); every slot must lie inside ``size`` bytes.

    Raises:
        ValueError: a malformed table (the caller treats it as a broken request).
    """
    if not isinstance(data, dict):
        raise ValueError("slot table is not a mapping")
    out: dict[str, Slot] = {}
    for name, entry in data.items():
        if not (isinstance(name, str) and isinstance(entry, list) and len(entry) == 3):
            raise ValueError(f"bad slot {name!r}")
        offset, dtype, shape = entry
        if not (isinstance(offset, int) and isinstance(dtype, str) and isinstance(shape, list)
                and all(isinstance(d, int) and d >= 0 for d in shape) and offset >= 0):
            raise ValueError(f"bad slot {name!r}")
        slot = Slot(offset, dtype, tuple(shape))
        to_numpy(dtype)
        if offset + slot.nbytes > size:
            raise ValueError(f"slot {name!r} lies outside the shared memory")
        out[name] = slot
    return out


_CHUNK = 64 << 20


def _write_at(fd: int, offset: int, arr: np.ndarray) -> None:
    """Write ``arr``'s bytes at ``offset`` with ``pwrite``, never through a writable mapping: ``F_SEAL_WRITE``
    fails with EBUSY while any process holds one, and a process forked by another thread of the verifier (the
    golden child) inherits the parent's mappings until it execs."""
    raw = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    done = 0
    while done < raw.size:
        done += os.pwrite(fd, raw[done:done + _CHUNK].data, offset + done)


class SealedArrays:
    """Arrays in one sealed ``memfd`` (see the module docstring). Close it when the run is over."""

    def __init__(self, fd: int, size: int, slots: dict[str, Slot], regions: dict[str, list[int]]) -> None:
        self.fd, self.size, self.slots, self.regions = fd, size, slots, regions

    @classmethod
    def create(cls, arrays: dict[str, np.ndarray], groups: dict[str, list[str]] | None = None,
               name: str = "pto-inputs") -> SealedArrays:
        """Write ``arrays`` (any dtype of :mod:`runtime.dtypes`) into a new memfd and seal it.

        ``groups`` (name -> keys, in order) lay the arrays out so that each group starts on a page boundary:
        ``regions[group] = [start, length]`` can be mapped alone (a wrapper call maps only its case's inputs).
        The fd is not inheritable; pass it explicitly (``pass_fds``) to the processes that need it.
        """
        groups = groups if groups is not None else {"all": list(arrays)}
        slots: dict[str, Slot] = {}
        regions: dict[str, list[int]] = {}
        offset = 0
        for group, keys in groups.items():
            offset = -(-offset // mmap.ALLOCATIONGRANULARITY) * mmap.ALLOCATIONGRANULARITY
            start = offset
            for key in keys:
                arr = arrays[key]
                slot = Slot(offset, name_of(arr.dtype), tuple(int(d) for d in arr.shape))
                slots[key] = slot
                offset += -(-max(slot.nbytes, 1) // ALIGN) * ALIGN
            regions[group] = [start, offset - start]
        size = max(offset, ALIGN)
        fd = os.memfd_create(name, os.MFD_ALLOW_SEALING | os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
            for key, slot in slots.items():
                if slot.nbytes:
                    _write_at(fd, slot.offset, arrays[key])
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
        except BaseException:
            os.close(fd)
            raise
        return cls(fd, size, slots, regions)

    def table(self) -> dict[str, list[Any]]:
        """The slot table as JSON data."""
        return {k: s.to_json() for k, s in self.slots.items()}

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> SealedArrays:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_sealed(fd: int) -> bool:
    """The fd is a memfd with every seal of :class:`SealedArrays` (the device refuses anything else)."""
    try:
        return fcntl.fcntl(fd, fcntl.F_GET_SEALS) & _SEALS == _SEALS
    except OSError:
        return False


def map_readonly(fd: int, size: int) -> mmap.mmap:
    """A read-only shared mapping (the device's trusted view)."""
    return mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else mmap.mmap(-1, 1)


def map_private(fd: int, size: int) -> mmap.mmap:
    """A copy-on-write mapping: writable, private to this process, fresh on every call."""
    return mmap.mmap(fd, size, access=mmap.ACCESS_COPY) if size else mmap.mmap(-1, 1)


def slot_view(mm: mmap.mmap, slot: Slot) -> np.ndarray:
    """The array of ``slot`` over the mapping (no copy; read-only if the mapping is)."""
    return np.ndarray(slot.shape, dtype=to_numpy(slot.dtype), buffer=mm, offset=slot.offset)
