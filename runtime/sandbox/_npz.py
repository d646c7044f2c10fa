"""Array files that keep bf16/fp8 dtypes across the sandbox boundary.

``np.savez`` writes ml_dtypes arrays as opaque void records, so both sides of the sandbox store every array
as a view with a standard numpy dtype plus its canonical dtype name (``runtime.dtypes``), and restore it on
load. Loading never unpickles (``allow_pickle=False``): the child is untrusted.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import BinaryIO

import numpy as np

from runtime.dtypes import name_of, to_numpy

__all__ = ["dumps_arrays", "load_arrays", "loads_arrays", "save_arrays"]

_STORAGE = {1: np.uint8, 2: np.uint16}
_ML_DTYPES = frozenset({"bf16", "fp8e4m3", "fp8e5m2"})


def _storage_view(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    if name_of(arr.dtype) in _ML_DTYPES:
        return arr.view(_STORAGE[arr.dtype.itemsize])
    return arr


def _write(fh: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    names = {k: name_of(np.asarray(v).dtype) for k, v in arrays.items()}
    payload = {k: _storage_view(np.asarray(v)) for k, v in arrays.items()}
    payload["__dtypes__"] = np.frombuffer(json.dumps(names).encode(), dtype=np.uint8)
    np.savez(fh, **payload)


def save_arrays(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """Write named arrays (any dtype of ``runtime.dtypes``) to one ``.npz`` file."""
    with open(path, "wb") as fh:
        _write(fh, arrays)


def dumps_arrays(arrays: dict[str, np.ndarray]) -> bytes:
    """:func:`save_arrays` into bytes (arrays cross the sandbox boundary over pipes)."""
    buf = io.BytesIO()
    _write(buf, arrays)
    return buf.getvalue()


def loads_arrays(data: bytes) -> dict[str, np.ndarray]:
    """:func:`load_arrays` from bytes (never unpickles).

    Raises:
        ValueError: the bytes are not an array file of this format.
    """
    try:
        return load_arrays(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - zipfile/numpy raise many types for foreign bytes
        raise ValueError(f"not an array payload: {exc}") from None


def load_arrays(path: str | Path | BinaryIO) -> dict[str, np.ndarray]:
    """Read arrays written by :func:`save_arrays`, restoring their dtypes.

    Raises:
        ValueError: the file is not an array file of this format.
    """
    with np.load(path, allow_pickle=False) as data:
        if "__dtypes__" not in data.files:
            raise ValueError(f"{path}: not an array file written by save_arrays")
        names = json.loads(data["__dtypes__"].tobytes().decode())
        out: dict[str, np.ndarray] = {}
        for key, dt_name in names.items():
            raw = data[key]
            dt = to_numpy(dt_name)
            out[key] = raw.view(dt) if raw.dtype != dt else raw
    return out
