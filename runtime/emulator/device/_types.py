"""What goes into and comes out of `execute`: options, limits, the result, and the one codec error type.

Plain dataclasses (no pydantic, no callables except the in-process record hook) so that a device process can
send an `ExecResult` back as data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from runtime.emulator._errors import EmulatorError

__all__ = ["ExecError", "ExecOptions", "ExecResult", "ExecWarning", "Limits", "ProgramError"]


class ProgramError(ValueError):
    """A program (or its arguments) that the device refuses: malformed bytes, an unknown op kind, a bad
    parameter, an inconsistent storage key, a bound exceeded. The message is one line saying why."""

    def __init__(self, reason: str) -> None:
        reason = " ".join(str(reason).split())[:500]
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what a program may make the device do (a hostile program must not hang it or exhaust memory).

    The decoder enforces the structural ones; the executor the run-time ones (an ``EMU_LIMIT`` error).
    """

    max_bytes: int = 64 * 1024**2
    """encoded program size"""
    max_ops: int = 200_000
    """op records in the program"""
    max_items: int = 400_000
    """ops + guards + loops in the program"""
    max_depth: int = 32
    """nesting of loops"""
    max_paths: int = 4096
    """control paths of one region"""
    max_expr_nodes: int = 500_000
    """distinct expression nodes"""
    max_expr_depth: int = 400
    """depth of one expression"""
    max_expr_size: int = 20_000
    """nodes of one expression counted as a tree (shared subexpressions counted each time)"""
    max_keys: int = 1_000_000
    """storage keys"""
    max_const_bytes: int = 1024**2
    """bytes of numpy constants in the program"""
    max_params: int = 256
    max_rank: int = 8
    max_list: int = 4096
    """entries of one list parameter"""
    max_string: int = 4096
    max_steps: int | None = None
    """ops + loop iterations executed (None: unbounded)"""
    max_alloc_bytes: int | None = None
    """bytes of one array the program makes the device allocate (None: unbounded)"""


@dataclass(frozen=True, slots=True)
class ExecOptions:
    """How the device runs a program. The device decides these, not the program."""

    out_of_bounds: Literal["raise", "clip"] = "raise"
    npuarch: str = "DAV_2201"
    """the device's architecture: on A2/A3 (DAV_2201) BF16 intermediates are kept in FP32 as the real compiler
    does, on the Ascend 950 (DAV_3510) every BF16 op rounds (`_promote`)"""
    check_poison: bool = True
    poison_check: Literal["final", "iteration"] = "final"
    record: bool = False
    """run op by op (no batching) and call ``on_record`` after every op (bisection, in process only)"""
    track_writes: bool = False
    """return per written argument a bool mask of the elements the kernel wrote"""
    limits: Limits = field(default_factory=Limits)
    on_record: Callable[[Any, Any, tuple], None] | None = None
    """in-process hook ``(env, xop, (value, valid))``; never set in a device process"""


@dataclass(frozen=True, slots=True)
class ExecError:
    """The kernel error that stopped a run (the fields of `EmulatorError`)."""

    code: str
    message: str
    file: str | None = None
    line: int | None = None
    op: str | None = None
    kind: str = "RuntimeError"

    @classmethod
    def of(cls, exc: EmulatorError) -> ExecError:
        return cls(code=exc.code, message=exc.message, file=exc.file, line=exc.line, op=exc.op, kind=exc.kind)

    def to_exception(self) -> EmulatorError:
        return EmulatorError(self.code, self.message, file=self.file, line=self.line, op=self.op, kind=self.kind)


@dataclass(frozen=True, slots=True)
class ExecWarning:
    """A run-time warning (e.g. EMU_VIEW_CLIP, EMU_PARALLEL_OVERLAP) with its kernel location."""

    code: str
    message: str
    file: str | None = None
    line: int | None = None
    op: str | None = None


@dataclass(slots=True)
class ExecResult:
    """Everything a run produces besides the bytes it wrote into the arguments."""

    error: ExecError | None
    warnings: list[ExecWarning]
    counters: dict[str, Any]
    """ops (by name), tiles, elements, bytes_in, bytes_out, matmul_flops, loop_trips (by loop), batched_iterations"""
    written: list[int]
    """indices of the arguments the kernel wrote"""
    write_masks: dict[int, np.ndarray] | None = None
    """per written argument, the elements written (with ``ExecOptions.track_writes``)"""

    def raise_error(self) -> None:
        if self.error is not None:
            raise self.error.to_exception()
