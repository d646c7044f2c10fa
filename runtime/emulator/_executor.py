"""The kernel executor seam: where a traced kernel's program is executed, and the in-process default.

`JitFunction.__call__` traces the kernel, lowers it to a `device.KernelProgram` and hands it to the current
*kernel executor* - a callable ``(program, args, options) -> ExecResult``. By default that is
`run_in_process` (the device executor in this process). The verifier's sandbox installs one that sends the
encoded program to a separate device process (`use` / `set_default`), so kernel execution never happens
where the candidate's code runs. Bisection records every op output in process: the record hook (`_record`)
turns each executed op into an `OpRecord` of the session.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from runtime.emulator._session import OpRecord, Session
from runtime.emulator.device import ExecOptions, ExecResult, KernelProgram, decode, encode, execute
from runtime.emulator.device._prepare import Retripped, XRegion, prepare

__all__ = ["KernelExecutor", "RoundTripMismatch", "current", "exec_options", "prepared_for", "record_fields",
           "run_checked", "run_in_process", "set_default", "use"]

KernelExecutor = Callable[[KernelProgram, list[np.ndarray], ExecOptions], ExecResult]

ROUNDTRIP_ENV = "PTO_FORGE_EMU_ROUNDTRIP"
"""``1``: the in-process executor runs ``decode(encode(program))``; ``check``: it runs `run_checked` (every
kernel call directly and through the codec, compared). For tests, benchmarks and debugging."""


class RoundTripMismatch(AssertionError):
    """A kernel call gave different results directly and through the program codec (a codec bug)."""

_WRITES = frozenset({"assemble", "move", "setitem"})


def run_in_process(program: KernelProgram, args: list[np.ndarray], options: ExecOptions, *,
                   prepared: XRegion | Retripped | None = None) -> ExecResult:
    """Execute ``program`` here (the default executor). ``prepared``: its executable form, when the caller keeps
    one (the trace cache prepares a program it hands out again once)."""
    mode = os.environ.get(ROUNDTRIP_ENV)
    if mode == "check":
        return run_checked(program, args, options)
    if mode == "1":
        return execute(decode(encode(program)), args, options)
    return execute(program, args, options, prepared=prepared)


run_in_process.takes_prepared = True  # type: ignore[attr-defined]
"""an executor with this attribute takes ``prepared=`` (the frontend passes the trace cache's prepared body)"""


def prepared_for(program: KernelProgram, npuarch: str = "DAV_2201") -> XRegion | None:
    """The executable form of ``program`` on ``npuarch``, or None when it cannot be prepared (`execute` then reports
    why)."""
    try:
        return prepare(program, npuarch)
    except Exception:  # noqa: BLE001 - execute prepares it again and raises its own ProgramError
        return None


def retripped(prepared: XRegion, stops: dict[int, int]) -> Retripped:
    """``prepared`` run with other stops for some loops (`_trace_cache.retrip`'s derived programs)."""
    return Retripped(prepared, stops)


def run_checked(program: KernelProgram, args: list[np.ndarray], options: ExecOptions) -> ExecResult:
    """Execute ``program`` twice - directly on copies of ``args`` and as ``decode(encode(program))`` on ``args``
    - and raise `RoundTripMismatch` unless bytes, error, warnings, counters and written arguments agree."""
    blob = encode(program)
    decoded = decode(blob)
    if encode(decoded) != blob:
        raise RoundTripMismatch(f"kernel {program.kernel}: encode(decode(bytes)) differs from the bytes")
    copies = [a.copy() for a in args]
    direct = execute(program, copies, options)
    coded = execute(decoded, args, options)
    diffs = [f"argument {i}" for i, (a, b) in enumerate(zip(args, copies, strict=True)) if a.tobytes() != b.tobytes()]
    diffs += [f for f in ("error", "warnings", "counters", "written") if getattr(coded, f) != getattr(direct, f)]
    if diffs:
        raise RoundTripMismatch(f"kernel {program.kernel}: {', '.join(diffs)} differ through the program codec")
    return coded


_DEFAULT: list[KernelExecutor] = [run_in_process]
_CURRENT: contextvars.ContextVar[KernelExecutor | None] = contextvars.ContextVar("pypto_kernel_executor",
                                                                                  default=None)


def current() -> KernelExecutor:
    """The kernel executor in effect (a `use` block's, else the process default)."""
    ex = _CURRENT.get()
    return ex if ex is not None else _DEFAULT[0]


def set_default(executor: KernelExecutor | None) -> None:
    """Make ``executor`` the process-wide default (None restores `run_in_process`)."""
    _DEFAULT[0] = executor if executor is not None else run_in_process


@contextlib.contextmanager
def use(executor: KernelExecutor) -> Iterator[None]:
    """Run the kernels called inside the block with ``executor``."""
    token = _CURRENT.set(executor)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def exec_options(session: Session) -> ExecOptions:
    """Device options for a kernel call in ``session`` (recording wires the op-record hook)."""
    o = session.options
    hook = None
    if o.record:
        def hook(env: Any, node: Any, v: tuple) -> None:
            _record(session, env, node, v)
    return ExecOptions(out_of_bounds=o.out_of_bounds, check_poison=o.check_poison, poison_check=o.poison_check,
                       record=o.record, on_record=hook, npuarch=o.npuarch)


def record_fields(env: Any, node: Any, v: tuple, seq: int) -> dict[str, Any]:
    """The fields of the `OpRecord` of one executed op (``value`` is the device's array, not a copy) and the
    data-flow link bookkeeping: later ops reading this op's output link to ``seq``. Used by `_record` and by
    bisection's trusted replay (``runtime.bisect._replay``), which compares the value at once instead of keeping it.
    """
    op = node.op
    g = env.geom or {}
    val = g.get("value", v[0])
    valid = g.get("valid", v[1])
    inputs = []
    for k in op.ins:
        if k in env.last_rec:
            inputs.append({"kind": "record", "seq": env.last_rec[k]})
        else:
            inputs.append({"kind": "tensor", "name": (op.names or {}).get(k)})
    if op.out_key is not None:
        env.last_rec[op.out_key] = seq
    return dict(seq=seq, node=op.nid, op=op.name, file=op.file, line=op.line, iteration=env.iteration(),
                value=val, dtype=str(val.dtype), offsets=g.get("offsets"), shape=list(val.shape),
                valid_shape=[int(x) for x in valid], target=op.target,
                name=op.out_name if op.name not in _WRITES else None,
                source=op.source, inputs=inputs, attrs=dict(op.attrs or {}))


def _record(s: Session, env: Any, node: Any, v: tuple) -> None:
    s.add_record(OpRecord(**record_fields(env, node, v, len(s.records))))


ROLLED_PREFIX = "<range "
"""the name of a device loop the tracer made of a Python range loop (`_trace_interp._Interp._run_rolled`)"""


def apply_result(session: Session, res: ExecResult) -> None:
    """Add a run's warnings and counters to the session (the caller raises ``res.error``)."""
    for w in res.warnings:
        session.warn(w.code, w.message, file=w.file, line=w.line, op=w.op)
    c = session.counters
    k = res.counters
    for name, n in k["ops"].items():
        c.ops[name] = c.ops.get(name, 0) + n
    for name, n in k["loop_trips"].items():
        if name.startswith(ROLLED_PREFIX):
            continue  # a Python range traced once (`_roll`): not a loop of the kernel as its author wrote it
        c.loop_trips[name] = c.loop_trips.get(name, 0) + n
    c.tiles += k["tiles"]
    c.elements += k["elements"]
    c.bytes_in += k["bytes_in"]
    c.bytes_out += k["bytes_out"]
    c.matmul_flops += k["matmul_flops"]
    c.batched_iterations += k["batched_iterations"]
    c.runs += 1
