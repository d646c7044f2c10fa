"""The frontend: `@pypto.frontend.jit`, `@pypto.frontend.function` and the kernel-body interpreter.

Like the real parser, the kernel body is not run as Python: it is parsed (ast) and interpreted statement by
statement over a name environment (globals, closure, captured locals, non-tensor arguments). Expressions are
evaluated with Python ``eval``, as the real parser does: on Python 3.11 a comprehension cannot see kernel locals
(``NameError``); from 3.12 on comprehensions are inlined (PEP 709) and can - on each version both toolchains behave
alike (pypto 0.2.0 checked on 3.11.7 and 3.12.1). ``for`` over ``pypto.loop`` traces a loop region once per control
path (the name environment is restored for each path), ``for`` over ``range``/lists unrolls at trace time, and
``if`` on a SymbolicScalar records a runtime branch. Unsupported statements and signature mistakes raise the real
parser's messages with the kernel file and line.
"""

from __future__ import annotations

import inspect
import linecache
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime.dtypes import TORCH_BY_BYTES
from runtime.emulator import _executor, _gcpause, _trace_cache
from runtime.emulator._enums import DataType, RunMode, StatusType, dtype_from_numpy, dtype_name
from runtime.emulator._errors import EmulatorError, py_error
from runtime.emulator._ir import Region
from runtime.emulator._location import user_location
from runtime.emulator._lower import lower
from runtime.emulator._ops_core import new_param
from runtime.emulator._options import check_jit_options
from runtime.emulator._roll import range_sites
from runtime.emulator._session import Session, active_session
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._tensor import Tensor, _BracketAnnotation
from runtime.emulator._trace import Tracer, current_tracer, root_scopes
from runtime.emulator._trace_interp import _INTERP, _Interp, _names_of, _ordinal, _Parsed, trace_rolling
from runtime.emulator.device import KernelProgram

__all__ = ["FunctionMarker", "JitFunction", "function", "jit"]

log = logging.getLogger(__name__)

_RANGED = ("range", "bound")
"""stands for a `JitFunction._range_values` parameter's value in the trace cache key"""

# ---------------------------------------------------------------------------------------------------
# argument conversion


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


# torch dtypes the real toolchain takes (pypto 0.2.0 converter) that numpy has no dtype for -> ml_dtypes type
_ML_VIEWS = {f"torch.{name}": name for name in TORCH_BY_BYTES}


def to_numpy_view(x: Any, pname: str) -> np.ndarray:
    """A numpy array sharing memory with the argument (numpy as is; torch CPU tensors through .numpy())."""
    if isinstance(x, np.ndarray):
        if not x.flags.c_contiguous:
            raise py_error("RuntimeError", "not all tensors are contiguous")
        if x.ndim == 0:
            return x.reshape(1)  # a 0-d tensor becomes shape [1] (a view: writes still reach x)
        return x
    if _is_torch(x):
        import torch  # lazy: torch is optional

        off = getattr(getattr(torch, "_C", None), "DisableTorchFunction", None)
        if off is not None and type(x) is getattr(torch, "Tensor", None):
            # the kernel runtime reads a tensor's memory without torch calls: a torch function mode on the stack
            # (the torch_npu stand-in's placement mode, a script's own) has nothing to see here, and the mode's
            # Python handler made the ~8 tensor calls below ~20 us a tensor instead of ~4 (a tensor subclass keeps
            # its own __torch_function__: only a plain tensor is read so)
            with off():
                return _torch_view(torch, x, pname)
        return _torch_view(torch, x, pname)
    raise py_error("RuntimeError", f"argument for tensor parameter '{pname}' must be a numpy array or a torch "
                   f"CPU tensor, got {type(x).__name__}")


def _torch_view(torch: Any, x: Any, pname: str) -> np.ndarray:
    """`to_numpy_view` of a torch tensor."""
    if x.device.type != "cpu":
        raise py_error("RuntimeError", f"tensor argument '{pname}' is on {x.device}; the emulator needs CPU "
                       "tensors")
    if not x.is_contiguous():
        raise py_error("RuntimeError", "not all tensors are contiguous")
    t = x.detach()
    if t.dim() == 0:
        t = t.reshape(1)
    if str(t.dtype).startswith("torch.float4_"):
        raise py_error("NotImplementedError", f"{t.dtype} (DT_FP4_E2M1X2 / DT_FP4_E1M2X2, two values per byte) is "
                       f"accepted by the real toolchain but not emulated (argument '{pname}')")
    ml = _ML_VIEWS.get(str(t.dtype))
    if ml is not None:  # no numpy dtype in torch: share the bytes, reinterpret them as the ml_dtypes type
        import ml_dtypes

        return t.view(torch.uint8 if t.element_size() == 1 else torch.int16).numpy().view(getattr(ml_dtypes, ml))
    try:
        return t.numpy()
    except TypeError as exc:
        raise py_error("ValueError", f"Input torch.dtype is not supported. Got {t.dtype}") from exc


def _fake_call(name: str, args: tuple, kwargs: dict[str, Any]) -> bool:
    """True (and a warning) when the kernel is called with FakeTensors: ``torch.compile`` tracing a function that
    calls it (the gym's ``@allow_in_graph`` wrappers, e.g. ``attn_softmax_wrapper``, which unlike llada2's have no
    ``isinstance(x, FakeTensor)`` guard) runs it on fake inputs to learn its outputs' shapes. Such tensors have no
    data (the real 0.2.0 launcher reads ``data_ptr()``: 0 for a FakeTensor, with torch's "Accessing the data
    pointer of FakeTensor" warning); the call is skipped, the outputs stay fake, and the compiled graph runs the
    kernel on the real tensors. Before (s41): ".numpy() is not supported for tensor subclasses" and every such
    ``torch.compile`` died. When the trace records a graph of torch operations (AOTAutograd: a backend other than
    ``"eager"``), that graph does not contain the kernel, so the compiled function will not run it - said here."""
    fake_mod = sys.modules.get("torch._subclasses.fake_tensor")
    is_fake = getattr(fake_mod, "is_fake", None)
    if is_fake is None:
        return False
    values = (*args, *kwargs.values())
    if not any(_is_torch(v) and is_fake(v) for v in values):
        return False
    proxy = getattr(sys.modules.get("torch.fx.experimental.proxy_tensor"), "get_proxy_mode", None)
    recorded = proxy is not None and proxy() is not None
    f, ln = user_location()
    msg = (f"jit kernel '{name}' called with FakeTensors (torch.compile tracing): not run, its outputs keep no "
           "data; ")
    if recorded:
        msg += ("the graph being traced records torch operations only, so the compiled function will not run this "
                "kernel (the real launcher is given data_ptr() 0 for these); compile with backend='eager', or "
                "register the kernel as a custom op with a Meta implementation, as gated_delta_rule does")
    else:
        msg += "the compiled graph runs it on the real tensors"
    with active_session() as s:
        s.warn("EMU_FAKE_TENSOR_CALL", msg, file=f, line=ln)
    return True


def _annotated_axes(ann: Any, ndim: int) -> list | None:
    """The annotation's shape, one entry per axis (``...`` expanded to STATIC axes), or None when the annotation
    gives no shape (every extent is taken from the argument: all static). Its length may differ from ``ndim``
    (the trace raises)."""
    shape_ann = ann.shape if isinstance(ann, _BracketAnnotation) else ann._shape
    if not shape_ann:
        return None
    ann_list = list(shape_ann)
    if any(d is Ellipsis for d in ann_list):
        k = next(j for j, d in enumerate(ann_list) if d is Ellipsis)
        ann_list = ann_list[:k] + [StatusType.STATIC] * (ndim - k)
    return ann_list


def _is_dynamic(d: Any) -> bool:
    """An annotated axis the trace sees as a symbol (DYNAMIC, or a named dynamic dim), never as its extent."""
    if isinstance(d, StatusType):
        return bool(d != StatusType.STATIC)
    return isinstance(d, SymbolicScalar) and not d.is_concrete()


def traced_extents(ann: Any, arr: np.ndarray) -> tuple:
    """The argument's extents a trace can read (the trace cache's key): a dynamic axis is bound to a symbol the
    device reads off the argument at run time (`JitFunction._bind_tensor`), so its extent is None here and calls
    that differ only there share one program - as a real pypto kernel compiled once serves every size of its
    DYNAMIC axes. The rank is kept (the trace checks it)."""
    axes = _annotated_axes(ann, arr.ndim)
    if axes is None or len(axes) != arr.ndim:
        return tuple(arr.shape)
    return tuple(None if _is_dynamic(d) else int(real) for d, real in zip(axes, arr.shape, strict=True))


# ---------------------------------------------------------------------------------------------------
# jit


def _mentions_range(p: _Parsed, names: list[str]) -> bool:
    """Whether the kernel's source text has ``range(name)`` (so spelled) for one of ``names``: the AST walk of
    `range_sites` (~0.3 ms for a 60-line kernel, on its first call) is skipped for kernels that have none. Only ever
    skips: another spelling, or a source changed since it was parsed, at worst leaves a kernel without derived
    programs."""
    if not names:
        return False
    lines = linecache.getlines(p.file or "")
    text = "".join(lines[p.fdef.lineno - 1:p.fdef.end_lineno])
    return "range(" in text and any(f"range({n})" in text for n in names)  # no regex: compiling one allocates


class JitFunction:
    """A ``@pypto.frontend.jit`` kernel: calling it traces the body and runs the graph on numpy arrays."""

    def __init__(self, func: Callable, options: dict[str, Any], captured: dict[str, Any]) -> None:
        if not inspect.isfunction(func):
            raise py_error("TypeError", "jit decorator can only be used on functions")
        self.func = func
        self.options = options
        self.captured = captured
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._parsed: _Parsed | None = None
        self.last_program: KernelProgram | None = None
        self._cache = _trace_cache.TraceCache()
        """the programs of this kernel's last call signatures (`_trace_cache`)"""
        self._range_names: frozenset[str] | None = None
        """the non-tensor parameters read only as ``range(p)`` bounds (`_range_values`), once parsed"""
        self._reads: _trace_cache.Reads | None = None
        self._helpers = False
        """a trace of this kernel called a ``@pypto.frontend.function`` helper: its cache keys read every name"""
        self._last_entry: _trace_cache.Entry | None = None
        """the cache entry of the last `_program` (used only if its program is the one being run)"""

    def _parse(self) -> _Parsed:
        if self._parsed is None:
            p = _Parsed(self.func, "jit")
            p.check_body()
            p.split_params()
            self._parsed = p
        return self._parsed

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        if current_tracer() is not None:
            f, ln = user_location()
            raise py_error("RuntimeError", f"function nested is not allowed (jit kernel '{self.__name__}' called "
                           "while another kernel is being traced; use @pypto.frontend.function for helpers)",
                           file=f, line=ln)
        if _fake_call(self.__name__, args, kwargs):
            return None
        with active_session() as s, _gcpause.paused():  # see _gcpause: a full collection costs ~0.2 s
            try:
                self._call(s, args, kwargs)
            except EmulatorError as e:
                s.diagnostics.append(e.to_diagnostic())
                raise
        return None

    # -- the call ---------------------------------------------------------------------------------------
    def _call(self, s: Session, args: tuple, kwargs: dict[str, Any]) -> None:
        program, arrays = self._program(s, args, kwargs, cached=True)
        ro = self.options.get("runtime_options")
        if isinstance(ro, dict) and ro.get("run_mode") == RunMode.SIM:
            # s25 gym sweep (checked on the real 0.2.0 wheel): SIM mode runs a cost model and leaves the outputs as
            # they were, so a script comparing them after `--run_mode sim` fails there (max diff 2.4e26) and passed
            # here. The emulator still computes (its purpose); it says that the toolchain would not
            p = self._parse()
            s.warn("EMU_SIM_NUMBERS", "runtime_options run_mode=RunMode.SIM: the real toolchain only runs its cost "
                   "model and leaves the outputs unwritten; the emulator computes them (a check of the outputs after a "
                   "SIM run passes here and fails there)", file=p.file, line=p.fdef.lineno)
        ex = _executor.current()
        e = self._last_entry
        if e is not None and e.base is not None and e.program is program and getattr(ex, "takes_prepared", False):
            # derived for other trip counts (`_trace_cache.retrip`): the template's prepared form, with these stops
            b = e.base
            if b.prepared is None:
                b.prepared = _executor.prepared_for(b.program, s.options.npuarch)
            prepared = _executor.retripped(b.prepared, e.stops or {}) if b.prepared is not None else None
            res = ex(program, arrays, _executor.exec_options(s), prepared=prepared)  # type: ignore[call-arg]
        elif e is not None and (e.hit or e.range is not None) and e.program is program and \
                getattr(ex, "takes_prepared", False):
            # a program the cache hands out again is prepared once, on its first hit; a range template
            # (`_trace_cache.retrip`) at once: its other trip counts run on this very prepared form
            if e.prepared is None:
                e.prepared = _executor.prepared_for(program, s.options.npuarch)
            res = ex(program, arrays, _executor.exec_options(s), prepared=e.prepared)  # type: ignore[call-arg]
        else:
            # a miss: the prepared form is made for this run and dropped after it (see `_trace_cache.Entry`)
            res = ex(program, arrays, _executor.exec_options(s))
        _executor.apply_result(s, res)
        res.raise_error()

    def _program(self, s: Session, args: tuple, kwargs: dict[str, Any], *,
                 cached: bool = False) -> tuple[KernelProgram, list[np.ndarray]]:
        """The program of this call: with ``cached``, the cache's when this call signature was traced before (see
        `_trace_cache`), else trace the body for these arguments and lower it."""
        bound = self._bind(s, args, kwargs)
        arrays = bound[2]
        rv = self._range_values(s, bound) if cached else {}
        tkey = self._cache_key(s, bound, rv) if cached else None
        # with `range(p)` parameters: tkey leaves their values out, the exact key adds them (see `_range_values`)
        key = (tkey, tuple(sorted(rv.items()))) if rv and tkey is not None else tkey
        self._last_entry = None
        if key is not None:
            e = self._cache.get(key)
            if e is not None:
                e.hit = True
            elif rv and (t := self._cache.get(("range", tkey), count=False)) is not None and \
                    (e := _trace_cache.retrip(t, rv)) is not None:
                self._cache.put(key, e)  # runs on the template's prepared form (`_call`)
            if e is not None:
                self._last_entry = e
                for code, message, file, line, op in e.warnings:
                    s.warn(code, message, file=file, line=line, op=op)
                s.kernel_args.append({"kernel": self.__name__, "args": [
                    {"name": n, "shape": list(arr.shape), "dtype": d} for (n, d), arr in zip(e.arg_names, arrays,
                                                                                              strict=True)]})
                self.last_program = e.program
                return e.program, arrays
        # a range(p) loop is rolled from one iteration on, on the first trace too, so that its program serves every
        # other count (attn_softmax: 1, 2, 8, 16 tiles - one trace, not four). The rolled form of a loop of one or
        # two iterations traces its body once more than the unrolled one (~1 ms on attn_softmax's first call), paid
        # back by the first call with another count (a second trace: ~3 ms); verification and the gym's tests call
        # a kernel with several counts
        ranged: dict[str, Any] = {"values": rv, "small": True} if key is not None and rv else {}
        calls = FunctionMarker.calls
        with s.capture_warnings() as warnings:
            region, symbols, params, n_keys = self._trace_bound(s, bound, ranged)
        if FunctionMarker.calls != calls and not self._helpers:
            # a helper ran in the body's namespace and may have unbound a name the key took as bound: from now on
            # the key reads every name the body mentions, and this trace (keyed the other way) is not kept
            self._helpers, self._reads, key = True, None, None
        arg_names = tuple((t.name, dtype_name(t.dtype)) for t, _ in params)
        s.kernel_args.append({"kernel": self.__name__, "args": [
            {"name": n, "shape": list(arr.shape), "dtype": d} for (n, d), (_, arr) in zip(arg_names, params,
                                                                                          strict=True)]})
        p = bound[0]
        sites: dict[int, str] = {}
        program = lower(p.name, p.file, p.fdef.lineno, region, params, symbols, n_keys, sites)
        self.last_program = program
        if key is not None and self._cache_key(s, bound, rv) == tkey:  # the trace left its inputs as it found them
            self._last_entry = e = _trace_cache.Entry(program, tuple(warnings), arg_names)
            self._cache.put(key, e)
            if ranged and not ranged["fixed"]:
                e.range = _trace_cache.RangeTemplate(dict(rv), sites, ranged["folds"])
                self._cache.put(("range", tkey), e)
        return program, arrays

    def _range_values(self, s: Session, bound: tuple) -> dict[str, int]:
        """The call's values of the kernel's `_roll.range_sites` parameters (read only as ``range(p)`` bounds), when
        each is an int >= 1: the trace cache then keys the call without them, and a program traced for other values
        is derived for these (`_trace_cache.retrip`) instead of tracing again. Off with the loops' rolling."""
        p, _, _, values = bound
        names = self._range_names
        if names is None:
            if not any(type(v) is int for v in values.values()):
                return {}  # decided on the first call with an int argument (nothing allocated before that)
            others = [o.name for o in p.split_params()[1]]
            try:
                p.range_sites = range_sites(p.fdef, others, p.codes, p.source) if _mentions_range(p, others) else {}
            except Exception:  # noqa: BLE001 - an odd body: no derived programs, traced as before
                log.debug("range sites of %s", self.__name__, exc_info=True)
                p.range_sites = {}
            names = self._range_names = frozenset(p.range_sites.values())
        if not names:
            return {}
        o = s.options
        if o.record or not o.roll or o.out_of_bounds != "raise":
            return {}
        return {n: v for n in sorted(names) if type(v := values.get(n)) is int and v >= 1}

    def _cache_key(self, s: Session, bound: tuple, without: dict[str, int] | None = None) -> Any:
        """Everything a trace of this call reads (`_trace_cache`), or None: uncacheable / cache off. The values of
        the parameters in ``without`` are left out (`_range_values`)."""
        if self.options.get("use_cache") is False or not _trace_cache.enabled():
            return None
        p, tparams, arrays, values = bound
        if without:
            values = {k: (_RANGED if k in without else v) for k, v in values.items()}
        try:
            if self._reads is None:
                names = frozenset(n for n, _ in tparams) | frozenset(o.name for o in p.split_params()[1])
                # what the body binds itself is not read from the environment - unless a helper shares its
                # namespace (`_trace_cache.bound_reads`; `_program` switches once a trace calls one)
                if self._helpers:
                    self._reads = _trace_cache.body_reads(p.fdef, names)
                else:  # and the `walkable` answers of the expressions it walks, for the trace (`bound_reads`)
                    self._reads = _trace_cache.bound_reads(p.fdef, names, p.walks)
            return (tuple((_trace_cache._Id(ann), a.dtype, traced_extents(ann, a)) for (_, ann), a in
                          zip(tparams, arrays, strict=True)),
                    _trace_cache.freeze(values), _trace_cache.freeze(self.options), s.options,
                    _trace_cache.freeze(root_scopes()[-1]),
                    _trace_cache.env_fingerprint(self._reads, _names_of(self.func, self.captured), _helper_reads))
        except _trace_cache.Uncacheable as exc:
            log.debug("trace cache: a call of %s is traced every time: %s", self.__name__, exc)
            return None
        except Exception:  # noqa: BLE001 - anything odd in the environment: trace as before
            log.debug("trace cache: cannot fingerprint a call of %s", self.__name__, exc_info=True)
            return None

    def trace(self, *args: Any, **kwargs: Any) -> Region:
        """Trace the body for these arguments without executing it (returns the graph; for tools/benchmarks)."""
        with active_session() as s:
            return self._trace(s, args, kwargs)[0]

    def program(self, *args: Any, **kwargs: Any) -> KernelProgram:
        """Trace the body for these arguments and return the program the device would execute (no run)."""
        with active_session() as s:
            return self._program(s, args, kwargs)[0]

    def _trace(self, s: Session, args: tuple, kwargs: dict[str, Any]) -> tuple[Region, list, list, int]:
        return self._trace_bound(s, self._bind(s, args, kwargs))

    def _bind(self, s: Session, args: tuple, kwargs: dict[str, Any]) -> tuple:
        """The call's checks before tracing: (parsed body, tensor params, argument arrays, other values)."""
        p = self._parse()
        tparams, others = p.split_params()
        check_jit_options(self.options, s.options.compat)
        n = len(tparams)
        if len(args) < n:
            raise py_error("RuntimeError", f"Expected at least {n} tensor argument(s), got {len(args)}.",
                           file=p.file, line=p.fdef.lineno)
        arrays = [to_numpy_view(a, name) for a, (name, _) in zip(args[:n], tparams, strict=True)]
        values = self._bind_others(p, others, args[n:], kwargs)
        return p, tparams, arrays, values

    def _trace_bound(self, s: Session, bound: tuple, ranged: dict[str, Any] | None = None) -> \
            tuple[Region, list, list, int]:
        # traced again, with that loop unrolled, when a range loop traced as a device loop is refused (`_roll`)
        return trace_rolling(s, lambda: self._trace_once(s, bound, ranged))

    def _trace_once(self, s: Session, bound: tuple, ranged: dict[str, Any] | None = None) -> \
            tuple[Region, list, list, int]:
        """One trace of the body. ``ranged`` (`_range_values`): ``{"values": ...}`` in, and out whether a
        ``range(p)`` loop was unrolled (``fixed``) and the branches decided in the rolled ones (``folds``)."""
        p, tparams, arrays, values = bound
        tr = Tracer(s, p.name, p.file)
        if ranged:
            tr.range_values = ranged["values"]
            tr.range_small = ranged["small"]
        with tr:
            for group in ("pass_options", "host_options", "codegen_options", "verify_options", "debug_options"):
                tr.scopes[-1][group.split("_")[0]].update(self.options.get(group) or {})
            tr.scopes[-1]["runtime"].update(self.options.get("runtime_options") or {})
            symbols: list[tuple[str, int, int, bool]] = []
            ns: dict[str, Any] = {}
            for i, ((name, ann), arr) in enumerate(zip(tparams, arrays, strict=True)):
                ns[name] = self._bind_tensor(tr, p, i, name, ann, arr, symbols)
            ns.update(values)
            interp = _Interp(tr, p, _names_of(self.func, self.captured))
            region = Region()
            snapshot = dict(ns)
            first = True
            for _ctx in tr.trace_paths(region, scope=True):
                if not first:
                    ns.clear()
                    ns.update(snapshot)
                first = False
                interp.exec_block(p.fdef.body, ns)
            self._whole_graph_checks(tr)
        if ranged:
            ranged["fixed"] = tr.range_fixed
            ranged["folds"] = list(tr.range_folds)
        params = [(snapshot[name], arr) for (name, _), arr in zip(tparams, arrays, strict=True)]
        return region, symbols, params, tr.counter

    def _bind_others(self, p: _Parsed, others: list[inspect.Parameter], rest: tuple,
                     kwargs: dict[str, Any]) -> dict[str, Any]:
        names = [o.name for o in others]
        if len(rest) > len(others):
            raise py_error("RuntimeError", f"Too many positional arguments: kernel '{p.name}' takes {len(others)} "
                           f"non-tensor parameter(s) after the tensors", file=p.file, line=p.fdef.lineno)
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise py_error("RuntimeError", f"Unknown keyword argument(s): {unknown} Valid non-tensor parameters: "
                           f"{names}", file=p.file, line=p.fdef.lineno)
        values: dict[str, Any] = {}
        for i, o in enumerate(others):
            if i < len(rest):
                v = rest[i]
            elif o.name in kwargs:
                v = kwargs[o.name]
            elif o.default is not inspect.Parameter.empty:
                v = o.default
            else:
                raise py_error("RuntimeError", f"Missing required non-tensor argument '{o.name}'.", file=p.file,
                               line=p.fdef.lineno)
            if isinstance(v, np.ndarray) or _is_torch(v):
                hint = ""
                ann = p.func.__annotations__.get(o.name)
                if isinstance(ann, str):
                    hint = " (its annotation is a string: `from __future__ import annotations` hides pypto.Tensor " \
                           "annotations from the parser)"
                raise py_error("RuntimeError", f"Non-tensor parameter '{o.name}' must not be a torch.Tensor / "
                               f"array{hint}", file=p.file, line=p.fdef.lineno)
            values[o.name] = v
        return values

    def _bind_tensor(self, tr: Tracer, p: _Parsed, i: int, name: str, ann: Any, arr: np.ndarray,
                     symbols: list[tuple[str, int, int, bool]]) -> Tensor:
        ord_ = _ordinal(i)
        try:
            dt_actual = dtype_from_numpy(arr.dtype)
        except ValueError as e:
            raise py_error("ValueError", f"Input dtype is not supported. Got {arr.dtype} ({ord_} input "
                           f"'{name}')", file=p.file, line=p.fdef.lineno) from e
        if ann is Tensor:  # both refuse it; the wheel with "'str' object has no attribute 'shape'" (s32 fidelity)
            raise py_error("ValueError", f"{ord_} parameter '{name}' is annotated with the bare class pypto.Tensor: a "
                           "jit kernel's tensor parameter needs pypto.Tensor([...shape], dtype)", file=p.file,
                           line=p.fdef.lineno)
        if isinstance(ann, _BracketAnnotation):
            shape_ann, dt_ann, fmt = ann.shape, ann.dtype, ann.format
            if dt_ann == "FORCE_FP32":
                dt_ann = dt_actual if tr.options.compat == "head" else DataType.DT_FP32
        else:
            shape_ann, dt_ann, fmt = ann._shape, ann._dtype, ann._format
            if not ann._dtype_given:
                dt_ann = dt_actual
        if dt_ann is None:
            dt_ann = dt_actual
        if DataType(dt_ann) != dt_actual:
            raise py_error("ValueError", f"The dtype of {ord_} input tensor {dtype_name(dt_actual)} "
                           f"({arr.dtype}) does not match the dtype of input tensor definition "
                           f"{DataType(dt_ann)!r} (parameter '{name}'; the device would reinterpret the bytes)",
                           file=p.file, line=p.fdef.lineno)
        shape: list[Any] = []
        if not shape_ann:
            shape = list(arr.shape)
        else:
            ann_list = _annotated_axes(ann, arr.ndim) or []
            if len(ann_list) != arr.ndim:
                raise py_error("ValueError", f"The number of dimensions of {ord_} input tensor {arr.ndim} does not "
                               f"match the number of dimensions of input tensor definition {len(ann_list)} "
                               f"(parameter '{name}')", file=p.file, line=p.fdef.lineno)
            # a dynamic axis (`_is_dynamic`) must never read `real`: the trace cache shares the program over its
            # extents (`traced_extents`)
            for ax, (d, real) in enumerate(zip(ann_list, arr.shape, strict=True)):
                if isinstance(d, StatusType):
                    if d == StatusType.STATIC:
                        shape.append(int(real))
                    else:
                        sname = f"RUNTIME_GetInputShapeDim(ARG_{name},{ax})"
                        shape.append(SymbolicScalar(sname))
                        symbols.append((sname, i, ax, False))  # the device reads the extent off the argument
                elif isinstance(d, SymbolicScalar):
                    if d.is_concrete():
                        if d.concrete() != real:
                            raise self._shape_err(p, ord_, name, arr, shape_ann)
                        shape.append(int(real))
                    else:
                        symbols.append((str(d._name), i, ax, True))  # the first binding of a named dim wins
                        shape.append(d)
                elif isinstance(d, int):
                    if d != real:
                        raise self._shape_err(p, ord_, name, arr, shape_ann)
                    shape.append(int(d))
                else:
                    raise py_error("ValueError", f"Invalid value type {d!r} in the shape of parameter '{name}'",
                                   file=p.file, line=p.fdef.lineno)
        return new_param(tr, shape, DataType(dt_ann), name, fmt, i)

    @staticmethod
    def _shape_err(p: _Parsed, ord_: str, name: str, arr: np.ndarray, ann: Any) -> EmulatorError:
        return py_error("ValueError", f"The shape of {ord_} input tensor {list(arr.shape)} does not match the shape "
                        f"of input tensor definition {list(ann)} (parameter '{name}')", file=p.file,
                        line=p.fdef.lineno)

    @staticmethod
    def _whole_graph_checks(tr: Tracer) -> None:
        for t, o, f, ln in tr.inplace_reshapes:
            if t._written or o._written:
                tr.session.warn("EMU_RESHAPE_INPLACE", f"reshape(..., inplace=True) on kernel output '{t.name}': "
                                "gym reports silent NaN on the device when an inplace reshape is a final output",
                                file=f, line=ln, op="reshape")
        for t in tr.tensors:
            if t.kind == "local" and t._read is not None and not t._written:
                f, ln, opn = t._read
                raise EmulatorError("FFFFFF", f"Run pass failed. ({opn.upper()}: Tensor '{t.name or t.key}' is "
                                    "missing Alloc - a local pypto.tensor is read but never written; write it with "
                                    "t[:] = ..., t.move(...) or assemble first)", file=f, line=ln, op=opn)


def jit(func: Callable | None = None, *, host_options: Any = None, codegen_options: Any = None,
        pass_options: Any = None, runtime_options: Any = None, verify_options: Any = None,
        debug_options: Any = None, infer_controlflow_shape: Any = None, use_cache: bool = True,
        new_ir: Any = None) -> Any:
    """``@pypto.frontend.jit`` bare or with options (all options are accepted and recorded)."""
    opts = {"host_options": host_options, "codegen_options": codegen_options, "pass_options": pass_options,
            "runtime_options": runtime_options, "verify_options": verify_options, "debug_options": debug_options,
            "infer_controlflow_shape": infer_controlflow_shape, "use_cache": use_cache, "new_ir": new_ir}
    frame = sys._getframe(1)
    caller_file = frame.f_code.co_filename
    captured = dict(frame.f_locals) if frame.f_locals is not frame.f_globals else {}
    del frame

    def deco(f: Callable) -> JitFunction:
        code = getattr(f, "__code__", None)
        # capture the defining frame's locals only (not those of a wrapper that forwards to jit)
        local_names = captured if code is not None and code.co_filename == caller_file else {}
        return JitFunction(f, opts, local_names)

    if func is None:
        return deco
    return deco(func)


# ---------------------------------------------------------------------------------------------------
# frontend.function


class FunctionMarker:
    """A ``@pypto.frontend.function`` helper: inlined into the caller's frame (no scope of its own)."""

    calls = 0
    """helper calls in this process so far (`JitFunction._program`: did a trace call one?). Only ever grows (counted
    under a lock: an unlocked ``+=`` in two threads could write back an older count), so a call in another thread
    makes a trace look like it called one - the safe side"""
    _calls_lock = threading.Lock()

    def __init__(self, func: Callable) -> None:
        if not inspect.isfunction(func):
            raise py_error("TypeError", "function decorator can only be used on functions")
        self.func = func
        self.__name__ = func.__name__
        self._parsed: _Parsed | None = None
        self._reads: _trace_cache.Reads | None = None

    def _parse(self) -> _Parsed:
        if self._parsed is None:
            p = _Parsed(self.func, "function")
            p.check_body()
            self._parsed = p
        return self._parsed

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        interp = _INTERP.get()
        if interp is None:
            raise py_error("RuntimeError", f"frontend.function '{self.__name__}' can only be called from a "
                           "@pypto.frontend.jit kernel body")
        if kwargs:
            raise py_error("NotImplementedError", "Keyword arguments in nested function calls are not supported "
                           "yet.")
        with FunctionMarker._calls_lock:
            FunctionMarker.calls += 1
        p = self._parse()
        tparams, others = p.split_params()
        names = [n for n, _ in tparams] + [o.name for o in others]
        if len(args) != len(names):
            raise py_error("ValueError", f"Function {p.name} expects {len(names)} arguments, but got {len(args)}")
        ns = interp.ns
        for i, ((pname, ann), a) in enumerate(zip(tparams, args[: len(tparams)], strict=True)):
            _check_nested_arg(p.name, i, pname, ann, a)
        for o, v in zip(others, args[len(tparams):], strict=True):
            ann = p.func.__annotations__.get(o.name)
            if ann in (int, bool) and not isinstance(v, ann | SymbolicScalar):
                raise py_error("ValueError", f"In nested function '{p.name}': parameter '{o.name}' expects "
                               f"{ann.__name__}, got {type(v).__name__}")
        for n, v in zip(names, args, strict=True):
            ns[n] = v
        sub = _Interp(interp.tr, p, _names_of(self.func, {}))
        sub.exec_block(p.fdef.body, ns)
        return None


_trace_cache.register(JitFunction, "kernel")
_trace_cache.register(FunctionMarker, "helper")


def _helper_reads(m: FunctionMarker) -> tuple[_trace_cache.Reads, dict[str, Any]]:
    """What a ``@pypto.frontend.function`` helper's body reads, and the environment it reads it from."""
    if m._reads is None:
        p = m._parse()
        tparams, others = p.split_params()
        m._reads = _trace_cache.body_reads(p.fdef, frozenset(n for n, _ in tparams) | frozenset(o.name for o in others))
    return m._reads, _names_of(m.func, {})


def _check_nested_arg(fname: str, i: int, pname: str, ann: Any, a: Any) -> None:
    ord_ = _ordinal(i)
    if ann is Tensor:
        # s32 fidelity: the 0.2.0 frontend fails on it (INTERNAL BUG "too many values to unpack (expected 2)", or a
        # NameError for a two-letter name) - an undecorated helper, run as plain Python, takes it
        raise py_error("ValueError", f"In nested function '{fname}': {ord_} parameter '{pname}' is annotated with "
                       "the bare class pypto.Tensor, which the 0.2.0 frontend cannot parse in a "
                       "@pypto.frontend.function helper: write pypto.Tensor([...shape], dtype), or leave it "
                       "unannotated")
    if not isinstance(a, Tensor):
        raise py_error("ValueError", f"In nested function '{fname}': {ord_} parameter '{pname}' expects a Tensor, "
                       f"got {type(a).__name__}")
    if isinstance(ann, Tensor):
        shp = ann._shape
        if shp:
            if len(shp) != a.dim:
                raise py_error("ValueError", f"In nested function '{fname}': The number of dimensions of {ord_} "
                               f"parameter '{pname}' ({a.dim}) does not match the definition ({len(shp)})")
            for d, r in zip(shp, a.shape, strict=True):
                if isinstance(d, int) and isinstance(r, int) and d != r:
                    raise py_error("ValueError", f"In nested function '{fname}': The shape of {ord_} parameter "
                                   f"'{pname}' {a.shape} does not match the definition {shp}")
        # only a dtype written in the annotation: `pypto.Tensor([8, 32])` takes a bf16 tile there (s32 fidelity: it
        # was refused here as "does not match DT_FP32"; a jit parameter's shape-only annotation means FP32)
        if ann._dtype_set and ann._dtype != a.dtype:
            raise py_error("ValueError", f"In nested function '{fname}': The dtype of {ord_} parameter '{pname}' "
                           f"{a.dtype!r} does not match the definition {ann._dtype!r}")


def function(func: Callable) -> FunctionMarker:
    """``@pypto.frontend.function``: an inlined kernel helper."""
    return FunctionMarker(func)


def dynamic(name: str) -> SymbolicScalar:
    """``pypto.frontend.dynamic(name)``: a named dynamic dimension."""
    return SymbolicScalar(name)
