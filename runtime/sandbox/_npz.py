"""Array files that keep bf16/fp8 dtypes across the sandbox boundary.

``np.savez`` writes ml_dtypes arrays as opaque void records, so both sides of the sandbox store every array
as a view with a standard numpy dtype plus its canonical dtype name (``runtime.dtypes``), and restore it on
load. Loading never unpickles (``allow_pickle=False``): the child is untrusted.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from runtime.dtypes import name_of, to_numpy

__all__ = ["load_arrays", "save_arrays"]

_STORAGE = {1: np.uint8, 2: np.uint16}
_ML_DTYPES = frozenset({"bf16", "fp8e4m3", "fp8e5m2"})


def _storage_view(arr: np.ndarray) -> np.ndarray:
    arr = np.ascontiguousarray(arr)
    if name_of(arr.dtype) in _ML_DTYPES:
        return arr.view(_STORAGE[arr.dtype.itemsize])
    return arr


def save_arrays(path: str | Path, arrays: dict[str, np.ndarray]) -> None:
    """Write named arrays (any dtype of ``runtime.dtypes``) to one ``.npz`` file."""
    names = {k: name_of(np.asarray(v).dtype) for k, v in arrays.items()}
    payload = {k: _storage_view(np.asarray(v)) for k, v in arrays.items()}
    payload["__dtypes__"] = np.frombuffer(json.dumps(names).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **payload)


def load_arrays(path: str | Path) -> dict[str, np.ndarray]:
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
