"""Arrays across the process boundary: one .npz of raw bytes plus dtype names from runtime.dtypes.

``np.savez`` cannot round-trip ml_dtypes (bf16, fp8) by itself, so each array is stored as a byte view
(``uint8``) with its shape, and a JSON manifest keeps the canonical dtype name and the key order.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from runtime.dtypes import name_of, to_numpy

__all__ = ["load_arrays", "save_arrays"]

_MANIFEST = "__manifest__"


def save_arrays(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` (ordered) to ``path``."""
    manifest = []
    payload: dict[str, np.ndarray] = {}
    for i, (key, arr) in enumerate(arrays.items()):
        a = np.asarray(arr)
        if not a.flags.c_contiguous:
            a = a.copy(order="C")
        manifest.append({"key": key, "dtype": name_of(a.dtype), "shape": list(a.shape)})
        payload[f"a{i}"] = a.reshape(-1).view(np.uint8)
    payload[_MANIFEST] = np.frombuffer(json.dumps(manifest).encode("utf-8"), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **payload)


def load_arrays(path: Path) -> dict[str, np.ndarray]:
    """Read what :func:`save_arrays` wrote, preserving order and dtypes."""
    try:
        with np.load(path, allow_pickle=False) as data:
            manifest = json.loads(bytes(data[_MANIFEST]).decode("utf-8"))
            out: dict[str, np.ndarray] = {}
            for i, item in enumerate(manifest):
                raw = data[f"a{i}"]
                out[item["key"]] = raw.view(to_numpy(item["dtype"])).reshape(item["shape"]).copy()
            return out
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise ValueError(f"cannot read arrays from {path.name}: {exc}") from None
