"""The run-time state of one kernel call on the device: buffers by storage key, symbol values, counters.

Every op implementation reads and writes buffers through `Env`; errors it raises carry the kernel line of
the op being run and the loop iteration (``env.error``); warnings are collected (deduplicated) for the result.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from runtime.emulator._buffers import poison_array
from runtime.emulator._errors import EmulatorError
from runtime.emulator.device._types import ExecOptions, ExecWarning
from runtime.testmodes import NOISY_OPS
from runtime.testmodes import active as _noise_injector

__all__ = ["Env"]

SPARE_MIN = 1 << 18
"""dead arrays from this many bytes are kept for a later result of their shape and dtype (`Env.release`)"""
SPARE_ENTRIES = 4


def _popped_refcount() -> int | None:
    """``sys.getrefcount(a)`` in `Env.release` of an array only its popped ``env.buf`` entry held, or None when this
    interpreter does not tell it from a held one (then nothing is ever kept)."""
    buf = {0: (np.empty(4), None)}
    v = buf.pop(0)
    a = v[0]
    sole = sys.getrefcount(a)
    view = a[1:]  # a view holds its base: one more reference
    held = sys.getrefcount(a)
    del view
    return sole if held == sole + 1 else None


_POPPED = _popped_refcount()


class Env:
    """Run-time state of one kernel call."""

    def __init__(self, options: ExecOptions) -> None:
        self.options = options
        self.buf: dict[int, tuple[np.ndarray, Any]] = {}
        """storage key -> (array, valid shape); the valid shape is None for a batched buffer (`_batch`)"""
        self.sym: dict[Any, Any] = {}
        """symbol name -> value, loop id -> current index"""
        self.per_call: dict[int, Any] = {}
        """values of symbol-only expressions (`_expr._per_call`): symbols do not change during a call"""
        self.loop_range: dict[int, tuple[int, int, int]] = {}
        self.stops: dict[int, int] | None = None
        """loop id -> stop, overriding the prepared loop's (`_prepare.Retripped`: a program derived for other trip
        counts runs on the prepared form of the one it was derived from)"""
        self.iter_stack: list[tuple[str, int]] = []
        self.node: Any = None
        """the op being run (`_prepare.XOp`): errors carry its kernel line"""
        self.geom: dict | None = None
        self.record = options.record
        self.on_record = options.on_record
        self.ops: dict[str, int] = {}
        self.tiles = 0
        self.elements = 0
        self.bytes_in = 0
        self.bytes_out = 0
        self.flops = 0
        self.trips: dict[str, int] = {}
        self.batched = 0
        self.steps = 0
        lim = options.limits
        self.max_steps = lim.max_steps
        self.max_alloc = lim.max_alloc_bytes
        self.last_rec: dict[int, int] = {}
        self.parallel_masks: dict[object, np.ndarray] = {}
        self.poison_first: dict[str, Any] = {}
        """kernel argument name -> EMU_POISON error of its first poisoned write-back (final-mode poison check)"""
        self.param_keys: frozenset[int] = frozenset()
        """storage keys of the kernel arguments (whole-argument reads count as bytes in)"""
        self.written: set[int] = set()
        """storage keys of kernel arguments written at run time"""
        self.masks: dict[int, np.ndarray] | None = {} if options.track_writes else None
        self.warnings: list[ExecWarning] = []
        self._warned: set[tuple] = set()
        self.noisy = _noise_injector() is not None
        """a test-mode noise injector is active (`perturb_result`); looked up once per call"""
        self.place: Any = None
        """batched runs only (`_batch`): ``(shape, dtype) -> window | None``, the destination window of the
        assemble that consumes the running op's result, which the op may compute into (no copy)"""
        self.box: tuple | None = None
        """batched runs over partial tiles only (`_batch._run_op`): the index of the valid part of the running
        unary op's operand, when only the assemble right after it reads its result - and that only there"""
        self.converted: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        """8-bit float matmul operands converted in this call (`_k_math._operand_f32`): (address, shape, strides,
        dtype, transposed) -> (their bytes then, the float32 form)"""
        self.converted_bytes = 0
        self.spare: list[np.ndarray] = []
        """dead arrays a later result of the same shape and dtype is computed into (`release`, `take_spare`)"""
        self.spare_bytes = 0
        self._arg_bytes: int | None = None
        """`arg_bytes`, once asked"""

    # writes into kernel arguments ---------------------------------------------------------------------
    def wrote(self, key: int, region: Any = None, arr: np.ndarray | None = None) -> None:
        """Note a write into storage ``key`` (``region``: the index written; None = all of it)."""
        if key not in self.param_keys:
            return
        self.written.add(key)
        if self.masks is not None and arr is not None:
            m = self.masks.get(key)
            if m is None:
                m = self.masks[key] = np.zeros(arr.shape, dtype=bool)
            if region is None:
                m[...] = True
            else:
                m[region] = True

    def count_param_reads(self, node: Any, times: int = 1) -> None:
        """Bytes in for an op that reads a kernel argument whole (``pypto.add(x, y)`` on parameters, no view).

        Which arguments an op reads whole is decided once, in `_prepare._param_reads` (a view counts its own
        window; meta ops move no data; the target of an in-place write into an argument is written, not read).
        ``times`` is the batched iteration count."""
        buf = self.buf
        for k in node.param_reads:
            v = buf.get(k)
            if v is not None:
                self.bytes_in += v[0].nbytes * times

    # buffer access -------------------------------------------------------------------------------------
    def get(self, key: int) -> tuple[np.ndarray, tuple[int, ...]]:
        """The buffer under ``key``, or the EMU_UNINIT error. The kinds read ``env.buf.get(k) or env.get(k)`` (an
        entry is a non-empty tuple): one Python call less per operand, this one only for the error."""
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

    def release(self, keys: Any) -> None:
        """Drop the buffers of ``keys`` (nothing reads them after the running op, `_prepare`'s liveness), keeping
        large dead arrays for `take_spare`.

        Why: a fresh multi-MB result costs its page faults - on this VM ~0.85 ms per MB, more than the arithmetic -
        and a kernel's temporaries often die before a result of their very shape is made (rms_norm: ``x * x`` dies
        in the sum, and ``x / rms`` is a fresh 16 MB array; 14 of its 61 ms). `_k_math.scratch` already writes a
        result over an operand that dies at that op; this covers arrays that died earlier. Kept: an array that owns
        its memory, is writeable, C-contiguous, not a kernel argument, and that nothing else holds (no view, no
        other storage key, no record - its reference count tells, as for `scratch`); at most `SPARE_ENTRIES`, no
        more bytes than the call's arguments, oldest out first; all dropped with the call."""
        buf = self.buf
        for k in keys:
            v = buf.pop(k, None)
            if v is None or _POPPED is None:
                continue
            a = v[0]
            if (type(a) is np.ndarray and a.nbytes >= SPARE_MIN and sys.getrefcount(a) == _POPPED
                    and a.flags.owndata and a.flags.writeable and a.flags.c_contiguous and k not in self.param_keys):
                self._keep(a)

    def arg_bytes(self) -> int:
        """The bytes of the call's arguments: what the arrays a call keeps for later (the spare arrays, the matmul
        operand memo of `_k_math._operand_f32`) may hold each, so its peak stays bound to its arguments' size."""
        if self._arg_bytes is None:
            self._arg_bytes = sum(self.buf[k][0].nbytes for k in self.param_keys if k in self.buf)
        return self._arg_bytes

    def _keep(self, a: np.ndarray) -> None:
        spare = self.spare
        spare.append(a)
        self.spare_bytes += a.nbytes
        cap = self.arg_bytes()
        while spare and (len(spare) > SPARE_ENTRIES or self.spare_bytes > cap):
            self.spare_bytes -= spare.pop(0).nbytes

    def take_spare(self, shape: tuple, dt: np.dtype) -> np.ndarray | None:
        """A kept dead array (`release`) of exactly this shape and dtype, now the caller's; None if there is none."""
        for i, a in enumerate(self.spare):
            if a.shape == shape and a.dtype == dt:
                del self.spare[i]
                self.spare_bytes -= a.nbytes
                return a
        return None

    def check_alloc(self, shape: Any, itemsize: int) -> None:
        """Refuse an allocation above ``Limits.max_alloc_bytes`` (a hostile program must not exhaust memory)."""
        if self.max_alloc is not None:
            n = math.prod(int(d) for d in shape) * itemsize
            if n > self.max_alloc:
                raise self.error("EMU_LIMIT", f"the kernel allocates {n} bytes at once (limit {self.max_alloc})")

    def poison(self, shape: Any, dt: np.dtype) -> np.ndarray:
        """Uninitialized memory (`_buffers.poison_array`) within the allocation limit."""
        if self.max_alloc is not None:
            self.check_alloc(shape, np.dtype(dt).itemsize)
        return poison_array(shape, dt)

    def step(self, n: int = 1) -> None:
        """Count executed ops / loop iterations against ``Limits.max_steps``."""
        self.steps += n
        if self.max_steps is not None and self.steps > self.max_steps:
            raise self.error("EMU_LIMIT", f"the kernel ran more than {self.max_steps} ops and loop iterations")

    def perturb_result(self, node: Any) -> None:
        """Test mode only (``runtime.testmodes``): move a freshly computed float result by a few ulps.

        Only ops in ``NOISY_OPS`` (results that differ between CPUs); a result sharing memory with an operand
        is a view and is left alone. Without an installed injector - always, outside the replay-portability
        tests - this returns at once.
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

    # diagnostics ---------------------------------------------------------------------------------------
    def error(self, code: str, message: str, kind: str = "RuntimeError") -> EmulatorError:
        n = self.node
        it = ", ".join(f"{k}={self.sym.get(lid, '?')}" for k, lid in self.iter_stack)
        if it:
            message = f"{message} (iteration {it})"
        return EmulatorError(code, message, file=n.file if n else None, line=n.line if n else None,
                             op=n.name if n else None, kind=kind)

    def warn(self, code: str, message: str, *, file: str | None = None, line: int | None = None,
             op: str | None = None) -> None:
        key = (code, file, line, message)
        if key in self._warned:
            return
        self._warned.add(key)
        self.warnings.append(ExecWarning(code=code, message=message, file=file, line=line, op=op))

    def iteration(self) -> dict[str, int]:
        return {k: self.sym.get(lid, -1) for k, lid in self.iter_stack}

    def counters(self) -> dict[str, Any]:
        return {"ops": dict(self.ops), "tiles": self.tiles, "elements": self.elements, "bytes_in": self.bytes_in,
                "bytes_out": self.bytes_out, "matmul_flops": self.flops, "loop_trips": dict(self.trips),
                "batched_iterations": self.batched}
