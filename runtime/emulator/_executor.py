"""The executor: runs the traced graph (`_ir`) on numpy buffers (`_buffers.Env`).

The executor walks a region path, and when a guard evaluates the other way it switches to the path that
took the other branch at that guard and continues right after it. Loops of four or more iterations are
first offered to the batch executor (`_batch`), which runs a leading run of independent iterations at once
and returns how many it did; the rest run here one by one. (Trace time, where the kernel body's Python is
interpreted, is `_trace_interp` + `_trace`; nothing there runs on data.)
"""

from __future__ import annotations

from runtime.emulator._batch import run_batched
from runtime.emulator._buffers import Env
from runtime.emulator._errors import EmulatorError
from runtime.emulator._ir import Guard, LoopNode, OpNode, Region
from runtime.emulator._session import OpRecord

__all__ = ["run_loop", "run_region"]


_WRITES = frozenset({"assemble", "move", "setitem"})


def _account(env: Env, node: OpNode) -> None:
    env.ops[node.name] = env.ops.get(node.name, 0) + 1
    env.count_param_reads(node)
    if node.out_key is None:
        return
    v = env.buf.get(node.out_key)
    if v is None:
        return
    if node.name not in _WRITES:  # writers count the elements they write themselves
        n = v[0].size
        env.elements += n
        te = node.tile_elems
        if te:
            env.tiles += (n + te - 1) // te if n else 1
    if env.record:
        _record(env, node, v)
    env.geom = None


def _record(env: Env, node: OpNode, v: tuple) -> None:
    g = env.geom or {}
    val = g.get("value", v[0])
    valid = g.get("valid", v[1])
    inputs = []
    for k in node.ins:
        if k in env.last_rec:
            inputs.append({"kind": "record", "seq": env.last_rec[k]})
        else:
            inputs.append({"kind": "tensor", "name": (node.names or {}).get(k)})
    s = env.session
    seq = len(s.records)
    s.add_record(OpRecord(
        seq=seq, node=node.nid, op=node.name, file=node.file, line=node.line, iteration=env.iteration(),
        value=val, dtype=str(val.dtype), offsets=g.get("offsets"), shape=list(val.shape),
        valid_shape=[int(x) for x in valid], target=node.target,
        name=node.out.name if node.out is not None and node.name not in _WRITES else None,
        source=node.source, inputs=inputs, attrs=dict(node.attrs or {}),
    ))
    if node.out_key is not None:
        env.last_rec[node.out_key] = seq


def run_region(region: Region, env: Env) -> None:
    """Execute one region (one iteration of a loop body, or the kernel body)."""
    if not region.paths:
        return
    try:
        _run_region(region, env)
    except EmulatorError:
        raise
    except Exception as exc:  # an op failed on concrete values: one clear error at the kernel line
        raise env.error("EMU_RUNTIME", f"{type(exc).__name__}: {exc}") from exc


def _run_region(region: Region, env: Env) -> None:
    path = region.paths[0]
    items = path.items
    n = len(items)
    i = 0
    while i < n:
        it = items[i]
        t = type(it)
        if t is OpNode:
            env.node = it
            it.run(env)
            env.perturb_result(it)
            _account(env, it)
        elif t is Guard:
            val = it.cond.evaluate(env) if hasattr(it.cond, "evaluate") else it.cond
            if bool(val) != it.taken:
                path = region.lookup[path.decisions[: it.index] + (not it.taken,)]
                items = path.items
                n = len(items)
                i = path.guard_pos[it.index]
        else:
            run_loop(it, env)
        i += 1


def run_loop(node: LoopNode, env: Env) -> None:
    try:
        start = node.start.evaluate(env) if hasattr(node.start, "evaluate") else int(node.start)
        stop = node.stop.evaluate(env) if hasattr(node.stop, "evaluate") else int(node.stop)
        step = node.step.evaluate(env) if hasattr(node.step, "evaluate") else int(node.step)
    except EmulatorError:
        raise
    except Exception as exc:  # bad runtime bound
        raise EmulatorError("EMU_LOOP", f"loop {node.name}: cannot evaluate bounds: {exc}",
                            file=node.file, line=node.line) from exc
    if step == 0:
        raise EmulatorError("EMU_LOOP", f"loop {node.name}: step is 0", file=node.file, line=node.line)
    key = id(node.loop)
    env.loop_range[key] = (start, stop, step)
    env.iter_stack.append((node.name, node.loop))
    trips = 0
    try:
        body = node.body
        assert body is not None  # set when the loop was traced
        rng = range(start, stop, step)
        if len(rng) >= 4 and not env.record:
            done = run_batched(node, env, rng)
            trips += done
            env.batched += done
            rng = rng[done:]
        for v in rng:
            env.sym[key] = v
            trips += 1
            run_region(body, env)
    finally:
        env.iter_stack.pop()
        env.trips[node.name] = env.trips.get(node.name, 0) + trips
