"""One dtype vocabulary for the whole project.

SPEC.md files, module_interfaces.yaml, the emulator and the verifier all name dtypes; this module is the
single place that maps those names to numpy dtypes (ml_dtypes for bf16 and fp8) so that "bf16" means the
same bytes everywhere. Names follow the short forms used in SPEC files (``fp32``, ``bf16`` ...) and accept
the long aliases used by module_interfaces.yaml (``float32``, ``bfloat16`` ...).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

__all__ = [
    "CANONICAL",
    "TORCH_BY_BYTES",
    "DTypeError",
    "canonical_name",
    "is_float",
    "is_float_dtype",
    "is_integer",
    "itemsize",
    "name_of",
    "to_numpy",
]


TORCH_BY_BYTES: dict[str, str] = {"bfloat16": "int16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8",
                                   "float8_e8m0fnu": "uint8"}
"""ml_dtypes types that torch has under the same name but ``torch.from_numpy`` / ``Tensor.numpy`` refuse: they cross
by a view of their bytes as this integer type. The one table for verify's calling layer, the emulator's argument
views and the gym import's golden.py adapter (they had three copies, one of them missing ``float8_e8m0fnu``)."""


class DTypeError(ValueError):
    """An unknown dtype name or numpy dtype."""


# canonical name -> numpy dtype
CANONICAL: dict[str, np.dtype] = {
    "fp32": np.dtype(np.float32),
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp64": np.dtype(np.float64),
    "fp8e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
    "fp8e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "fp8e8m0": np.dtype(ml_dtypes.float8_e8m0fnu),
    "int8": np.dtype(np.int8),
    "int16": np.dtype(np.int16),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
    "uint8": np.dtype(np.uint8),
    "uint16": np.dtype(np.uint16),
    "uint32": np.dtype(np.uint32),
    "uint64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}

_ALIASES: dict[str, str] = {
    "float32": "fp32",
    "float": "fp32",
    "f32": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "double": "fp64",
    "float8_e4m3fn": "fp8e4m3",
    "fp8_e4m3": "fp8e4m3",
    "float8_e5m2": "fp8e5m2",
    "fp8_e5m2": "fp8e5m2",
    "float8_e8m0fnu": "fp8e8m0",
    "fp8_e8m0": "fp8e8m0",
    "int": "int32",
    "bool_": "bool",
}
for _name in list(CANONICAL):
    _ALIASES.setdefault(_name, _name)

_BY_NUMPY: dict[np.dtype, str] = {dt: name for name, dt in CANONICAL.items()}


def canonical_name(name: str) -> str:
    """Return the canonical short name (``fp32``, ``bf16`` ...) for a dtype name or alias.

    Raises:
        DTypeError: the name is not a known dtype; the message lists the accepted names.
    """
    key = str(name).strip().lower()
    if key.startswith("torch."):
        key = key[len("torch.") :]
    if key.startswith("dt_"):
        key = key[len("dt_") :]
    try:
        return _ALIASES[key]
    except KeyError:
        raise DTypeError(
            f"unknown dtype {name!r}; use one of: {', '.join(sorted(CANONICAL))}"
        ) from None


def to_numpy(name: str) -> np.dtype:
    """Numpy dtype for a dtype name (bf16/fp8 are ml_dtypes types)."""
    return CANONICAL[canonical_name(name)]


def name_of(dtype: np.dtype | type) -> str:
    """Canonical name of a numpy dtype, e.g. ``name_of(ml_dtypes.bfloat16) == 'bf16'``."""
    dt = np.dtype(dtype)
    try:
        return _BY_NUMPY[dt]
    except KeyError:
        raise DTypeError(f"numpy dtype {dt} has no PTO Forge name") from None


def is_float(name: str) -> bool:
    """True for floating-point dtypes (fp8/bf16/fp16/fp32/fp64)."""
    return canonical_name(name).startswith(("fp", "bf"))


def is_float_dtype(dt: np.dtype) -> bool:
    """True for a floating-point numpy dtype, ml_dtypes' bf16 and fp8 included (numpy gives those kind ``V``)."""
    return dt.kind == "f" or dt.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def is_integer(name: str) -> bool:
    """True for signed and unsigned integer dtypes (not bool)."""
    return canonical_name(name).startswith(("int", "uint"))


def itemsize(name: str) -> int:
    """Bytes per element."""
    return to_numpy(name).itemsize
