"""SymbolicScalar: lazily evaluated integer expressions over loop indices, dynamic dims and tensor reads.

At trace time a loop index or a dynamic dim has no value; the kernel builds expressions from it (offsets,
valid extents, loop bounds). `_lower` turns them into program expressions (plain tuples) that the device
executor evaluates per iteration with Python ints. The trace-time
restrictions of the real class are kept: ``int()``/``bool()`` of a non-concrete value raise
``ValueError("Not concrete value")``, ``range()``/indexing raise TypeError (no ``__index__``), a float
operand raises AttributeError, and the object is unhashable (spec §2.4).
"""

from __future__ import annotations

from typing import Any

from runtime.emulator._errors import EmulatorError
from runtime.emulator._location import user_location
from runtime.emulator.device._expr import BIN_FUNCS

__all__ = ["SymbolicScalar", "as_sym", "is_symbolic", "linear_form", "simplify_int", "sym_max", "sym_min"]


class SymbolicScalar:
    """An integer expression; concrete when every leaf has a value (then folded to an immediate)."""

    __slots__ = ("_kind", "_a", "_b", "_op", "_value", "_name", "_loop", "_fn")
    __hash__ = None  # type: ignore[assignment]  # unhashable like the real class

    def __init__(self, *args: Any) -> None:
        self._a = self._b = self._op = self._loop = self._fn = None
        self._value: int | None = None
        self._name: str | None = None
        if len(args) == 1 and isinstance(args[0], SymbolicScalar):
            o = args[0]
            for s in SymbolicScalar.__slots__:
                setattr(self, s, getattr(o, s))
            return
        if len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool):
            self._kind, self._value = "imm", int(args[0])
        elif len(args) == 1 and isinstance(args[0], bool):
            self._kind, self._value = "imm", int(args[0])
        elif len(args) == 1 and isinstance(args[0], str):
            self._kind, self._name = "sym", args[0]
        elif len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], int):
            self._kind, self._name, self._value = "sym", args[0], int(args[1])
        else:
            raise ValueError("Invalid arguments")

    # -- construction helpers -------------------------------------------------------------------------
    @classmethod
    def _make(cls, kind: str, *, a=None, b=None, op=None, name=None, loop=None, fn=None) -> SymbolicScalar:
        s = cls.__new__(cls)
        s._kind, s._a, s._b, s._op, s._name, s._loop, s._fn = kind, a, b, op, name, loop, fn
        s._value = None
        return s

    @classmethod
    def runtime(cls, name: str, spec: tuple) -> SymbolicScalar:
        """A leaf whose value exists only at run time, described as data: ``("read", key, index, tensor_name)``
        (an INT32 element of a tensor) or ``("flag", "begin" | "end", loop_info)`` (`_lower` turns it into a
        program expression)."""
        return cls._make("rt", name=name, fn=spec)

    @classmethod
    def loop_index(cls, name: str, loop: Any) -> SymbolicScalar:
        return cls._make("idx", name=name, loop=loop)

    # -- queries ---------------------------------------------------------------------------------------
    def is_concrete(self) -> bool:
        return self._value is not None

    def is_immediate(self) -> bool:
        return self._kind == "imm"

    def is_symbol(self) -> bool:
        return self._kind in ("sym", "idx", "rt")

    def is_expression(self) -> bool:
        return self._kind in ("bin", "un")

    def concrete(self) -> int:
        if self._value is None:
            raise ValueError("Not concrete value")
        return self._value

    def as_variable(self) -> SymbolicScalar:
        """Marks an expression as a runtime variable on the device; no numeric effect."""
        return self

    @property
    def loop(self) -> Any:
        return self._loop

    # -- conversions (trace-time restrictions) ---------------------------------------------------------
    def __int__(self) -> int:
        return self.concrete()

    def __bool__(self) -> bool:
        return bool(self.concrete())

    def __float__(self) -> float:
        raise TypeError("float() argument must be a string or a real number, not 'SymbolicScalar'")

    # -- arithmetic ------------------------------------------------------------------------------------
    def _is_flag(self) -> bool:
        return self._kind == "rt" and isinstance(self._fn, tuple) and self._fn[0] == "flag"

    def _bin(self, op: str, other: Any, reverse: bool = False) -> SymbolicScalar:
        o = as_sym(other)
        a, b = (o, self) if reverse else (self, o)
        if (a._kind == "rt" or b._kind == "rt") and (a._is_flag() or b._is_flag()):
            # the wheel builds no expression over a loop flag (fidelity audit s33: `is_loop_begin(b) *
            # is_loop_begin(h)`, `+ ... == 2`, `== 1`, `~`, times an index test - all F3FFFF when recorded)
            f, ln = user_location()
            flag = a if a._is_flag() else b
            raise EmulatorError("F3FFFF", f"func RawSymbolicExpression: {flag!r} is a loop flag and takes no "
                                f"operator ({op!r} here): use it bare as an `if` condition (nest one `if` per "
                                "loop) or test the loop indices themselves (`(a + b) == 0`)", file=f, line=ln,
                                kind="RuntimeError")
        if a._value is not None and b._value is not None:
            return SymbolicScalar(BIN_FUNCS[op](a._value, b._value))  # the device's table: folding computes what it computes
        return SymbolicScalar._make("bin", a=a, b=b, op=op)

    def __add__(self, o): return self._bin("+", o)
    def __radd__(self, o): return self._bin("+", o, True)
    def __sub__(self, o): return self._bin("-", o)
    def __rsub__(self, o): return self._bin("-", o, True)
    def __mul__(self, o): return self._bin("*", o)
    def __rmul__(self, o): return self._bin("*", o, True)
    def __floordiv__(self, o): return self._bin("/", o)
    def __rfloordiv__(self, o): return self._bin("/", o, True)
    def __truediv__(self, o): return self._bin("/", o)
    def __rtruediv__(self, o): return self._bin("/", o, True)
    def __mod__(self, o): return self._bin("%", o)
    def __rmod__(self, o): return self._bin("%", o, True)
    def __eq__(self, o):  # type: ignore[override]
        if not isinstance(o, int | float | SymbolicScalar):
            return NotImplemented
        return self._bin("==", o)

    def __ne__(self, o):  # type: ignore[override]
        if not isinstance(o, int | float | SymbolicScalar):
            return NotImplemented
        return self._bin("!=", o)

    def __lt__(self, o): return self._bin("<", o)
    def __le__(self, o): return self._bin("<=", o)
    def __gt__(self, o): return self._bin(">", o)
    def __ge__(self, o): return self._bin(">=", o)
    def __and__(self, o): return self._bin("&", o)
    def __rand__(self, o): return self._bin("&", o, True)
    def __or__(self, o): return self._bin("|", o)
    def __ror__(self, o): return self._bin("|", o, True)

    def __neg__(self) -> SymbolicScalar:
        return self._bin("-", 0, True)

    def __pos__(self) -> SymbolicScalar:
        return self

    def __invert__(self) -> SymbolicScalar:
        return self._bin("~" if self._is_flag() else "==", 0)  # a flag raises before any operator is looked up

    def min(self, other: Any) -> SymbolicScalar:
        return self._bin("min", other)

    def max(self, other: Any) -> SymbolicScalar:
        return self._bin("max", other)

    def __repr__(self) -> str:
        k = self._kind
        if k == "imm":
            return str(self._value)
        if k in ("sym", "idx", "rt"):
            return str(self._name)
        if self._op in ("min", "max"):
            return f"RUNTIME_{self._op.capitalize()}({self._a!r}, {self._b!r})"
        if self._op == "==" and isinstance(self._b, SymbolicScalar) and self._b._value == 0 and k == "un":
            return f"!{self._a!r}"
        return f"({self._a!r}{self._op}{self._b!r})"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(repr(self), spec)


def as_sym(x: Any) -> SymbolicScalar:
    if isinstance(x, SymbolicScalar):
        return x
    if isinstance(x, bool | int):
        return SymbolicScalar(int(x))
    if hasattr(x, "__index__") and not isinstance(x, float):
        return SymbolicScalar(int(x.__index__()))
    raise AttributeError(f"'{type(x).__name__}' object has no attribute '_base'")


def is_symbolic(x: Any) -> bool:
    """True for a SymbolicScalar without a concrete value."""
    return isinstance(x, SymbolicScalar) and not x.is_concrete()


def static_int(x: Any) -> int | None:
    """The int value when known at trace time, else None."""
    if isinstance(x, SymbolicScalar):
        return x._value
    return int(x)


def sym_min(a: Any, b: Any) -> Any:
    if not isinstance(a, SymbolicScalar) and not isinstance(b, SymbolicScalar):
        return min(a, b)
    return as_sym(a).min(b)


def sym_max(a: Any, b: Any) -> Any:
    if not isinstance(a, SymbolicScalar) and not isinstance(b, SymbolicScalar):
        return max(a, b)
    return as_sym(a).max(b)


def linear_form(x: Any) -> tuple[dict[str, tuple[Any, int]], int] | None:
    """Linear form {atom_repr: (atom, coeff)}, const of an int/SymbolicScalar, or None if not linear."""
    if isinstance(x, int):
        return {}, int(x)
    if not isinstance(x, SymbolicScalar):
        return None
    if x._value is not None:
        return {}, x._value
    if x._kind == "bin" and x._op in ("+", "-"):
        a, b = linear_form(x._a), linear_form(x._b)
        if a is None or b is None:
            return None
        sign = 1 if x._op == "+" else -1
        terms = dict(a[0])
        for k, (atom, c) in b[0].items():
            prev = terms.get(k, (atom, 0))[1]
            terms[k] = (atom, prev + sign * c)
        return terms, a[1] + sign * b[1]
    if x._kind == "bin" and x._op == "*":
        a, b = linear_form(x._a), linear_form(x._b)
        if a is None or b is None:
            return None
        if not a[0]:
            a, b = b, a
        if b[0]:
            return {repr(x): (x, 1)}, 0
        k = b[1]
        return {n: (atom, c * k) for n, (atom, c) in a[0].items()}, a[1] * k
    return {repr(x): (x, 1)}, 0


def simplify_int(x: Any) -> Any:
    """Simplify a linear SymbolicScalar expression; returns an int when the symbols cancel."""
    lf = linear_form(x)
    if lf is None:
        return x
    terms, const = lf
    if all(c == 0 for _, c in terms.values()):
        return const
    return x
