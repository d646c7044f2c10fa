"""Instrumentation for ``bench/emulator_real.py``, loaded by ``site`` in every Python process of a measured run.

The bench puts this folder on ``PYTHONPATH`` and sets ``FORGE_EMUREAL_OUT``; without that variable this file
does nothing. It measures, in the process running the vendor's script (and in any Python child it starts):

* every kernel call: CPU and wall time of tracing, lowering and execution, the bytes of the kernel's own
  tensors (its arguments) and the peak resident memory during the call (``VmHWM`` after resetting it through
  ``/proc/self/clear_refs``, minus the resident size at the call's start);
* every golden call: CPU and wall time of the functions (or the line ranges of a function) named in
  ``FORGE_EMUREAL_GOLDEN`` (JSON list of ``{"func": name, "lines": [first, last] | null, "caller": name |
  null}``), found with
  ``sys.settrace`` - which is switched off while a kernel runs, so the emulator is never slowed by it;

Records are JSON lines appended to ``$FORGE_EMUREAL_OUT`` (one file per run, lines tagged with the pid).
"""

import atexit
import json
import os
import sys
import time

_OUT = os.environ.get("FORGE_EMUREAL_OUT")


def _emit(rec: dict) -> None:
    rec["pid"] = os.getpid()
    with open(_OUT, "a", encoding="utf-8") as fh:  # type: ignore[arg-type]
        fh.write(json.dumps(rec) + "\n")


def _rss_kb() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def _hwm_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# ---- golden timing (sys.settrace outside kernel calls) ------------------------------------------------

_GOLDEN = json.loads(os.environ.get("FORGE_EMUREAL_GOLDEN") or "[]")
_G_FUNCS = {g["func"]: g.get("caller") for g in _GOLDEN if not g.get("lines")}
_G_LINES = {g["func"]: tuple(g["lines"]) for g in _GOLDEN if g.get("lines")}
_depth = [0]
_t0 = [0.0, 0.0]
_gold_gc = [0.0]
"""CPU time of the cyclic collector inside the current golden call (see `_gc_callback`)"""


def _g_start(name: str) -> None:
    if _depth[0] == 0:
        _t0[0], _t0[1] = time.process_time(), time.perf_counter()
        _gold_gc[0] = 0.0
    _depth[0] += 1


def _g_stop(name: str) -> None:
    _depth[0] -= 1
    if _depth[0] == 0:
        _emit({"type": "golden", "func": name, "cpu": time.process_time() - _t0[0],
               "wall": time.perf_counter() - _t0[1], "gc_cpu": _gold_gc[0]})


def _func_tracer(name: str):  # noqa: ANN202
    def local(frame, event, arg):  # noqa: ANN001, ANN202
        if event == "return":
            _g_stop(name)
        return local
    return local


def _lines_tracer(name: str, first: int, last: int):  # noqa: ANN202
    state = {"on": False}

    def local(frame, event, arg):  # noqa: ANN001, ANN202
        if event == "line":
            inside = first <= frame.f_lineno <= last
            if inside and not state["on"]:
                state["on"] = True
                _g_start(name)
            elif not inside and state["on"]:
                state["on"] = False
                _g_stop(name)
        elif event == "return" and state["on"]:
            state["on"] = False
            _g_stop(name)
        return local
    return local


def _global_tracer(frame, event, arg):  # noqa: ANN001, ANN202
    if event != "call":
        return None
    name = frame.f_code.co_name
    if name in _G_FUNCS:
        caller = _G_FUNCS[name]
        if caller is not None and (frame.f_back is None or frame.f_back.f_code.co_name != caller):
            return None
        frame.f_trace_lines = False
        _g_start(name)
        return _func_tracer(name)
    span = _G_LINES.get(name)
    if span is not None:
        return _lines_tracer(name, span[0], span[1])
    return None


# ---- kernel calls ---------------------------------------------------------------------------------------

_call: dict = {}
_in_call = [False]
_gc_start = [0.0]


def _gc_callback(phase: str, info: dict) -> None:
    """CPU time of the cyclic collector inside kernel calls (``gc_cpu`` of a kernel record) and inside golden calls
    (of a golden record). Which call a collection lands in depends on every allocation of the process (the vendor's
    script and this hook included): 0.3 ms for a young collection, 1.5-4.5 ms for the middle generation on the
    gym's small operators, 25-30 ms for a full one - so the bench shows it apart, on both sides."""
    if not _in_call[0] and _depth[0] == 0:
        return
    if phase == "start":
        _gc_start[0] = time.process_time()
    elif _in_call[0]:
        _call["gc_cpu"] = _call.get("gc_cpu", 0.0) + time.process_time() - _gc_start[0]
    else:
        _gold_gc[0] += time.process_time() - _gc_start[0]


def _install_kernel_hooks() -> None:
    from runtime.emulator import _executor, _frontend

    jit = _frontend.JitFunction
    orig_call, orig_program, orig_lower = jit.__call__, jit._program, _frontend.lower

    def timed_lower(*a, **k):  # noqa: ANN002, ANN003, ANN202
        t = time.process_time()
        try:
            return orig_lower(*a, **k)
        finally:
            _call["lower_cpu"] = _call.get("lower_cpu", 0.0) + time.process_time() - t

    def timed_program(self, s, args, kwargs, **kw):  # noqa: ANN001, ANN003, ANN202
        t, w = time.process_time(), time.perf_counter()
        try:
            program, arrays = orig_program(self, s, args, kwargs, **kw)
        finally:
            _call["program_cpu"] = _call.get("program_cpu", 0.0) + time.process_time() - t
            _call["program_wall"] = _call.get("program_wall", 0.0) + time.perf_counter() - w
        # counted after the call's clock stops (`timed_call`): walking the program is the instrument's work, not
        # the emulator's (~0.1-0.3 ms a call on attn_softmax's ~46-op programs, inside the timed call until s45)
        _call["_measure"] = (program, arrays)
        return program, arrays

    def timed_exec(program, args, options, prepared=None):  # noqa: ANN001, ANN202
        if _CAPTURE:
            return _capture(program, args, options)
        t, w = time.process_time(), time.perf_counter()
        try:
            return _executor.run_in_process(program, args, options, prepared=prepared)
        finally:
            _call["exec_cpu"] = _call.get("exec_cpu", 0.0) + time.process_time() - t
            _call["exec_wall"] = _call.get("exec_wall", 0.0) + time.perf_counter() - w

    def timed_call(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        tracer = sys.gettrace()
        sys.settrace(None)  # the golden tracer must not slow the emulator
        _call.clear()
        rss0 = _rss_kb()
        reset = _reset_hwm()
        t, w = time.process_time(), time.perf_counter()
        ok = False
        _in_call[0] = True
        try:
            res = orig_call(self, *args, **kwargs)
            ok = True
            return res
        finally:
            cpu, wall = time.process_time() - t, time.perf_counter() - w
            _in_call[0] = False
            hwm = _hwm_kb() if reset else 0
            measured = _call.pop("_measure", None)
            if measured is not None:
                program, arrays = measured
                _call["args_bytes"] = int(sum(a.nbytes for a in arrays))
                _call["n_ops"] = sum(1 for _ in _iter_ops(program.body))
                measured = program = arrays = None
            rec = {"type": "kernel", "name": self.__name__, "ok": ok, "cpu": cpu, "wall": wall,
                   "rss_before_kb": rss0, "hwm_kb": hwm, **_call}
            _emit(rec)
            sys.settrace(tracer)

    orig_prepared = _executor.prepared_for

    def timed_prepared(program, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202 - the trace cache prepares a program once: execution time
        t, w = time.process_time(), time.perf_counter()
        try:
            return orig_prepared(program, *a, **k)
        finally:
            _call["exec_cpu"] = _call.get("exec_cpu", 0.0) + time.process_time() - t
            _call["exec_wall"] = _call.get("exec_wall", 0.0) + time.perf_counter() - w

    _executor.prepared_for = timed_prepared
    import gc

    gc.callbacks.append(_gc_callback)
    timed_exec.takes_prepared = True  # type: ignore[attr-defined]  # like run_in_process (_frontend._call)
    jit.__call__ = timed_call
    jit._program = timed_program
    _frontend.lower = timed_lower
    _executor.set_default(timed_exec)


_CAPTURE = os.environ.get("FORGE_EMUREAL_CAPTURE")
_CAPTURE_MAX = int(os.environ.get("FORGE_EMUREAL_CAPTURE_MAX_MB") or "512") * 2**20
_seq = [0]


def _capture(program, args, options):  # noqa: ANN001, ANN202
    """Keep the call for offline replays (``bench/emulator_replay.py``): the encoded program, its arguments
    before and after the run, and the result - the reference a changed executor must reproduce bit for bit."""
    from runtime.emulator import _executor
    from runtime.emulator.device import encode

    size = sum(a.nbytes for a in args)
    if size > _CAPTURE_MAX:
        return _executor.run_in_process(program, args, options)
    _seq[0] += 1
    d = os.path.join(_CAPTURE, f"{os.getpid()}-{_seq[0]:04d}-{program.kernel}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "program.bin"), "wb") as fh:
        fh.write(encode(program))
    meta = {"args": [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in args],
            "options": {"out_of_bounds": options.out_of_bounds, "check_poison": options.check_poison,
                        "poison_check": options.poison_check}}
    with open(os.path.join(d, "in.bin"), "wb") as fh:
        for a in args:
            fh.write(a.tobytes())
    t = time.process_time()
    res = _executor.run_in_process(program, args, options)
    meta["exec_cpu"] = time.process_time() - t
    with open(os.path.join(d, "out.bin"), "wb") as fh:
        for a in args:
            fh.write(a.tobytes())
    meta["result"] = {"error": None if res.error is None else [res.error.code, res.error.message, res.error.line],
                      "warnings": [[w.code, w.message, w.line] for w in res.warnings], "counters": res.counters,
                      "written": res.written}
    with open(os.path.join(d, "meta.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, default=str)
    return res


def _iter_ops(region):  # noqa: ANN001, ANN202
    from runtime.emulator.device import Loop, Op

    for path in region.paths:
        for it in path.items:
            if isinstance(it, Op):
                yield it
            elif isinstance(it, Loop):
                yield from _iter_ops(it.body)


def _at_exit(t0: float, w0: float) -> None:
    import resource

    # the golden tracer off before shutdown: it would run while module globals are torn down (to None) and print
    # "TypeError: argument of type 'NoneType' is not iterable" as the run's last line (seen on attn_softmax, s41)
    sys.settrace(None)

    rec = {"type": "process", "cpu": time.process_time() - t0, "wall": time.perf_counter() - w0,
           "maxrss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "argv": sys.argv[:3]}
    _emit(rec)


if _OUT:
    try:
        _install_kernel_hooks()
    except Exception as exc:  # a process that cannot import the emulator is not measured
        _emit({"type": "hook-error", "error": f"{type(exc).__name__}: {exc}"})
    else:
        if _GOLDEN:
            sys.settrace(_global_tracer)
        atexit.register(_at_exit, time.process_time(), time.perf_counter())
