"""The emulator's device side: a kernel program as data, and the executor that runs it.

Why a separate package: in verification the candidate's Python (wrapper and kernel tracing) runs in a
sandboxed child, and the kernel must be *executed* somewhere that code cannot reach. The tracer lowers every
traced kernel call to a `KernelProgram` (plain data, `_program`); this package runs it (`execute`) with
implementations that live only here (`_k_core`, `_k_math`, `_k_index`, chosen by op kind from the closed
registry `_kreg.KINDS`). It imports numpy, ml_dtypes and the emulator's leaf modules only - never the
tracer, the frontend or anything that runs candidate code (tests/emulator/test_device_imports.py).
"""

from runtime.emulator.device._codec import decode, encode
from runtime.emulator.device._exec import execute
from runtime.emulator.device._kreg import DTYPES, KINDS
from runtime.emulator.device._prepare import prepare
from runtime.emulator.device._program import (
    BIN_OPS,
    Expr,
    Guard,
    KernelProgram,
    Loop,
    Op,
    Param,
    Path,
    Region,
    SymBind,
)
from runtime.emulator.device._types import (
    ExecError,
    ExecOptions,
    ExecResult,
    ExecWarning,
    Limits,
    ProgramError,
)
from runtime.emulator.device._validate import keys_read, program_reads, validate

__all__ = [
    "BIN_OPS",
    "DTYPES",
    "KINDS",
    "ExecError",
    "ExecOptions",
    "ExecResult",
    "ExecWarning",
    "Expr",
    "Guard",
    "KernelProgram",
    "Limits",
    "Loop",
    "Op",
    "Param",
    "Path",
    "ProgramError",
    "Region",
    "SymBind",
    "decode",
    "encode",
    "execute",
    "keys_read",
    "prepare",
    "program_reads",
    "validate",
]
