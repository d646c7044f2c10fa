"""Arrays on disk and across process boundaries: the one format of the project (``.npz`` + dtype names).

Why one module at the bottom of ``runtime``: the golden child, the sandbox runner and its parent, the
second-opinion child and bisection all move arrays between processes, and bf16/fp8 do not survive
``np.savez`` by themselves (they become opaque void records). Every array is therefore stored as a view
with a standard numpy storage dtype, and a JSON entry ``__dtypes__`` keeps each key's canonical dtype name
(:mod:`runtime.dtypes`) in order. Loading never unpickles (``allow_pickle=False``): some writers are untrusted.

Bisection records travel as JSON; :func:`encode_array` / :func:`decode_array` are the same convention for
one array inside a JSON document (canonical dtype name, shape, raw bytes in base64).

This module imports only numpy and :mod:`runtime.dtypes` (ml_dtypes), so light children (the golden runner,
the user's pypto interpreter, the sandbox) can import it without pydantic or yaml.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from runtime.dtypes import DTypeError, name_of, to_numpy

__all__ = ["ArrayWriter", "decode_array", "dumps_arrays", "encode_array", "load_arrays", "loads_arrays", "open_arrays",
           "save_arrays"]

_DTYPES = "__dtypes__"
_STORAGE = {1: np.uint8, 2: np.uint16}
_ML_DTYPES = frozenset({"bf16", "fp8e4m3", "fp8e5m2", "fp8e8m0"})
_UNREADABLE = (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile)


def _contiguous(a: Any) -> np.ndarray:
    """C-contiguous, shape kept (``np.ascontiguousarray`` would turn a 0-d array into shape ``(1,)``)."""
    arr = np.asarray(a)
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _storage_view(arr: np.ndarray) -> np.ndarray:
    arr = _contiguous(arr)
    if name_of(arr.dtype) in _ML_DTYPES:
        return arr.view(_STORAGE[arr.dtype.itemsize])
    return arr


def _write(fh: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    names = {k: name_of(np.asarray(v).dtype) for k, v in arrays.items()}
    payload: dict[str, Any] = {k: _storage_view(np.asarray(v)) for k, v in arrays.items()}
    payload[_DTYPES] = np.frombuffer(json.dumps(names).encode(), dtype=np.uint8)
    np.savez(fh, **payload)


def save_arrays(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """Write named arrays (any dtype of ``runtime.dtypes``, key order kept) to one ``.npz`` file."""
    with open(path, "wb") as fh:
        _write(fh, arrays)


def dumps_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    """:func:`save_arrays` into bytes (arrays cross the sandbox boundary over pipes)."""
    buf = io.BytesIO()
    _write(buf, arrays)
    return buf.getvalue()


def load_arrays(path: str | Path | BinaryIO) -> dict[str, np.ndarray]:
    """Read arrays written by :func:`save_arrays`, restoring their dtypes and key order.

    Raises:
        ValueError: the file is missing, truncated, or not an array file of this format.
    """
    where = getattr(path, "name", None) if not isinstance(path, str | Path) else Path(path).name
    try:
        with np.load(path, allow_pickle=False) as data:
            if _DTYPES not in data.files:
                raise ValueError("no dtype table (not written by save_arrays)")
            names = json.loads(data[_DTYPES].tobytes().decode())
            out: dict[str, np.ndarray] = {}
            for key, dt_name in names.items():
                raw, dt = data[key], to_numpy(dt_name)
                out[key] = raw.view(dt) if raw.dtype != dt else raw
            return out
    except _UNREADABLE as exc:
        raise ValueError(f"cannot read arrays from {where or 'the payload'}: {exc}") from None


def loads_arrays(data: bytes) -> dict[str, np.ndarray]:
    """:func:`load_arrays` from bytes (never unpickles).

    Raises:
        ValueError: the bytes are not an array file of this format.
    """
    try:
        return load_arrays(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - zipfile/numpy raise many types for foreign bytes
        raise ValueError(f"not an array payload: {exc}") from None


class ArrayWriter:
    """:func:`save_arrays` one array at a time, into one file: the same format (a ``.npz`` of storage views and a
    ``__dtypes__`` table, written at :meth:`close`), readable by :func:`load_arrays` and :func:`open_arrays`.

    Why: a golden run moves every case's inputs, outputs and intermediates between two processes; a file per
    case and kind (36 files for 12 cases) cost more than golden.py itself (a file open, a zip directory and a
    dtype table each). One writer per kind holds all cases (keys prefixed by the producer), and an array is
    written when it is made, so a producer never holds more than one case's arrays.
    """

    def __init__(self, path: str | Path) -> None:
        self._zip = zipfile.ZipFile(path, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self._names: dict[str, str] = {}

    def add(self, key: str, value: Any) -> None:
        """Append one array (any dtype of ``runtime.dtypes``) under ``key`` (unique within the file)."""
        arr = np.asarray(value)
        if key == _DTYPES or key in self._names:
            raise ValueError(f"array key {key!r} used twice (or reserved)")
        self._names[key] = name_of(arr.dtype)
        self._member(key, _storage_view(arr))

    def _member(self, key: str, arr: np.ndarray) -> None:
        # what np.savez does per array (same member name, same .npy encoding)
        with self._zip.open(key + ".npy", mode="w", force_zip64=True) as fh:
            np.lib.format.write_array(fh, arr, allow_pickle=False)

    def close(self) -> None:
        """Write the dtype table and the zip directory (a file never closed is unreadable, not wrong)."""
        if self._zip.fp is None:
            return
        self._member(_DTYPES, np.frombuffer(json.dumps(self._names).encode(), dtype=np.uint8))
        self._zip.close()

    def __enter__(self) -> ArrayWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Mapped:
    """The stored (uncompressed) members of an array file, mapped copy-on-write: an array is a view of the file's
    pages, read when first touched, never copied and never checksummed.

    Why: a deep golden run of AdamW at [7168, 2048] brings back ~25 tensors of 58.7 MB; ``np.load`` read each member
    through ``zipfile`` (a CRC-32 pass and a copy of 1.5 GB: 38 s of a loaded bisect). The writers here store
    members uncompressed (``ArrayWriter``, ``np.savez``), so each is a plain ``.npy`` at a known offset. The mapping
    is private (``ACCESS_COPY``): the arrays are writable like loaded ones and a write never reaches the file; it
    outlives the file (the golden run's directory is removed after reading). A member that is compressed, or whose
    header or extent does not check out, is read the usual way."""

    def __init__(self, path: str | Path) -> None:
        import mmap
        import os

        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            self._mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_COPY) if size else None
            with zipfile.ZipFile(fh) as zf:
                self._info = {i.filename: i for i in zf.infolist()}

    def get(self, key: str) -> np.ndarray | None:
        info = self._info.get(key + ".npy")
        mm = self._mm
        if mm is None or info is None or info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1:
            return None
        try:
            off = info.header_offset
            head = mm[off: off + 30]
            if len(head) != 30 or head[:4] != b"PK\x03\x04":
                return None
            n_name, n_extra = int.from_bytes(head[26:28], "little"), int.from_bytes(head[28:30], "little")
            start = off + 30 + n_name + n_extra
            end = start + info.file_size
            if end > len(mm):
                return None
            bio = io.BytesIO(mm[start: min(end, start + (1 << 20))])
            version = np.lib.format.read_magic(bio)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(bio)
            elif version in ((2, 0), (3, 0)):
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(bio)
            else:
                return None
            if dtype.hasobject:
                return None
            data = start + bio.tell()
            count = 1
            for d in shape:
                count *= int(d)
            if data + count * dtype.itemsize > end:
                return None
            return np.ndarray(shape, dtype=dtype, buffer=mm, offset=data, order="F" if fortran else "C")
        except (ValueError, TypeError, OSError):
            return None


class ArrayReader:
    """Arrays of one file read on demand (:func:`open_arrays`), dtypes restored as :func:`load_arrays` does."""

    def __init__(self, data: Any, names: dict[str, str], where: str, mapped: _Mapped | None = None) -> None:
        self._data, self._names, self._where, self._mapped = data, names, where, mapped

    def keys(self) -> list[str]:
        return list(self._names)

    def __contains__(self, key: object) -> bool:
        return key in self._names

    def __getitem__(self, key: str) -> np.ndarray:
        if key not in self._names:
            raise KeyError(key)
        try:
            dt = to_numpy(self._names[key])
            raw = self._mapped.get(key) if self._mapped is not None else None
            if raw is None:
                raw = self._data[key]
        except _UNREADABLE as exc:
            raise ValueError(f"cannot read array {key!r} from {self._where}: {exc}") from None
        return raw.view(dt) if raw.dtype != dt else raw

    def group(self, prefix: str) -> dict[str, np.ndarray]:
        """Every array whose key starts with ``prefix``, keyed by the rest of its key, in file order."""
        return {k[len(prefix):]: self[k] for k in self._names if k.startswith(prefix)}


@contextlib.contextmanager
def open_arrays(path: str | Path) -> Iterator[ArrayReader]:
    """Read a file of :func:`save_arrays` / :class:`ArrayWriter` one array at a time (never unpickles). Stored
    members come back as copy-on-write mappings of the file (``_Mapped``): the same values, no read pass.

    Raises:
        ValueError: the file is missing, truncated, or not an array file of this format.
    """
    where = Path(path).name
    try:
        data = np.load(path, allow_pickle=False)
    except _UNREADABLE as exc:
        raise ValueError(f"cannot read arrays from {where}: {exc}") from None
    with data:
        try:
            if _DTYPES not in data.files:
                raise ValueError("no dtype table (not written by save_arrays)")
            names = json.loads(data[_DTYPES].tobytes().decode())
        except _UNREADABLE as exc:
            raise ValueError(f"cannot read arrays from {where}: {exc}") from None
        try:
            mapped: _Mapped | None = _Mapped(path)
        except _UNREADABLE:
            mapped = None
        yield ArrayReader(data, names, where, mapped)


def encode_array(a: Any) -> dict[str, Any] | None:
    """JSON-safe form of one array: canonical dtype name, shape, raw bytes in base64 (bf16/fp8 included).

    An array of a dtype outside :mod:`runtime.dtypes` is widened to fp32 (bisection only compares values).
    """
    if a is None:
        return None
    arr = _contiguous(a)
    try:
        dt = name_of(arr.dtype)
    except DTypeError:
        arr = arr.astype(np.float32)
        dt = "fp32"
    return {"dtype": dt, "shape": list(arr.shape), "b64": base64.b64encode(arr.tobytes()).decode("ascii")}


def decode_array(d: dict[str, Any] | None) -> np.ndarray | None:
    """The array of :func:`encode_array` (a fresh, writable copy), or None for None/empty."""
    if not d:
        return None
    raw = base64.b64decode(d["b64"])
    return np.frombuffer(raw, dtype=to_numpy(d["dtype"])).reshape(d["shape"]).copy()
