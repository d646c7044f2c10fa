"""A reduction of the wrong kind among the suspects of a departure left not localized (session 48).

``amax(v3, dim=0)`` where ``sum(v3, dim=0)`` was meant (bn_training_reduce's per-channel sum): the reduction's operand
is a re-layout of the input that no golden names (``reshape(transpose(reshape(x)))``), so the repair test stops at "the
bug is on line 105 or on one of [95, 99, 101]". Like the matmul variant and the swapped operands, the other kinds are
computed from the op's own operand as the replay holds it: a reduction of the right kind over a wrong operand repairs
nothing computed another way, so only the op whose other kind alone repairs the departure is named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.bisect._analyzer import Analyzer
from runtime.bisect._records import Rec
from runtime.bisect._repair import _replay_judged, _Stop

__all__ = ["suspect_reduction_kind"]

_KINDS: dict[str, Callable[..., np.ndarray]] = {"sum": np.sum, "amax": np.max, "amin": np.min}
"""the reductions a model confuses (``amax`` for ``sum``, ``amin`` for ``amax``), computed as numpy does them"""

_MAX_REPLAYS = 4


def suspect_reduction_kind(an: Analyzer, observed: Rec, suspects: list[Rec],
                           run: Callable[[Callable[[Any, Any, tuple, int], None]], None],
                           evidence: list[str]) -> Rec | None:
    """A ``sum`` / ``amax`` / ``amin`` among ``suspects`` that, computed as another of them over the same axis (every
    execution of its line, nothing else changed), alone makes ``observed`` match the golden; None otherwise. At
    most :data:`_MAX_REPLAYS` replays."""
    spent = 0
    for r in suspects:
        if r.op not in _KINDS or r.seq < 0:
            continue
        execs = {x.seq for x in an.recs if x.op == r.op and x.file == r.file and x.line == r.line
                 and x.seq <= observed.seq}
        for other in sorted(set(_KINDS) - {r.op}):
            if spent >= _MAX_REPLAYS:
                return None
            made: list[bool] = []

            def alter(env: Any, node: Any, v: tuple, seq: int, execs: set[int] = execs, made: list[bool] = made,
                      fn: Callable[..., np.ndarray] = _KINDS[other]) -> bool | None:
                if seq in execs:
                    prm = node.op.params
                    key = node.op.out_key
                    cur = env.buf.get(key) if key is not None else None
                    if node.op.kind != "reduce" or cur is None:
                        raise _Stop
                    try:
                        a, va = env.get(prm["a"])
                    except Exception:  # noqa: BLE001 - the operand is no longer held
                        raise _Stop from None
                    a = np.asarray(a)[tuple(slice(0, int(n)) for n in va)].astype(np.float64)
                    got = fn(a, axis=int(prm["ax"]), keepdims=bool(prm.get("keepdim")))
                    arr, valid = cur
                    box = tuple(slice(0, int(n)) for n in (valid if valid is not None else np.shape(arr)))
                    if np.size(got) != int(np.prod([s.stop for s in box])):
                        raise _Stop
                    new = np.array(arr, copy=True)
                    new[box] = np.reshape(got, tuple(s.stop for s in box)).astype(new.dtype)
                    env.buf[key] = (new, valid)
                    made.append(True)
                return None

            judged = _replay_judged(an, observed, run, alter)
            if not made:
                break
            spent += 1
            if judged:
                an.status[r.seq] = "mismatch"
                evidence.append(f"in a replay where only {r.where()} (every execution of its line) is computed as "
                                f"{other!r} over the same axis, {observed.where()} matches the golden: the line "
                                f"reduces with the wrong kind ({r.op} for {other})")
                return r
    return None
