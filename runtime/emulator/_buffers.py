"""Run-time buffers: the `Env` of one kernel call, and the poison that marks memory nobody wrote.

A leaf module for the data side of execution: the executor, the batch executor and the ops' run closures
all read and write buffers through `Env`, and all allocate uninitialised memory as poison, so neither may
depend on the modules that use them.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from runtime.emulator._errors import EmulatorError
from runtime.emulator._session import Session
from runtime.emulator._symbolic import evaluate
from runtime.testmodes import NOISY_OPS
from runtime.testmodes import active as _noise_injector

__all__ = ["POISON_BITS", "Env", "RunningNode", "eval_shape", "is_float_np", "is_poison", "poison_array"]

POISON_BITS = 0x7FE5A000  # NaN payload marking padding / uninitialized memory (survives bf16/fp16 casts)
_POISON_F32 = np.array([POISON_BITS], dtype=np.uint32).view(np.float32)[0]


def is_float_np(dt: np.dtype) -> bool:
    return dt.kind == "f" or dt.name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")


def poison_array(shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """Uninitialized memory: NaN with the poison payload for floats, the minimum value for integers."""
    if is_float_np(dt):
        return np.full(shape, _POISON_F32, dtype=np.float32).astype(dt)
    if dt == np.bool_:
        return np.zeros(shape, dtype=dt)
    return np.full(shape, np.iinfo(dt).min, dtype=dt)


def is_poison(arr: np.ndarray) -> int:
    """Number of elements carrying the poison payload."""
    if not is_float_np(arr.dtype) or arr.size == 0:
        return 0
    with np.errstate(invalid="ignore"):
        if not np.isnan(arr.max()):
            return 0
    nan = np.isnan(arr)
    if not nan.any():
        return 0
    bits = arr[nan].astype(np.float32).view(np.uint32)
    return int(np.count_nonzero((bits & 0x7FFF0000) == (POISON_BITS & 0x7FFF0000)))



def eval_shape(shape: list, env: Any) -> tuple[int, ...]:
    return tuple(evaluate(d, env) for d in shape)



class RunningNode(Protocol):
    """What `Env.error` needs of the op being run (an `_ir.OpNode`), so errors carry the kernel line."""

    name: str
    file: str | None
    line: int | None


class Env:
    """Run-time state of one kernel call: buffers by storage key, symbol values, counters."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.buf: dict[int, tuple[np.ndarray, Any]] = {}
        """storage key -> (array, valid shape); the valid shape is None for a batched buffer (`_batch`)"""
        self.sym: dict[Any, int] = {}
        self.loop_range: dict[int, tuple[int, int, int]] = {}
        self.iter_stack: list[tuple[str, Any]] = []
        self.node: RunningNode | None = None
        self.geom: dict | None = None
        self.record = session.options.record
        self.ops: dict[str, int] = {}
        self.tiles = 0
        self.elements = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.flops = 0
        self.trips: dict[str, int] = {}
        self.batched = 0
        self.last_rec: dict[int, int] = {}
        self.parallel_masks: dict[object, np.ndarray] = {}
        self.poison_first: dict[str, Any] = {}
        """kernel argument name -> EMU_POISON error of its first poisoned write-back (final-mode poison check)"""
        self.param_keys: frozenset[int] = frozenset()
        """storage keys of the kernel arguments (whole-argument reads count as bytes in)"""

    def count_param_reads(self, node: Any, times: int = 1) -> None:
        """Bytes in for an op that reads a kernel argument whole (``pypto.add(x, y)`` on parameters, no view).

        A view counts its own window; meta ops (reshape, unsqueeze) move no data; the target of an in-place
        write into an argument (scatter) is written, not read. ``times`` is the batched iteration count."""
        if not self.param_keys or node.name == "view" or node.kind == "meta":
            return
        ins = node.ins[1:] if node.gm_write and node.name not in ("move", "assemble") else node.ins
        for k in ins:
            if k in self.param_keys:
                v = self.buf.get(k)
                if v is not None:
                    self.bytes_in += v[0].nbytes * times

    # buffer access -------------------------------------------------------------------------------------
    def get(self, key: int) -> tuple[np.ndarray, tuple[int, ...]]:
        try:
            return self.buf[key]
        except KeyError:
            raise self.error(
                "EMU_UNINIT",
                "read of a tensor that has no data yet at run time (local tensor read before any write "
                "in this iteration order)",
            ) from None

    def put(self, key: int, arr: np.ndarray, valid: tuple[int, ...] | None = None) -> None:
        self.buf[key] = (arr, arr.shape if valid is None else valid)

    def perturb_result(self, node: Any) -> None:
        """Test mode only (``runtime.testmodes``): move a freshly computed float result by a few ulps.

        Only ops in ``NOISY_OPS`` (results that differ between CPUs); a result sharing memory with an operand
        is a view and is left alone. Without an installed injector - always, outside the replay-portability tests - this returns at
        once.
        """
        inj = _noise_injector()
        if inj is None or node.out_key is None or node.name not in NOISY_OPS:
            return
        v = self.buf.get(node.out_key)
        if v is None:
            return
        for k in node.ins:
            src = self.buf.get(k) if k != node.out_key else None
            if src is not None and np.shares_memory(v[0], src[0]):
                return
        self.buf[node.out_key] = (inj.perturb(v[0]), v[1])

    def error(self, code: str, message: str, kind: str = "RuntimeError") -> EmulatorError:
        n = self.node
        it = ", ".join(f"{k}={self.sym.get(id(lp), '?')}" for k, lp in self.iter_stack)
        if it:
            message = f"{message} (iteration {it})"
        return EmulatorError(code, message, file=n.file if n else None, line=n.line if n else None,
                             op=n.name if n else None, kind=kind)

    def iteration(self) -> dict[str, int]:
        return {k: self.sym.get(id(lp), -1) for k, lp in self.iter_stack}

    def flush(self) -> None:
        """Add this run's counters to the session."""
        c = self.session.counters
        for k, v in self.ops.items():
            c.ops[k] = c.ops.get(k, 0) + v
        for k, v in self.trips.items():
            c.loop_trips[k] = c.loop_trips.get(k, 0) + v
        c.tiles += self.tiles
        c.elements += self.elements
        c.bytes_in += self.bytes_in
        c.bytes_out += self.bytes_out
        c.matmul_flops += self.flops
        c.batched_iterations += self.batched
        c.runs += 1
