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


def _setter(group: str) -> Callable[..., None]:
    def set_group(*args: Any, **kw: Any) -> None:
        if args and isinstance(args[0], dict):
            kw = {**args[0], **kw}
        if group == "runtime":
            tr = current_tracer()
            s = current_session()
            check_runtime_options(kw, tr.options.compat if tr else (s.options.compat if s else DEFAULT_COMPAT))
        current_scope()[group].update(kw)

    set_group.__name__ = f"set_{group}_options"
    set_group.__doc__ = f"Record {group} options in the current scope (numerically transparent)."
    return set_group


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
    for group, d in (("codegen", codegen_options), ("host", host_options), ("pass", pass_options),
                     ("runtime", runtime_options), ("verify", verify_options), ("operation", operation_options),
                     ("debug", debug_options)):
        if d:
            _setter(group)(**d)
    if vec_tile_shapes is not None:
        set_vec_tile_shapes(*vec_tile_shapes)
    if cube_tile_shapes is not None:
        set_cube_tile_shapes(*cube_tile_shapes)
    if conv_tile_shapes is not None:
        current_scope()["conv_tile"] = conv_tile_shapes
    if matrix_size is not None:
        current_scope()["matrix_size"] = matrix_size


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
        set_options(**self.kw)
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
