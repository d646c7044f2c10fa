"""The device executor: runs a prepared program on the caller's argument arrays.

The executor walks a region path, and when a guard evaluates the other way it switches to the path that
took the other branch at that guard and continues right after it. Loops of four or more iterations are
first offered to the batch executor (`_batch`), which runs a leading run of independent iterations at once
and returns how many it did; the rest run here one by one. A loop that carries state from one iteration to
the next runs its leading write-free ops batched (`_carry`) and only the rest of its body per iteration. Any
exception an op raises on concrete values becomes one ``EMU_RUNTIME`` error at the op's kernel line.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

import numpy as np

from runtime.emulator._buffers import is_poison
from runtime.emulator._errors import EmulatorError
from runtime.emulator.device import _lanes
from runtime.emulator.device._batch import run_batched
from runtime.emulator.device._blas import one_blas_thread
from runtime.emulator.device._carry import PrefixPlan, analyse, counters
from runtime.emulator.device._carry import start as start_prefix
from runtime.emulator.device._env import SPARE_MIN, Env
from runtime.emulator.device._kreg import DTYPES
from runtime.emulator.device._lanes import run_lanes
from runtime.emulator.device._prepare import Retripped, XGuard, XLoop, XOp, XRegion, prepare
from runtime.emulator.device._program import KernelProgram
from runtime.emulator.device._types import ExecError, ExecOptions, ExecResult, ProgramError

__all__ = ["execute", "run_loop", "run_region"]


def run_region(region: XRegion, env: Env, start: int = 0) -> None:
    """Execute one region (one iteration of a loop body, or the kernel body), from item ``start`` of its first
    path on (`_carry`: the items before it ran batched for this iteration)."""
    if not region.paths:
        return
    try:
        _run_region(region, env, start)
    except (EmulatorError, ProgramError):  # ProgramError: a loop body the builders refuse (`XLoop.body`)
        raise
    except Exception as exc:  # an op failed on concrete values: one clear error at the kernel line
        raise env.error("EMU_RUNTIME", f"{type(exc).__name__}: {exc}") from exc


def _run_region(region: XRegion, env: Env, start: int = 0) -> None:  # noqa: C901 - the per-op loop, inline
    path = region.paths[0]
    items = path.items
    i = start
    limited = env.max_steps is not None
    noisy = env.noisy
    buf = env.buf
    on_record = env.on_record if env.record else None
    a: Any = None
    while True:
        # a for loop over the path's items (no index arithmetic per item); a guard that goes the other way
        # switches to the path that took that branch and continues right after the guard there
        for it in (items if i == 0 else islice(items, i, None)):
            if type(it) is XOp:
                env.node = it
                if limited:
                    env.step()
                it.run(env)
                if noisy:
                    env.perturb_result(it)
                if it.counted:  # `_account`, inline: this loop runs every op of a per-iteration body
                    ops = env.ops  # not hoisted: a batched loop's fallback restores the counters as new objects
                    name = it.name
                    ops[name] = ops.get(name, 0) + 1
                    if it.param_reads:
                        env.count_param_reads(it)
                    ok = it.out_key
                    if ok is not None:
                        v = buf.get(ok)
                        if v is not None:
                            if it.sized:
                                ne = v[0].size
                                env.elements += ne
                                te = it.tile_elems
                                if te:
                                    env.tiles += (ne + te - 1) // te if ne else 1
                            if on_record is not None:
                                on_record(env, it, v)
                                env.geom = None  # only ever set when recording (the kinds' ``if env.record``)
                            v = None
                if it.free:
                    for k in it.free:  # `Env.release`, but a call only for an array it may keep (`SPARE_MIN`)
                        v = buf.get(k)
                        if v is not None:
                            a = v[0]
                            if type(a) is np.ndarray and a.nbytes >= SPARE_MIN:
                                v = a = None  # release counts the references the buffer alone holds
                                env.release((k,))
                            else:
                                del buf[k]
                    v = a = None  # no reference left here to a dropped array (`_k_math.scratch` counts them)
            elif type(it) is XGuard:
                val = it.cond(env)
                if bool(val) != it.taken:
                    path = region.branch(path, it)
                    items = path.items
                    i = path.guard_pos[it.index] + 1
                    break
            else:
                run_loop(it, env)
                if it.free:
                    env.release(it.free)
        else:
            return


def run_loop(node: XLoop, env: Env) -> None:
    try:
        start, stop, step = node.bounds(env)
    except EmulatorError:
        raise
    except Exception as exc:  # bad runtime bound
        raise EmulatorError("EMU_LOOP", f"loop {node.name}: cannot evaluate bounds: {exc}",
                            file=node.file, line=node.line) from exc
    if step == 0:
        raise EmulatorError("EMU_LOOP", f"loop {node.name}: step is 0", file=node.file, line=node.line)
    key = node.lid
    env.loop_range[key] = (start, stop, step)
    env.iter_stack.append((node.name, key))
    trips = 0
    limited = env.max_steps is not None
    try:
        rng = range(start, stop, step)
        if env.max_steps is not None and env.steps + len(rng) > env.max_steps:  # refuse a runaway loop early
            raise env.error("EMU_LIMIT", f"loop {node.name} runs {len(rng)} iterations, more than the kernel's "
                            f"budget of {env.max_steps} ops and loop iterations")
        if not rng:
            return  # its body is never prepared (`XLoop.body`)
        body = node.body
        if len(rng) >= 4 and not env.record:
            plan = node.plan
            if plan is None:
                plan = node.plan = analyse(node)
            if type(plan) is PrefixPlan:
                pre = start_prefix(node, plan, env, rng)
                if pre is not None:
                    pos = pre.plan.n
                    fold = pre.plan.fold is not None and not limited and pre.kcount > 2
                    for i, v in enumerate(rng[:pre.kcount]):
                        env.sym[key] = v
                        trips += 1
                        if limited:
                            env.step()
                        if fold:
                            before, nwarn = counters(env), len(env.warnings)
                        pre.enter(env, i, limited)
                        run_region(body, env, pos)
                        if fold:
                            done = pre.fold_rest(env, before, nwarn, rng, key)
                            trips += done
                            if done:
                                break
                            fold = False
                    pre.leave(env)
                    rng = rng[pre.kcount:]
            elif plan:
                done = run_batched(node, env, rng)
                trips += done
                env.batched += done
                rng = rng[done:]
            elif _lanes.ENABLED:
                done = run_lanes(node, env, rng)
                trips += done
                rng = rng[done:]
        for v in rng:
            env.sym[key] = v
            trips += 1
            if limited:
                env.step()
            run_region(body, env)
    finally:
        env.iter_stack.pop()
        env.trips[node.name] = env.trips.get(node.name, 0) + trips


def _bind_args(program: KernelProgram, args: list[Any], env: Env) -> None:
    params = program.params
    if len(args) != len(params):
        raise ProgramError(f"the kernel takes {len(params)} tensor argument(s), got {len(args)}")
    for i, (p, arr) in enumerate(zip(params, args, strict=True)):
        if not isinstance(arr, np.ndarray):
            raise ProgramError(f"argument {i} ('{p.name}') is not a numpy array")
        if arr.dtype != DTYPES.get(p.dtype):
            raise ProgramError(f"argument {i} ('{p.name}') has dtype {arr.dtype}, the program says {p.dtype}")
        if arr.ndim != len(p.shape) or any(s is not None and s != a for s, a in zip(p.shape, arr.shape, strict=True)):
            raise ProgramError(f"argument {i} ('{p.name}') has shape {list(arr.shape)}, the program says "
                               f"{list(p.shape)}")
        if not arr.flags.c_contiguous:
            raise ProgramError(f"argument {i} ('{p.name}') is not C-contiguous")
    for sb in program.symbols:
        val = int(args[sb.param].shape[sb.axis])
        if sb.first_wins:
            env.sym.setdefault(sb.name, val)
        else:
            env.sym[sb.name] = val
    for p, arr in zip(params, args, strict=True):
        env.buf[p.key] = (arr, arr.shape)
    env.param_keys = frozenset(p.key for p in params)


def _final_poison_check(program: KernelProgram, args: list[np.ndarray], env: Env) -> None:
    """Poison (padding or uninitialized data) left in a written kernel argument after the whole run: the
    error of its first poisoned write-back (location, iteration), as the per-iteration check reports it."""
    for p, arr in zip(program.params, args, strict=True):
        if not (p.written or p.key in env.written):
            continue
        n = is_poison(arr)
        if n:
            first = env.poison_first.get(p.name)
            if first is not None:
                raise first
            raise EmulatorError("EMU_POISON", f"kernel argument '{p.name}' holds {n} poisoned element(s) after "
                                "the run: data from outside a valid_shape (padding) or from uninitialized "
                                "memory reached an output", file=program.file, line=program.line)


def execute(program: KernelProgram, args: list[Any], options: ExecOptions | None = None, *,
            prepared: XRegion | Retripped | None = None) -> ExecResult:
    """Run ``program`` on ``args`` (one numpy array per tensor parameter, written in place). ``prepared``: its
    executable form, or that of the program it was derived from with ``program``'s loop stops (`Retripped`).

    Kernel errors are returned in ``ExecResult.error`` (never raised); a program or argument list the device
    refuses raises `ProgramError`.
    """
    options = options or ExecOptions()
    env = Env(options)
    stops: dict[int, int] | None = None
    ready: XRegion | None = None
    if isinstance(prepared, Retripped):
        stops, ready = prepared.stops, prepared.region
    else:
        ready = prepared
    try:
        _bind_args(program, args, env)
        if ready is not None and ready.npuarch == options.npuarch:
            body = ready
            env.stops = stops  # else `program` itself is prepared: its loops hold these stops
        else:
            body = prepare(program, options.npuarch)
    except ProgramError:
        raise
    except Exception as exc:  # noqa: BLE001 - a program the builders cannot take is refused, whatever broke
        raise ProgramError(f"the device cannot prepare this program: {type(exc).__name__}: {exc}") from None
    error: ExecError | None = None
    old = np.seterr(all="ignore")  # restored below; ops that need errors check values explicitly
    try:
        with one_blas_thread(body.blas):  # a matmul's bits must not depend on the host's cores (device._blas)
            run_region(body, env)
        if options.check_poison and options.poison_check == "final":
            _final_poison_check(program, args, env)
    except EmulatorError as exc:
        error = ExecError.of(exc)
    finally:
        np.seterr(**old)
    keys = {p.key: i for i, p in enumerate(program.params)}
    written = sorted(keys[k] for k in env.written)
    masks = None
    if env.masks is not None:
        masks = {keys[k]: m for k, m in env.masks.items()}
    return ExecResult(error=error, warnings=env.warnings, counters=env.counters(), written=written,
                      write_masks=masks)
