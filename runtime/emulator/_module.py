"""Assembly of the emulated `pypto` module (and its submodules) from the pieces of this package."""

from __future__ import annotations

import sys
import types
from typing import Any

from runtime.emulator import _enums, _options, _wheel_api, _wheel_identity
from runtime.emulator import _ops_core as _core  # noqa: F401 - registers ops
from runtime.emulator import _ops_create as _create  # noqa: F401 - registers ops
from runtime.emulator import _ops_head as _head  # noqa: F401 - registers ops
from runtime.emulator import _ops_index as _index  # noqa: F401 - registers ops
from runtime.emulator import _ops_math as _math  # noqa: F401 - registers ops
from runtime.emulator import _ops_matmul as _mm  # noqa: F401 - registers ops
from runtime.emulator import _ops_reduce as _reduce  # noqa: F401 - registers ops
from runtime.emulator._frontend import dynamic, function, jit
from runtime.emulator._methods import install_methods
from runtime.emulator._module_specs import give_specs
from runtime.emulator._registry import OPS, UNSUPPORTED, unsupported_stub
from runtime.emulator._scalar import Element
from runtime.emulator._session import DEFAULT_COMPAT, current_session
from runtime.emulator._symbolic import SymbolicScalar, sym_max, sym_min
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import current_tracer, loop_flag
from runtime.emulator._trace_interp import cond, loop, loop_unroll

__all__ = ["API_SURFACE", "MODULES", "build_modules", "install"]

_SUBMODULES = ("frontend", "experimental", "platform", "operator", *_wheel_api.SUBMODULES)


def is_loop_begin(i: Any) -> SymbolicScalar:
    """1 in the first iteration of the loop that yielded ``i`` (must be the loop index itself)."""
    return loop_flag(i, "begin")


def is_loop_end(i: Any) -> SymbolicScalar:
    """1 in the last iteration of the loop that yielded ``i``."""
    return loop_flag(i, "end")


def ceildiv(a: Any, b: Any) -> Any:
    """(a + b - 1) // b for ints and SymbolicScalars."""
    return (a + b - 1) // b


def _platform_getattr(name: str) -> Any:
    if name == "npuarch":
        s = current_session()
        return s.options.npuarch if s is not None else "DAV_2201"
    raise AttributeError(f"module 'pypto.platform' has no attribute '{name}'")


# Names of this module that the real pypto 0.2.0 wheel does not have (dir() of the installed wheel against
# API_SURFACE; tests/gym/test_targets.py keeps the list honest). They are HEAD API: under compat 0.2.0 they
# raise AttributeError as the wheel does; under head (the default) they resolve.
HEAD_ONLY: frozenset[str] = frozenset({
    "PrecisionType", "TopKAlgo", "acos", "acosh", "argmax", "argmin", "asin", "asinh", "atan", "atan2", "atanh",
    "atomic_add", "axpy_", "cosh", "cumprod", "deinterleave", "dequantize", "erf", "erfc", "floor_div", "gather_in_l1",
    "gather_in_ub", "get_runtime_options", "interleave", "isnan", "jit", "move", "online_softmax",
    "online_softmax_update", "permute", "quant_mx", "quantize", "set_runtime_options", "sinh", "sort", "tan",
    "tanh",
})
_HEAD_NS: dict[str, Any] = {}


def _target() -> str:
    """The target of the kernel being traced, else of the session, else the default."""
    tr = current_tracer()
    if tr is not None:
        return tr.options.compat
    s = current_session()
    return s.options.compat if s is not None else DEFAULT_COMPAT


def _module_getattr(name: str) -> Any:
    if name == "torch":  # the wheel re-exports torch; imported on first use (the device process never pays it)
        try:
            import torch
        except ImportError:  # the wheel depends on torch; the emulator does not
            raise AttributeError("module 'pypto' has no attribute 'torch' (torch is not installed)") from None
        return torch
    if name in _HEAD_NS:
        if _target() == "head":
            return _HEAD_NS[name]
        raise AttributeError(f"module 'pypto' has no attribute '{name}' (pypto 0.2.0 has no such name; it is HEAD "
                             "API: target head, e.g. --compat head)")
    raise AttributeError(f"module 'pypto' has no attribute '{name}'")


def _module_dir() -> list[str]:
    names = set(_MODULES["pypto"].__dict__) | {"torch"}
    if _target() == "head":
        names |= set(_HEAD_NS)
    return sorted(names)


def build_modules() -> dict[str, types.ModuleType]:
    install_methods()
    # what a kernel sees of `pypto` names no emulator (issue #24): the real toolchain's version, no emulator-only
    # names (EmulatorError stays importable from runtime.emulator; the agent sees it in reports, not the kernel)
    root = types.ModuleType("pypto")
    ns: dict[str, Any] = {
        "__version__": "0.2.0",
        "Tensor": Tensor, "tensor": Tensor, "Element": Element, "SymbolicScalar": SymbolicScalar,
        "DYNAMIC": _enums.StatusType.DYNAMIC, "DYN": _enums.StatusType.DYN, "STATIC": _enums.StatusType.STATIC,
        "bytes_of": _enums.bytes_of,
        "loop": loop, "loop_unroll": loop_unroll, "cond": cond, "is_loop_begin": is_loop_begin,
        "is_loop_end": is_loop_end, "min": sym_min, "max": sym_max, "ceildiv": ceildiv,
        "jit": jit,
    }
    for enum_name in ("DataType", "TileOpFormat", "CastMode", "SaturationMode", "OpType", "OutType", "ReLuType",
                      "TransMode", "ScatterMode", "ReduceMode", "AtomicType", "CachePolicy", "StatusType",
                      "RunMode", "CompStage", "PrecisionType", "TopKAlgo"):
        ns[enum_name] = getattr(_enums, enum_name)
    for m in _enums.DataType:
        ns[m.name] = m
    for name in ("set_vec_tile_shapes", "get_vec_tile_shapes", "set_cube_tile_shapes", "get_cube_tile_shapes",
                 "set_pass_options", "get_pass_options", "set_host_options", "get_host_options",
                 "set_codegen_options", "get_codegen_options", "set_runtime_options", "get_runtime_options",
                 "set_verify_options", "get_verify_options", "set_debug_options", "get_debug_options",
                 "set_options", "options", "reset_options", "get_current_scope", "get_options_tree",
                 "set_global_config", "get_global_config", "set_semantic_label", "set_matrix_size",
                 "set_conv_tile_shapes", "get_conv_tile_shapes", "set_print_options", "set_verify_golden_data",
                 "pass_verify_print", "CubeTile", "ConfigScope"):
        ns[name] = getattr(_options, name)
    ns.update(_wheel_api.names())  # the rest of the wheel's public names (`_wheel_api`)
    for name, spec in OPS.items():
        ns[name] = spec.impl
    for name in UNSUPPORTED:
        if name not in ns:
            ns[name] = unsupported_stub(name)
    for name in HEAD_ONLY & set(ns):
        _HEAD_NS[name] = ns.pop(name)
    root.__dict__.update(ns)
    root.__dict__["__getattr__"] = _module_getattr  # module-level __getattr__ (PEP 562)
    root.__dict__["__dir__"] = _module_dir
    root.__path__ = []  # a package, so `import pypto.frontend` works

    frontend = types.ModuleType("pypto.frontend")
    frontend.__dict__.update({"jit": jit, "function": _wheel_api.bare_or_called(function), "dynamic": dynamic,
                              "SymbolicScalar": SymbolicScalar, "parser": _wheel_api.unemulated_module("frontend.parser")})
    experimental = types.ModuleType("pypto.experimental")
    experimental.__dict__.update({
        "set_operation_options": _options.set_operation_options,
        "get_operation_options": _options.get_operation_options,
        "gather_in_ub": _HEAD_NS["gather_in_ub"], "gather_in_l1": _HEAD_NS["gather_in_l1"], "conv": ns["conv"],
        "transposed_batchmatmul": unsupported_stub_named("transposed_batchmatmul"),
        "AtomicType": _enums.AtomicType, "SymbolicScalar": SymbolicScalar, "Tensor": Tensor,
        "set_options": _options.set_options, "get_current_scope": _options.get_current_scope,
        "to_syms": _wheel_api.to_syms, "op_wrapper": ns["op_wrapper"], "pypto_impl": ns["pypto_impl"],
        **{n: _wheel_api.TYPING_NAMES[n] for n in ("Dict", "List", "Optional", "Union")},
        **{n.split(".", 1)[1]: _wheel_api.not_emulated(n) for n in _wheel_api.NOT_EMULATED
           if n.startswith("experimental.")},
    })
    platform = types.ModuleType("pypto.platform")
    platform.__dict__["__getattr__"] = _platform_getattr
    operator = types.ModuleType("pypto.operator")
    operator.__dict__.update({"sin": OPS["sin"].impl, "cos": OPS["cos"].impl})
    mods = {"pypto": root, "pypto.frontend": frontend, "pypto.experimental": experimental,
            "pypto.platform": platform, "pypto.operator": operator}
    for sub in _wheel_api.SUBMODULES:  # pypto.op, pypto.math ...: the wheel's names, the root's objects
        mods[f"pypto.{sub}"] = _wheel_api.submodule(sub, root)
    for sub in _SUBMODULES:
        setattr(root, sub, mods[f"pypto.{sub}"])
    _wheel_identity.apply(root)  # the wheel's names for what stands in for its objects (not an emulator tell)
    _wheel_identity.place(root)
    return mods


def unsupported_stub_named(name: str) -> Any:
    UNSUPPORTED.setdefault(name, "experimental op not emulated")
    return unsupported_stub(name)


_MODULES: dict[str, types.ModuleType] = build_modules()
MODULES = _MODULES
"""The emulated ``pypto`` and its submodules by module name (one set per process)."""


def wheel_aliases(mods: dict[str, types.ModuleType]) -> dict[str, types.ModuleType]:
    """The wheel's own module names that ``import pypto`` leaves in ``sys.modules`` on a device host
    (``pypto.op.math``, ``pypto.enum``, ``pypto.tensor``, ``pypto.symbolic_scalar`` ...), for the emulator's modules.

    Why: the emulator's submodules already carry those names (``pypto.math.__name__`` is ``pypto.op.math``, as
    `_wheel_identity.place` names them), yet ``from pypto.op.math import exp`` or ``from pypto.enum import
    StatusType`` was a ``ModuleNotFoundError``. A module of ``IDENTITY`` that the emulator has no module object for
    gets one holding the root's objects of the names the wheel has there: those it defines (``IDENTITY``) and
    those it re-exports (``REEXPORTS``: s38's first cut gave ``pypto.enum`` only ``StatusType``, so ``from
    pypto.enum import DataType, DT_FP32`` failed); a module the emulator has gets the ones it lacks, and a private
    one (``pypto._utils``) is also the root's attribute, as the wheel's ``import`` of it leaves it. These go into
    ``sys.modules`` when ``pypto`` is imported (as the wheel's ``__init__`` imports them), never through the import
    of the name itself, which would set the parent's attribute (``pypto.tensor``, the ``Tensor`` class, is not the
    module)."""
    root = mods["pypto"]
    out: dict[str, types.ModuleType] = {}
    for attr, (name, _file) in _wheel_identity.MODULE_FILES.items():
        mod = mods.get(f"pypto.{attr}") if attr else None
        if mod is not None and name != f"pypto.{attr}":
            out[name] = mod
    tables = (_wheel_identity.IDENTITY, _wheel_identity.REEXPORTS)
    for name in sorted({n for table in tables for n in table}):
        if not name.startswith("pypto.") or name == "pypto.pypto_impl":
            continue
        mod = mods.get(name) or out.get(name)
        if mod is None:
            doc = f"{name} of the emulated pypto (the root's objects of these names)"
            mod = out[name] = types.ModuleType(name, doc)
            parent, _, attr = name.rpartition(".")
            if parent == "pypto" and attr.startswith("_") and attr not in root.__dict__:
                root.__dict__[attr] = mod  # `pypto._utils.ceildiv`: the wheel's __init__ imports it
        if not isinstance(mod, types.ModuleType):
            continue
        # `tensor=Tensor` is the root's alias of a class the module defines, not one of the module's names
        for item in " ".join(table.get(name, "") for table in tables).split():
            obj = root.__dict__.get(item) if "." not in item and "=" not in item else None
            if obj is not None and item not in mod.__dict__ and not isinstance(obj, types.ModuleType):
                mod.__dict__[item] = obj
    op = mods.get("pypto.op")
    if op is not None and not hasattr(op, "__path__"):
        op.__path__ = []  # a package, as the wheel's pypto/op/
    return out


WHEEL_ALIASES: dict[str, types.ModuleType] = wheel_aliases(_MODULES)
"""The wheel's module names for the emulator's modules (`wheel_aliases`)"""


def _surface() -> frozenset[str]:
    names = {n for n in _MODULES["pypto"].__dict__ if not n.startswith("_")} | set(_HEAD_NS)
    for sub in _SUBMODULES:
        names |= {f"{sub}.{n}" for n in _MODULES[f"pypto.{sub}"].__dict__ if not n.startswith("_")}
    names.add("platform.npuarch")
    return frozenset(names)


API_SURFACE: frozenset[str] = _surface()


def install() -> types.ModuleType:
    """Make ``import pypto`` (and its submodules) resolve to the emulator in this process (idempotent)."""
    for name, mod in _MODULES.items():
        sys.modules[name] = mod
    for name, mod in WHEEL_ALIASES.items():
        sys.modules.setdefault(name, mod)
    # `importlib.util.find_spec("pypto")` raised "pypto.__spec__ is None" (s49, _module_specs)
    give_specs({name: sys.modules[name] for name in (*_MODULES, *WHEEL_ALIASES)})
    return _MODULES["pypto"]
