"""F21007 "Operation already in a group": a kernel argument read through a view and written back in one group.

Why (session 49, probed on the real pypto 0.2.0 wheel in SIM mode, one process per probe): the wheel refuses at
compile time a graph in which data read from a kernel argument through a ``view`` (``pypto.view``, ``x[a:b, :]``)
flows - through any ops, and through other arguments written (``assemble``) then viewed again - into an
``assemble`` (or slice assignment) into that same argument, within one straight stretch of a kernel body (no loop
boundary in between). Refused there, and before this module run here:

* ``y[0:16, :] = mul(y[0:16, :], 2)``; the same per row in a ``pypto.loop``; another region
  ``y[16:32, :] = view(y, [16, 64], [0, 0]) + 1``; ``pypto.assemble(exp(view(y)), [0, 0], y)``;
* a row reading the previous row of the output (``y[i] = view(y, [i - 1]) + x[i]`` in a loop);
* the cycle through a second argument: ``y[0:16] = view(x) + 1`` then ``x[16:32] = view(y) * 2`` (also per row);
* greedy argmax over vocabulary chunks keeping its running best in the output (``y[b] = ...`` then
  ``prev = view(y, [b])`` and ``y[b] = maximum(prev, ...)``).

Compiled there (and not flagged): reading one argument and writing another (no cycle), the whole
``y[:] = y * 2`` (a move of the whole argument, no view), and the cycle split by a loop boundary (one loop writes
``y`` from ``x``, the next writes ``x`` from ``y``). The gym's kernels keep separate outputs for what they update
(ApplyAdamWV2 writes ``weight_out``, not ``weight``).

Under ``--compat 0.2.0`` it is the wheel's ``F21007`` error. Under ``head`` nothing changes: HEAD's partitioner
was not observed, and the emulator's corpus holds these forms as clean HEAD kernels (spec §1.5 ``t[...] op= v``,
§3.1 a block prefix sum reading the previous iteration's output, an AdamW step in place), so a warning there would
contradict what is known of HEAD. Numbers are not affected either way.
"""

from __future__ import annotations

from typing import Any

__all__ = ["track"]

_EMPTY: frozenset[int] = frozenset()


def _group(tr: Any) -> tuple[tuple[int, ...], int, int]:
    """The straight stretch of kernel body the current op is in: its enclosing loops, how many loops had closed
    before it (a loop that starts or ends between two ops separates them) and its control path (tensor keys are
    reused from one traced branch to the next)."""
    return tuple(map(id, tr.loop_stack)), tr.closed_loops, id(tr.path_stack[-1]) if tr.path_stack else 0


def track(tr: Any, impl: str, params: dict[str, Any], ins: tuple, outs: tuple, writes: tuple, gm_write: bool) -> None:
    """Record which arguments each new value was read from in this group, and refuse an assemble that writes an
    argument its source was read from (see the module doc). Called by ``Tracer.emit`` under ``--compat 0.2.0`` only
    (``Tracer.group_cycles``)."""
    reads: dict[int, tuple[Any, frozenset[int]]] = tr.group_reads
    group = None
    deps = _EMPTY
    for k in ins:
        entry = reads.get(k)
        if entry is not None:
            group = group or _group(tr)
            if entry[0] == group:
                deps = deps | entry[1]
    if impl in ("view", "view_dtype") and params.get("param"):
        group = group or _group(tr)
        src = params["src"]
        entry = reads.get(src)
        deps = deps | {src} | (entry[1] if entry is not None and entry[0] == group else _EMPTY)
    if not deps:
        return
    group = group or _group(tr)
    for t in outs:
        reads[t.key] = (group, deps)
    if gm_write and writes:
        dst = writes[0]
        if impl == "assemble" and dst in deps:
            name = params.get("name") or "the argument"
            message = (f"Operation already in a group: '{name}' is read through a view and the result is assembled "
                       f"back into '{name}' in the same group (the wheel refuses this graph; write another output, "
                       "or update the whole argument with `x[:] = ...`)")
            raise tr.error("F21007", message, op="assemble")
        entry = reads.get(dst)
        old = entry[1] if entry is not None and entry[0] == group else _EMPTY
        reads[dst] = (group, old | deps)
