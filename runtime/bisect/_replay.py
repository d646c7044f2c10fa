"""Replay the candidate's captured kernel calls in this (trusted) process, comparing every op value as it is made.

The sandbox sends back each kernel call as data (``_run.CapturedCall``: the encoded program and the arguments
as they were at the call). Here every program is decoded (``runtime.emulator.device.decode`` validates it) and
executed by the device executor with recording on; its record hook hands each op value to the
``Analyzer``, which compares it with every golden tensor it could be a slice of and keeps a summary. The value
is then dropped unless it is small enough to keep within ``keep_bytes`` (for the report's statistics; others
are recomputed by a second replay, :func:`value_stats`). So nothing is dropped unseen, and memory stays at the
kernel's own working set plus the golden plus a bounded margin, whatever the number of ops and iterations.

The device executor is deterministic: a second replay of the same calls produces the same ops with the same
sequence numbers and values.
"""

from __future__ import annotations

import logging
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runtime.bisect._analyzer import Analyzer
from runtime.bisect._records import Rec, _dtype  # the one dtype-name normaliser of bisect records
from runtime.bisect._run import CapturedCall
from runtime.targets import DEFAULT_NPUARCH

__all__ = ["Replay", "link_other_outputs", "replay", "replay_hooked", "value_stats"]

log = logging.getLogger(__name__)

_KEEP_ONE = 1 << 20
"""A value up to this many bytes may be kept for the report (larger ones are recomputed when needed)."""


@dataclass
class Replay:
    """What the trusted replay of one case produced."""

    records: list[Rec] = field(default_factory=list)
    error: dict[str, Any] | None = None
    """the first kernel error (``code``, ``message``, ``file``, ``line``, ``op``), or None"""
    final: dict[str, np.ndarray] = field(default_factory=dict)
    """kernel tensor name -> its contents after the last call that took it (checkpoints are read here)"""
    kernel_args: list[dict] = field(default_factory=list)
    kept_bytes: int = 0
    largest_value: int = 0
    """bytes of the largest op value produced"""
    peak_rss: int = 0
    """peak resident memory of this process after the replay (bytes; ru_maxrss)"""
    duration_s: float = 0.0
    calls: int = 0
    problem: str = ""
    """why a call could not be replayed (program refused by the validator ...), or ''"""


_SEVERAL_OUTPUTS = frozenset({"sort"})
"""device kinds that produce several values in one op (``_, picks = pypto.topk(x, k)``: the values and the indices)"""


def link_other_outputs(node: Any, inputs: list[dict], seq: int, side: dict[int, int]) -> None:
    """Mark the reads of the other outputs of a multi-output op (the indices of a ``topk``) with the op's record
    (``"of": seq`` on the tensor input), and remember the outputs ``node`` makes (``side``: storage key -> seq).

    Why: the recorder links a later read only to an op's first output; ``gather(scores, 1, picks)`` reads ``picks``
    as a tensor nothing wrote, so a ``topk`` taking the wrong end was out of reach and the ``gather`` was named. The
    mark is no data-flow link (the record's value is the top values, not the indices: a link would make the indices
    as unverified as the values, and a right ``topk`` whose indices an output shows right would be suspected); it
    only lets the repair replay find the op to try another way (``_repair._selection_flip``)."""
    for k, ref in zip(node.op.ins, inputs, strict=False):
        if ref.get("kind") == "tensor" and k in side:
            ref["of"] = side[k]
    if node.op.kind in _SEVERAL_OUTPUTS:
        for k in node.op.outs:
            if k != node.op.out_key:
                side[k] = seq


def _limits(calls: list[CapturedCall]) -> Any:
    from runtime.emulator.device import Limits

    largest = max((int(np.prod(a.shape)) * 8 for c in calls for a in c.args), default=0)
    return Limits(max_steps=50_000_000, max_alloc_bytes=max(1024**3, 4 * largest))


def _run_calls(calls: list[CapturedCall], inputs: list[np.ndarray],
               hook: Callable[[Any, Any, tuple], None] | None,
               on_call: Callable[[CapturedCall, list[tuple[str, np.ndarray]]], None] | None = None,
               ) -> tuple[dict[str, Any] | None, dict[str, np.ndarray], str, list[dict]]:
    from runtime.emulator.device import ExecOptions, ProgramError, decode, execute

    limits = _limits(calls)
    final: dict[str, np.ndarray] = {}
    kargs: list[dict] = []
    for call in calls:
        try:
            program = decode(call.program, limits=limits)
        except ProgramError as exc:
            return None, final, f"kernel {call.kernel}: the captured program was refused: {exc}", kargs
        if len(call.args) != len(program.params):
            return None, final, f"kernel {call.kernel}: {len(call.args)} arguments for {len(program.params)} " \
                "parameters", kargs
        args = [a.build(inputs, writable=p.written) for a, p in zip(call.args, program.params, strict=True)]
        named = [(p.name, a) for p, a in zip(program.params, args, strict=True)]
        kargs.append({"kernel": call.kernel, "args": [{"name": n, "shape": list(a.shape), "dtype": str(a.dtype)}
                                                      for n, a in named]})
        if on_call is not None:
            on_call(call, named)
        o = call.options
        opts = ExecOptions(out_of_bounds=o.get("out_of_bounds", "raise"), check_poison=bool(o.get("check_poison", True)),
                           poison_check=o.get("poison_check", "final"), record=hook is not None, limits=limits,
                           on_record=hook, npuarch=o.get("npuarch", DEFAULT_NPUARCH))
        try:
            res = execute(program, args, opts)
        except ProgramError as exc:
            return None, final, f"kernel {call.kernel}: {exc}", kargs
        for n, a in named:
            final[n] = a
        if res.error is not None:
            e = res.error
            err = {"type": "EmulatorError", "code": e.code, "message": e.message, "line": e.line, "op": e.op}
            if e.file:
                err["file"] = Path(e.file).name
            return {k: v for k, v in err.items() if v is not None}, final, "", kargs
    return None, final, "", kargs


def replay(calls: list[CapturedCall], inputs: list[np.ndarray], an: Analyzer, *,
           keep_bytes: int = 64 * 1024**2) -> Replay:
    """Execute ``calls`` in order with recording on, feeding every op value to ``an`` as it is made.

    Args:
        calls: the captured kernel calls of one case.
        inputs: the case's inputs in wrapper order (arguments captured as references point into them).
        an: the analyzer (golden loaded); its ``finish`` is left to the caller.
        keep_bytes: budget of small op values kept on the records (``Rec.value``) for the report.
    """
    from runtime.emulator._executor import record_fields

    out = Replay(calls=len(calls))
    t0 = time.perf_counter()
    seq = [0]
    side: dict[int, int] = {}

    def hook(env: Any, node: Any, v: tuple) -> None:
        f = record_fields(env, node, v, seq[0])
        link_other_outputs(node, f["inputs"], seq[0], side)
        seq[0] += 1
        value = np.asarray(f.pop("value"))
        attrs = {k: v for k, v in f["attrs"].items() if isinstance(v, str | int | float | bool | None)}
        fn = node.op.params.get("fn") if isinstance(node.op.params, dict) else None
        if isinstance(fn, str):
            attrs["_fn"] = fn  # (binary / unary / reduce function: ops of one name and fn compute alike)
        r = Rec(seq=f["seq"], node=f["node"], op=f["op"], file=f["file"], line=f["line"],
                iteration=f["iteration"], name=f["name"] or None, dtype=_dtype(f["dtype"]), offsets=f["offsets"],
                shape=f["shape"], valid_shape=f["valid_shape"], source=f["source"], target=f["target"],
                inputs=f["inputs"], attrs=attrs)
        an.add(r, value)
        out.largest_value = max(out.largest_value, int(value.nbytes))
        if value.nbytes <= _KEEP_ONE and out.kept_bytes + value.nbytes <= keep_bytes:
            r.value = value.copy()
            out.kept_bytes += int(value.nbytes)
        out.records.append(r)

    def on_call(call: CapturedCall, named: list[tuple[str, np.ndarray]]) -> None:
        an.begin_call(named)

    out.error, out.final, out.problem, out.kernel_args = _run_calls(calls, inputs, hook, on_call)
    out.duration_s = time.perf_counter() - t0
    out.peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def replay_hooked(calls: list[CapturedCall], inputs: list[np.ndarray],
                  hook: Callable[[Any, Any, tuple, int], None]) -> None:
    """Replay ``calls`` calling ``hook(env, node, value, seq)`` after every op (``seq`` numbers ops as
    :func:`replay` does). The hook may replace the op's value in ``env.buf`` (repair tests, ``_repair``) or raise
    to stop the run early (the exception ends the kernel call; it is not reported)."""
    from runtime.emulator._executor import record_fields

    seq = [0]

    def h(env: Any, node: Any, v: tuple) -> None:
        record_fields(env, node, v, seq[0])  # keeps the executor's record bookkeeping as in the first replay
        n = seq[0]
        seq[0] += 1
        hook(env, node, v, n)

    try:
        _run_calls(calls, inputs, h)
    except Exception:  # noqa: BLE001 - a hook's stop signal escaping the executor ends the replay
        log.debug("hooked replay stopped", exc_info=True)


def value_stats(calls: list[CapturedCall], inputs: list[np.ndarray], wanted: dict[int, Callable[[np.ndarray], Any]],
                ) -> dict[int, Any]:
    """Replay ``calls`` again and apply ``wanted[seq]`` to the value of op ``seq`` as it is made (the values
    the first replay did not keep: statistics for the report). Returns seq -> result."""
    from runtime.emulator._executor import record_fields

    got: dict[int, Any] = {}
    seq = [0]

    def hook(env: Any, node: Any, v: tuple) -> None:
        f = record_fields(env, node, v, seq[0])
        fn = wanted.get(seq[0])
        seq[0] += 1
        if fn is not None:
            value = np.asarray(f["value"])
            vs = f["valid_shape"]
            if vs is not None and len(vs) == value.ndim:
                value = value[tuple(slice(0, max(0, int(n))) for n in vs)]
            got[f["seq"]] = fn(value)

    if wanted:
        _run_calls(calls, inputs, hook)
    return got
