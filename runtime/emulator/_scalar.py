"""`pypto.Element`: a typed scalar operand."""

from __future__ import annotations

from typing import Any

from runtime.emulator._enums import DataType
from runtime.emulator._errors import py_error

__all__ = ["Element"]


class Element:
    """A scalar with an explicit DataType, e.g. ``pypto.Element(pypto.DT_FP16, 0.5)``."""

    __slots__ = ("_dtype", "_value")

    def __init__(self, dtype: Any, value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise py_error("ValueError", f"Invalid data type {type(value).__name__} for Element")
        self._dtype = DataType(dtype)
        self._value = value

    @property
    def dtype(self) -> DataType:
        return self._dtype

    @property
    def value(self) -> int | float:
        return self._value

    def __repr__(self) -> str:
        return f"Element({self._dtype.name}, {self._value})"
