"""The closed registry of device op kinds: kind -> builder (params -> run / batched run) and parameter schema.

A builder turns an op's data (`_program.Op`) into the functions that execute it: ``run(env)`` for one
iteration and, when the op can run for many independent loop iterations at once, ``brun(env)`` (the batch
executor gives every body tensor a leading iteration axis). The schema names the type of every parameter;
the decoder (`_validate`) checks programs against it, so an op kind or parameter outside the registry never
reaches a builder.

Schema types: ``key`` (storage key), ``keys``, ``expr``, ``exprs``, ``int``, ``ints``, ``bool``, ``str``,
``num`` (Python or numpy scalar), ``const`` (numpy scalar or small array), ``dtype`` (numpy dtype name),
``dt`` (pypto DataType name), ``enum:a|b|c`` (one of the strings); a trailing ``?`` allows None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ml_dtypes
import numpy as np

__all__ = ["DTYPES", "KINDS", "Kind", "kind", "np_dtype"]

DTYPES: dict[str, np.dtype] = {np.dtype(t).name: np.dtype(t) for t in (
    np.float32, np.float16, ml_dtypes.bfloat16, np.float64, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e8m0fnu,
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_)}
"""numpy dtypes a program may name (by ``np.dtype(...).name``)"""


def np_dtype(name: str) -> np.dtype:
    return DTYPES[name]


Run = Callable[[Any], None]
Build = Callable[[dict[str, Any], Any, Any], tuple[Run, Run | None]]


@dataclass(frozen=True)
class Kind:
    """One device op kind: its builder, the type of each parameter, and a cross-field check."""

    name: str
    build: Build
    schema: dict[str, str]
    check: Callable[[dict[str, Any]], str | None] | None = None
    """returns the reason a parameter combination is invalid, or None"""
    reads: tuple[str, ...] = field(default=())
    """parameters holding keys the op reads"""
    writes: tuple[str, ...] = field(default=())
    """parameters holding keys the op writes in place"""
    produces: tuple[str, ...] = field(default=())
    """parameters holding keys the op produces"""


KINDS: dict[str, Kind] = {}


def kind(name: str, schema: dict[str, str], *, check: Callable[[dict[str, Any]], str | None] | None = None,
         reads: tuple[str, ...] = (), writes: tuple[str, ...] = (), produces: tuple[str, ...] = ("out",),
         ) -> Callable[[Build], Build]:
    """Register the builder of op kind ``name``."""

    def deco(fn: Build) -> Build:
        KINDS[name] = Kind(name=name, build=fn, schema=schema, check=check, reads=reads, writes=writes,
                           produces=produces)
        return fn

    return deco
