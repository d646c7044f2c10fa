"""Tiling and option APIs: accepted, validated, recorded in the current scope, numerically transparent.

Vector/cube tile shapes are the only options with an effect: ops recorded after a ``set_*_tile_shapes``
call are checked against them (F21004, FC1001, FC4000). Every ``pypto.loop`` opens a child scope, so tiles
set inside a loop do not survive it (spec §6.3).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from runtime.emulator._enums import RunMode
from runtime.emulator._errors import py_error
from runtime.emulator._session import DEFAULT_COMPAT, current_session
from runtime.emulator._symbolic import SymbolicScalar
from runtime.emulator._trace import current_scope, current_tracer, new_scope, root_scopes

__all__ = ["options", "set_cube_tile_shapes", "set_vec_tile_shapes"]


def _concrete(v: Any, what: str) -> int:
    if isinstance(v, SymbolicScalar):
        return v.concrete()  # raises ValueError("Not concrete value")
    if isinstance(v, bool) or not isinstance(v, int):
        raise py_error("TypeError", f"{what} must be int, got {type(v).__name__}")
    return int(v)


def set_vec_tile_shapes(*sizes: Any) -> None:
    """Vector tile for the ops recorded after this call (1..4 positive compile-time ints, as arguments: the 0.2.0
    wheel refuses one list or tuple of them with this TypeError)."""
    if any(isinstance(s, list | tuple) for s in sizes):
        hint = f" (pass the sizes as arguments: set_vec_tile_shapes({', '.join(map(str, sizes[0]))}))" \
            if len(sizes) == 1 else ""
        raise py_error("TypeError", "Unsupported list element type for key: vec_tile_shapes" + hint)
    vals = [_concrete(s, "tile size") for s in sizes]
    if not 1 <= len(vals) <= 4 or any(v <= 0 for v in vals):
        raise py_error("ValueError", f"set_vec_tile_shapes takes 1 to 4 positive ints, got {vals}")
    current_scope()["vec_tile"] = vals


def get_vec_tile_shapes() -> list[int]:
    return list(current_scope()["vec_tile"])


def set_cube_tile_shapes(m: Any, k: Any, n: Any, enable_split_k: bool = False) -> None:
    """Cube tile ``m=[mL0, mL1], k=[kL0, kL1(, kL1b)], n=[nL0, nL1]`` (checked when a matmul is recorded)."""
    m, k, n = list(m), list(k), list(n)
    if len(m) != 2:
        raise py_error("ValueError", f"m must have exactly 2 elements, got {len(m)}")
    if len(n) != 2:
        raise py_error("ValueError", f"n must have exactly 2 elements, got {len(n)}")
    if len(k) not in (2, 3):
        raise py_error("ValueError", f"k must have 2 or 3 elements, got {len(k)}")
    m = [_concrete(x, "cube tile") for x in m]
    k = [_concrete(x, "cube tile") for x in k]
    if len(k) == 2:
        k.append(k[1])  # kL1b = kL1a: what the 0.2.0 wheel stores and `get_cube_tile_shapes` returns
    n = [_concrete(x, "cube tile") for x in n]
    current_scope()["cube_tile"] = (m, k, n, bool(enable_split_k))


def get_cube_tile_shapes() -> tuple:
    ct = current_scope()["cube_tile"]
    return ct if ct is not None else ([0, 0], [0, 0, 0], [0, 0], False)


_RUNTIME_KEYS = {"run_mode", "device_sched_mode", "stitch_function_max_num", "stitch_function_inner_memory",
                 "stitch_function_outcast_memory", "stitch_function_num_initial", "stitch_function_num_step",
                 "stitch_cfgcache_size", "stitch_function_size", "triple_stream_sched", "valid_shape_optimize",
                 "ready_on_host_tensors"}
_RUNTIME_KEYS_HEAD = {"max_workspace_kb", "device_sched_parallelism", "launch_sched_aicpu_num",
                      "launch_early_mode"}


def check_runtime_options(opts: dict[str, Any] | None, compat: str) -> None:
    for k, v in (opts or {}).items():
        known = _RUNTIME_KEYS | (_RUNTIME_KEYS_HEAD if compat == "head" else set())
        if k not in known:
            raise py_error("IndexError", f"map::at (unknown runtime option '{k}' in pypto 0.2.0)")
        if k == "run_mode" and (isinstance(v, bool) or v not in (RunMode.NPU, RunMode.SIM, 0, 1)):
            raise py_error("RuntimeError", "Invalid run mode, run mode must be RunMode.NPU or RunMode.SIM.")


# ---- option values as the 0.2.0 wheel types them ------------------------------------------------------------
# Observed on the installed pypto 0.2.0 (session 47, tests/emulator/test_option_types_s47.py): the C++ side keeps
# one map per value type. Through `set_options` - and so through every `set_<group>_options` setter and a jit's
# option kwargs - an int for a key that is not int-typed (a bool flag: ``compile_monitor_enable=1``) and a dict
# for a key that is not dict-typed are ``IndexError: map::at``; through any path (a `pypto.options` scope too)
# a dict that is not ``Dict[int, int]`` (``{"DEFAULT": 2}``, the HEAD form of ``vec_nbuffer_setting``) cannot
# be cast (RuntimeError), and a list of lists is a TypeError. Floats, strings, bools and flat lists were taken for
# every key, and unknown keys outside the runtime group too (``enable_slice``): not checked here. The setters
# take only their own keywords (``TypeError: ... unexpected keyword argument``). HEAD is not checked: it takes
# string-keyed merge settings, and its types were not observed.
_KEY_TYPES_020: dict[str, dict[str, str]] = {
    "pass": {"pg_skip_partition": "bool", "pg_upper_bound": "int", "vec_nbuffer_setting": "dict",
             "cube_l1_reuse_setting": "dict", "cube_nbuffer_setting": "dict", "sg_set_scope": "int"},
    "host": {"compile_stage": "int", "compile_monitor_enable": "bool", "compile_timeout": "int",
             "compile_timeout_stage": "int", "compile_monitor_print_interval": "int"},
    "codegen": {"support_dynamic_aligned": "bool"},
    "verify": {"enable_pass_verify": "bool", "pass_verify_save_tensor": "bool", "pass_verify_save_tensor_dir": "str",
               "pass_verify_pass_filter": "list", "pass_verify_error_tol": "list"},
    "debug": {"compile_debug_mode": "int", "runtime_debug_mode": "int"},
    "runtime": {**{k: "int" for k in _RUNTIME_KEYS}, "triple_stream_sched": "bool", "ready_on_host_tensors": "list"},
}
"""group -> the 0.2.0 wheel's keys (its setters' keywords; the runtime group's known keys) and their value types"""

_PLAIN = {"IndexError": IndexError, "RuntimeError": RuntimeError, "TypeError": TypeError}


def _fail(kind: str, message: str, in_kernel: bool) -> Exception:
    """The wheel's exception: a kernel error with its location inside a kernel (or from a jit's option kwargs),
    the plain Python exception on the host (a script's ``except IndexError`` still catches it)."""
    return py_error(kind, message) if in_kernel else _PLAIN[kind](message)


def check_option_types(group: str, opts: dict[str, Any] | None, compat: str, *, strict: bool,
                       in_kernel: bool = False) -> None:
    """Refuse, under ``--compat 0.2.0``, the option values the 0.2.0 wheel refuses (see `_KEY_TYPES_020`).
    ``strict``: the `set_options` path (setters, jit kwargs), which also checks a known key's type; a `pypto.options`
    scope only casts values."""
    if compat != "0.2.0" or not opts:
        return
    types = _KEY_TYPES_020.get(group, {})
    for k, v in opts.items():
        if type(v) is dict and not all(isinstance(a, int) and isinstance(b, int) for a, b in v.items()):
            raise _fail("RuntimeError", "Unable to cast Python instance of type <class 'dict'> to C++ type '?' "
                        f"({group} option '{k}' is a Dict[int, int] in pypto 0.2.0; string keys such as 'DEFAULT' "
                        "are a HEAD form: --compat head)", in_kernel)
        if type(v) is list and any(type(x) is list for x in v):
            raise _fail("TypeError", f"Unsupported list element type for key: {group}.{k}", in_kernel)
        want = types.get(k)
        if not strict or want is None:
            continue
        if type(v) is int and want != "int" or type(v) is dict and v and want != "dict":
            got = "an int" if type(v) is int else "a dict"
            raise _fail("IndexError", f"map::at ({group} option '{k}' takes a {want} in pypto 0.2.0, not {got}: "
                        f"{v!r})", in_kernel)


def _check_keywords(group: str, kw: dict[str, Any], compat: str, in_kernel: bool, note: str = "") -> None:
    """A 0.2.0 ``set_<group>_options`` setter takes only its own keywords (there is no runtime setter in 0.2.0: the
    runtime group goes through ``set_options``, which takes any key of it `check_runtime_options` knows)."""
    if compat != "0.2.0" or group == "runtime" or group not in _KEY_TYPES_020:
        return
    unknown = next((k for k in kw if k not in _KEY_TYPES_020[group]), None)
    if unknown is not None:
        raise _fail("TypeError", f"set_{group}_options() got an unexpected keyword argument '{unknown}'{note}",
                    in_kernel)


def check_jit_options(opts: dict[str, Any], compat: str) -> None:
    """A jit's option kwargs as the 0.2.0 wheel applies them at each call (``_set_config_option``: each group through
    its ``set_<group>_options(**d)`` setter, the runtime group through ``set_options(runtime_options=...)``)."""
    for group in ("codegen", "host", "pass", "verify", "debug"):
        d = opts.get(f"{group}_options")
        if not d:
            continue
        _check_keywords(group, d, compat, True, f" (the jit's {group}_options)")
        check_option_types(group, d, compat, strict=True, in_kernel=True)
    ro = opts.get("runtime_options")
    check_option_types("runtime", ro, compat, strict=True, in_kernel=True)
    check_runtime_options(ro, compat)


def _compat() -> str:
    tr = current_tracer()
    s = current_session()
    return tr.options.compat if tr else (s.options.compat if s else DEFAULT_COMPAT)


def _setter(group: str) -> Callable[..., None]:
    def set_group(*args: Any, **kw: Any) -> None:
        if args and isinstance(args[0], dict):
            kw = {**args[0], **kw}
        compat = _compat()
        if not args:
            _check_keywords(group, kw, compat, current_tracer() is not None)
        _apply(group, kw, compat, strict=True)

    set_group.__name__ = f"set_{group}_options"
    set_group.__doc__ = f"Record {group} options in the current scope (numerically transparent)."
    return set_group


def _apply(group: str, kw: dict[str, Any], compat: str, *, strict: bool) -> None:
    """Check and record one group's options in the current scope (``strict``: the `set_options` path)."""
    in_kernel = current_tracer() is not None
    check_option_types(group, kw, compat, strict=strict, in_kernel=in_kernel)
    if group == "runtime" and strict:
        check_runtime_options(kw, compat)
    current_scope()[group].update(kw)


def _getter(group: str) -> Callable[[], dict]:
    def get_group() -> dict:
        return dict(current_scope()[group])

    get_group.__name__ = f"get_{group}_options"
    return get_group


set_pass_options = _setter("pass")
set_host_options = _setter("host")
set_codegen_options = _setter("codegen")
set_runtime_options = _setter("runtime")
set_verify_options = _setter("verify")
set_debug_options = _setter("debug")
set_operation_options = _setter("operation")
get_pass_options = _getter("pass")
get_host_options = _getter("host")
get_codegen_options = _getter("codegen")
get_runtime_options = _getter("runtime")
get_verify_options = _getter("verify")
get_debug_options = _getter("debug")
get_operation_options = _getter("operation")


def set_options(codegen_options: Any = None, host_options: Any = None, pass_options: Any = None,
                runtime_options: Any = None, verify_options: Any = None, debug_options: Any = None,
                operation_options: Any = None, vec_tile_shapes: Any = None, cube_tile_shapes: Any = None,
                conv_tile_shapes: Any = None, matrix_size: Any = None) -> None:
    """Replace option values in the current scope (parameters in the 0.2.0 wheel's order: positional works too)."""
    _set_all(codegen_options, host_options, pass_options, runtime_options, verify_options, debug_options,
             operation_options, vec_tile_shapes, cube_tile_shapes, conv_tile_shapes, matrix_size, strict=True)


def _set_all(codegen_options: Any = None, host_options: Any = None, pass_options: Any = None,
             runtime_options: Any = None, verify_options: Any = None, debug_options: Any = None,
             operation_options: Any = None, vec_tile_shapes: Any = None, cube_tile_shapes: Any = None,
             conv_tile_shapes: Any = None, matrix_size: Any = None, *, strict: bool) -> None:
    """`set_options` (``strict``) and a `pypto.options` scope's entry (option keys and types not checked there)."""
    _set_groups(codegen_options, host_options, pass_options, runtime_options, verify_options, operation_options,
                debug_options, strict=strict)
    if vec_tile_shapes is not None:
        set_vec_tile_shapes(*vec_tile_shapes)
    if cube_tile_shapes is not None:
        set_cube_tile_shapes(*cube_tile_shapes)
    if conv_tile_shapes is not None:
        current_scope()["conv_tile"] = conv_tile_shapes
    if matrix_size is not None:
        current_scope()["matrix_size"] = matrix_size


def _set_groups(*dicts: Any, strict: bool) -> None:
    """The option dicts of `set_options` / a `pypto.options` scope (in `set_options`' order), checked and recorded."""
    compat = _compat()
    for group, d in zip(("codegen", "host", "pass", "runtime", "verify", "operation", "debug"), dicts, strict=True):
        if d:
            _apply(group, dict(d), compat, strict=strict)


class options:  # noqa: N801 - public pypto name
    """``pypto.options(...)``: a scope as a context manager (outside kernels) or a decorator."""

    def __init__(self, name: str = "", **kw: Any) -> None:
        self.name = name
        self.kw = kw

    def _stack(self) -> list[dict]:
        tr = current_tracer()
        return tr.scopes if tr is not None else root_scopes()

    def __enter__(self) -> options:
        st = self._stack()
        st.append(new_scope(st[-1]))
        _set_all(**self.kw, strict=False)
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack().pop()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*a: Any, **k: Any) -> Any:
            with self:
                return fn(*a, **k)

        return wrapper


def reset_options() -> None:
    st = root_scopes()
    del st[1:]
    st[0].clear()
    st[0].update(new_scope())


class ConfigScope:
    """Read-only view of the current scope (``pypto.get_current_scope()``)."""

    def __init__(self, scope: dict) -> None:
        self._s = scope

    def get_pass_options(self) -> dict:
        return dict(self._s["pass"])

    def get_runtime_options(self) -> dict:
        return dict(self._s["runtime"])

    def get_host_options(self) -> dict:
        return dict(self._s["host"])

    def get_codegen_options(self) -> dict:
        return dict(self._s["codegen"])

    def get_vec_tile_shapes(self) -> list:
        return list(self._s["vec_tile"])

    def get_cube_tile_shapes(self) -> Any:
        return self._s["cube_tile"]


def get_current_scope() -> ConfigScope:
    return ConfigScope(current_scope())


def get_options_tree() -> dict:
    return {k: (dict(v) if isinstance(v, dict) else v) for k, v in current_scope().items()}


_GLOBAL_CONFIG: dict[str, Any] = {}


def set_global_config(key: str, value: Any) -> None:
    """Recorded per scope; no effect on numerics."""
    current_scope()["pass"].setdefault("__global__", {})[key] = value


def get_global_config(key: str) -> Any:
    return current_scope()["pass"].get("__global__", {}).get(key)


def set_semantic_label(label: str) -> None:
    """Tag subsequently recorded ops (profiling only)."""
    current_scope()["label"] = str(label)


def set_matrix_size(*args: Any, **kw: Any) -> None:
    current_scope()["matrix_size"] = (args, kw)


def set_conv_tile_shapes(*args: Any, **kw: Any) -> None:
    current_scope()["conv_tile"] = (args, kw)


def get_conv_tile_shapes() -> Any:
    return current_scope()["conv_tile"]


def set_print_options(*args: Any, **kw: Any) -> None:
    """Accepted; no effect."""


def set_verify_golden_data(in_out_tensors: Any = None, goldens: Any = None) -> None:
    """Accepted; the emulator computes real results, no golden needed."""


def pass_verify_print(*values: Any, cond: Any = 1) -> None:
    """Accepted; no effect (debug op of the pass-verify oracle)."""


class CubeTile:
    """``pypto.CubeTile(m, k, n, split_k)`` value object."""

    def __init__(self, m: Any, k: Any, n: Any, enable_split_k: bool = False) -> None:
        self.m, self.k, self.n, self.enable_split_k = m, k, n, enable_split_k
