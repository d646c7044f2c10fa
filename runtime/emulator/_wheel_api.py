"""The rest of the real pypto 0.2.0 wheel's public names: helpers, aliases, pass configuration, the submodules.

Why: a kernel or test script written against the real wheel may use any public name of it, and a name the emulated
``pypto`` did not have failed with a bare ``AttributeError`` - indistinguishable from a typo, and the end of the run.
``dir(pypto)`` of the installed 0.2.0 wheel held 59 names the emulated module lacked (measured 3 Dec 2026): the tensor
op ``ceil_div`` (in `_ops_math`), small helpers (``to_sym``, ``convert_to_element``, ``get_scatter_mode``), aliases
(``SymInt``, ``element``, ``symbolic_scalar``), the pass-configuration API, the typing names its star imports
re-export, and the submodules (``pypto.op``, ``pypto.math`` ...). Each is here with the wheel's behaviour where
the emulator can have it; what it cannot (compile artefacts, the legacy ``from_torch`` flow, distributed shared
memory) is a name that raises `EmulatorUnsupported` with the reason when used, never a silent stand-in. The helpers
run on the host, outside any kernel: they raise the plain ``ValueError`` / ``TypeError`` the wheel raises (a script's
``except ValueError`` still catches them), not an `EmulatorError`.

Behaviour observed on the installed 0.2.0 wheel (``tests/emulator/test_wheel_api.py`` pins it): ``to_sym`` takes an
int or a SymbolicScalar, else ``ValueError("Invalid value type")``; ``convert_to_element`` is INT32 for ints in
int32 range, INT64 beyond, FP32 otherwise; the pass-configuration getters check ``default_value`` is a bool
(``TypeError``) and ``key`` a `PassConfigKey` (``ValueError``), ``get_pass_config`` answers ``default_value`` for a
path never set (the default configuration does not apply to it), ``get_pass_configs`` reads ``dumpGraph`` from the
path, else from the default configuration, with ``dumpPassTimeCost`` on and the other flags off.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import re
import struct
import sys
import types
import typing
from typing import Any

from runtime.emulator._enums import DataType, ScatterMode
from runtime.emulator._errors import EmulatorUnsupported
from runtime.emulator._location import user_location
from runtime.emulator._registry import unsupported_stub
from runtime.emulator._scalar import Element
from runtime.emulator._symbolic import SymbolicScalar

__all__ = ["NOT_EMULATED", "SUBMODULES", "TYPING_NAMES", "names", "not_emulated", "submodule", "unemulated_module"]

SymInt = typing.Union[int, SymbolicScalar]  # noqa: UP007 - the wheel's alias is this typing.Union object
"""``pypto.SymInt``: what a size may be (the wheel's ``Union[int, SymbolicScalar]``)"""


def to_sym(value: Any) -> SymbolicScalar:
    """An int or a SymbolicScalar as a SymbolicScalar (the wheel returns its C++ scalar; here the one class)."""
    if isinstance(value, SymbolicScalar):
        return value
    if isinstance(value, int):
        return SymbolicScalar(value)
    raise ValueError("Invalid value type")


def to_syms(value: Any) -> list[SymbolicScalar]:
    """`to_sym` of each element."""
    return [to_sym(v) for v in value]


def convert_to_element(value: Any) -> Element:
    """An Element of a Python number: INT32 for ints in int32 range, INT64 beyond, FP32 otherwise."""
    if isinstance(value, int):
        dt = DataType.DT_INT32 if -(2 ** 31) <= value <= 2 ** 31 - 1 else DataType.DT_INT64
        return Element(dt, int(value))
    return Element(DataType.DT_FP32, value)


def get_scatter_mode(reduce: str | None) -> ScatterMode:
    """The `ScatterMode` of a scatter's ``reduce`` argument."""
    if reduce is None:
        return ScatterMode.NONE
    if reduce == "add":
        return ScatterMode.ADD
    if reduce == "multiply":
        return ScatterMode.MULTIPLY
    raise ValueError("scatter reduce only support 'add', 'multiply'")


# ---- pass configuration (debug dumps of the compiler's passes: no effect on what a kernel computes) -------------

class PassConfigKey(enum.Enum):
    """The keys of the pass configuration (0.2.0 has one)."""

    KEY_DUMP_GRAPH = "dump_graph"


@dataclasses.dataclass(frozen=True)
class PassConfigs:
    """The flags of one pass (``get_pass_configs``); read-only, as the wheel's."""

    printGraph: bool = False  # noqa: N815 - the wheel's attribute names
    dumpGraph: bool = False  # noqa: N815
    dumpPassTimeCost: bool = True  # noqa: N815
    preCheck: bool = False  # noqa: N815
    postCheck: bool = False  # noqa: N815
    disablePass: bool = False  # noqa: N815
    healthCheck: bool = False  # noqa: N815


_DEFAULTS: dict[str, bool] = {PassConfigKey.KEY_DUMP_GRAPH.value: False}
_CONFIG: dict[tuple[str, str, str], bool] = {}


def _check_key(key: Any, value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"Expected boolean type, but received {type(value).__name__}")
    if not isinstance(key, PassConfigKey):
        raise ValueError(f"key must be a member of PassConfigKey, got {key}. ")


def _check_path(fn: str, *parts: Any) -> None:
    if not all(isinstance(p, str) for p in parts):
        raise TypeError(f"{fn}(): incompatible function arguments: strategy and identifier must be str, "
                       f"got {', '.join(type(p).__name__ for p in parts)}")


def get_pass_default_config(key: PassConfigKey, default_value: bool) -> bool:
    _check_key(key, default_value)
    return _DEFAULTS.get(key.value, default_value)


def set_pass_default_config(key: PassConfigKey, value: bool) -> None:
    _check_key(key, value)
    _DEFAULTS[key.value] = value


def get_pass_config(strategy: str, identifier: str, key: PassConfigKey, default_value: bool) -> bool:
    _check_key(key, default_value)
    _check_path("GetPassConfig", strategy, identifier)
    return _CONFIG.get((strategy, identifier, key.value), default_value)


def set_pass_config(strategy: str, identifier: str, key: PassConfigKey, value: bool) -> None:
    _check_key(key, value)
    _check_path("SetPassConfig", strategy, identifier)
    _CONFIG[(strategy, identifier, key.value)] = value


def get_pass_configs(strategy: str, identifier: str) -> PassConfigs:
    _check_path("GetPassConfigs", strategy, identifier)
    k = PassConfigKey.KEY_DUMP_GRAPH.value
    return PassConfigs(dumpGraph=_CONFIG.get((strategy, identifier, k), _DEFAULTS[k]))


# ---- names the emulator does not have -----------------------------------------------------------------------------

NOT_EMULATED: dict[str, str] = {
    "from_torch": "the legacy (pre-jit) tensor conversion; a jit kernel takes torch or numpy arrays directly",
    "verify": "the legacy pass-verification flow (inputs converted with from_torch); call the jit kernel and compare "
              "its outputs instead",
    "Function": "a compiled function of the real compiler (the emulator compiles nothing)",
    "get_current_function": "a compiled function of the real compiler (the emulator compiles nothing)",
    "get_last_function": "a compiled function of the real compiler (the emulator compiles nothing)",
    "ConvParams": "convolution (experimental) is not emulated",
    "ConvTile": "convolution (experimental) is not emulated",
    "op_wrapper": "the wheel's internal op decorator",
    "experimental.nop": "an undocumented experimental op",
    "experimental.shmem_load": "distributed shared memory is not emulated",
    "experimental.shmem_store": "distributed shared memory is not emulated",
    "experimental.ShmemTensor": "distributed shared memory is not emulated",
}
"""name (``sub.name`` in a submodule) -> why using it raises `EmulatorUnsupported`"""

_NOT_EMULATED_MODULES: dict[str, str] = {
    "distributed": "distributed shared memory (shmem) is not emulated",
    "pypto_impl": "the wheel's C++ extension module",
    "frontend.parser": "the real compiler's parser (the emulator traces the body itself)",
}


def bare_or_called(decorator: Any) -> Any:
    """``@deco`` and ``@deco()`` both: the wheel's ``pypto.frontend.function(func=None)`` "allows both @function and
    @function() syntax" (its docstring; s46: ``@pypto.frontend.function()`` was a TypeError here, missing 'func')."""

    @functools.wraps(decorator)
    def wrapper(func: Any = None) -> Any:
        return decorator if func is None else decorator(func)

    return wrapper


def not_emulated(name: str) -> Any:
    """A callable for ``pypto.<name>`` that raises `EmulatorUnsupported` naming it and the reason."""
    return unsupported_stub(name, NOT_EMULATED[name])


class _Unemulated(types.ModuleType):
    """A submodule of the wheel the emulator does not have: any attribute raises `EmulatorUnsupported`."""

    def __init__(self, name: str, why: str) -> None:
        super().__init__(f"pypto.{name}")
        self.__dict__["_why"] = why

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        f, ln = user_location()
        raise EmulatorUnsupported("EMU_UNSUPPORTED", f"{self.__name__}.{attr}: {self.__name__} is not supported by "
                                  f"the emulator: {self.__dict__['_why']}", file=f, line=ln, op=attr)


# ---- typing names and modules the wheel's star imports re-export ------------------------------------------------

TYPING_NAMES: dict[str, Any] = {
    "Any": typing.Any, "Dict": typing.Dict, "List": typing.List, "Optional": typing.Optional,  # noqa: UP006
    "Sequence": typing.Sequence, "Tuple": typing.Tuple, "Type": typing.Type, "Union": typing.Union,  # noqa: UP006
    "dataclass": dataclasses.dataclass, "overload": typing.overload, "wraps": functools.wraps,
    "enum": enum, "re": re, "sys": sys, "struct": struct,
}
"""``pypto.Optional`` and the like: the same objects (``pypto.torch`` is imported on first use, `_module`)"""


# ---- the submodules: each names what the wheel's has, from the emulated root ------------------------------------

SUBMODULES: dict[str, tuple[str, ...]] = {
    "comparison": ("Element", "OpType", "Optional", "OutType", "Tensor", "Tuple", "Union", "argsort", "eq", "ge",
                   "greater", "gt", "le", "lt", "mrgsort", "ne", "op_wrapper", "pypto_impl", "sort32", "topk"),
    "config": ("CompStage", "ConfigScope", "ConvTile", "CubeTile", "Dict", "List", "Optional", "Union", "enum",
               "get_codegen_options", "get_current_scope", "get_debug_options", "get_global_config",
               "get_host_options", "get_options_tree", "get_pass_options", "get_verify_options", "options",
               "pypto_impl", "reset_options", "set_codegen_options", "set_debug_options", "set_global_config",
               "set_host_options", "set_options", "set_pass_options", "set_print_options", "set_semantic_label",
               "set_verify_options", "sys", "wraps"),
    "converter": ("DataType", "List", "Optional", "Tensor", "TileOpFormat", "from_torch", "wraps"),
    "cost_model": ("List", "from_torch", "overload", "pypto_impl", "torch"),
    "creation": ("DataType", "Element", "List", "Optional", "Sequence", "SymbolicScalar", "Tensor", "Union", "arange",
                 "convert_to_element", "full", "ones", "op_wrapper", "overload", "pypto_impl", "to_syms", "zeros"),
    "functions": ("Function", "List", "Optional", "get_current_function", "get_last_function", "pypto_impl"),
    "indexing": ("Element", "ScatterMode", "Tensor", "Union", "gather", "gathermask", "get_scatter_mode", "index_add",
                 "index_add_", "index_put_", "index_select", "op_wrapper", "pypto_impl", "scatter", "scatter_",
                 "scatter_update"),
    "joining": ("List", "Tensor", "concat", "op_wrapper", "pypto_impl"),
    "math": ("DataType", "Element", "List", "Optional", "SymInt", "SymbolicScalar", "Tensor", "Tuple", "Union", "abs",
             "add", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift",
             "bitwise_xor", "cbrt", "ceil", "ceil_div", "clip", "copysign", "cumsum", "div", "exp", "exp2", "expm1",
             "floor", "fmod", "gcd", "hypot", "isfinite", "log", "log10", "log1p", "log2", "logical_and",
             "logical_not", "lrelu", "mul", "neg", "op_wrapper", "overload", "pow", "prelu", "pypto_impl",
             "reciprocal", "relu", "remainder", "round", "rsqrt", "sign", "signbit", "sqrt", "sub", "tril", "triu",
             "trunc", "var"),
    "mutating": ("CastMode", "DataType", "List", "Optional", "SaturationMode", "SymbolicScalar", "Tensor", "Union",
                 "cast", "expand_clone", "op_wrapper", "pypto_impl", "transpose"),
    "op": ("Any", "CastMode", "ConvParams", "DataType", "Element", "List", "OpType", "Optional", "OutType",
           "SaturationMode", "ScatterMode", "Sequence", "SymInt", "SymbolicScalar", "Tensor", "Tuple", "Type",
           "Union", "abs", "add", "amax", "amin", "arange", "argsort", "bitwise_and", "bitwise_left_shift",
           "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "cast", "cbrt", "ceil", "ceil_div",
           "clip", "comparison", "concat", "conv", "convert_to_element", "copysign", "creation", "cumsum",
           "dataclass", "distributed", "div", "eq", "exp", "exp2", "expand_clone", "expand_exp_dif", "expm1",
           "fillpad", "floor", "fmod", "full", "gather", "gathermask", "gcd", "ge", "get_scatter_mode", "greater",
           "gt", "hypot", "index_add", "index_add_", "index_put_", "index_select", "indexing", "isfinite", "joining",
           "le", "log", "log10", "log1p", "log2", "logical_and", "logical_not", "lrelu", "lt", "math", "matmul",
           "maximum", "minimum", "mrgsort", "mul", "mutating", "ne", "neg", "one_hot", "ones", "op_wrapper", "other",
           "overload", "pad", "pass_verify_print", "pass_verify_save", "pow", "prelu", "prod", "pypto_impl", "re",
           "reciprocal", "reduction", "relu", "remainder", "round", "rsqrt", "scaled_mm", "scatter", "scatter_",
           "scatter_update", "sign", "signbit", "sort32", "sqrt", "struct", "sub", "sum", "to_sym", "to_syms", "topk",
           "transpose", "tril", "triu", "trunc", "var", "verify", "where", "zeros"),
    "operation": ("DataType", "List", "Optional", "Sequence", "SymbolicScalar", "Tensor", "Tuple", "Union",
                  "assemble", "clone", "max", "min", "op_wrapper", "overload", "pypto_impl", "reshape", "to_syms",
                  "unsqueeze", "view"),
    "other": ("Element", "List", "Sequence", "Tensor", "Union", "expand_exp_dif", "fillpad", "one_hot", "op_wrapper",
              "pad", "pypto_impl", "where"),
    "pass_config": ("PassConfigKey", "PassConfigs", "get_pass_config", "get_pass_configs", "get_pass_default_config",
                    "pypto_impl", "set_pass_config", "set_pass_default_config"),
    "reduction": ("Element", "Tensor", "Union", "amax", "amin", "maximum", "minimum", "op_wrapper", "prod",
                  "pypto_impl", "sum"),
    "runtime": ("List", "RunMode", "from_torch", "pypto_impl", "set_verify_golden_data", "torch", "verify"),
}
"""submodule -> the names its 0.2.0 counterpart has (``dir()`` of the installed wheel; each is also a top-level name)"""


def names() -> dict[str, Any]:
    """The names this module adds to the emulated ``pypto`` (the root of it)."""
    ns: dict[str, Any] = {
        "SymInt": SymInt, "to_sym": to_sym, "to_syms": to_syms, "convert_to_element": convert_to_element,
        "get_scatter_mode": get_scatter_mode, "element": Element, "symbolic_scalar": SymbolicScalar,
        "PassConfigKey": PassConfigKey, "PassConfigs": PassConfigs,
        "get_pass_default_config": get_pass_default_config, "set_pass_default_config": set_pass_default_config,
        "get_pass_config": get_pass_config, "set_pass_config": set_pass_config, "get_pass_configs": get_pass_configs,
    }
    ns.update(TYPING_NAMES)
    for name in NOT_EMULATED:
        if "." not in name:
            ns[name] = not_emulated(name)
    for name in _NOT_EMULATED_MODULES:
        if "." not in name:
            ns[name] = unemulated_module(name)
    return ns


def unemulated_module(name: str) -> types.ModuleType:
    """``pypto.<name>``, a submodule of the wheel the emulator does not have (`_NOT_EMULATED_MODULES`)."""
    return _Unemulated(name, _NOT_EMULATED_MODULES[name])


def submodule(name: str, root: types.ModuleType) -> types.ModuleType:
    """``pypto.<name>``: a module holding the root's objects under the names the wheel's submodule has (a name the
    root resolves on first use, ``torch``, is looked up there then)."""
    mod = types.ModuleType(f"pypto.{name}")
    own = frozenset(SUBMODULES[name])
    mod.__dict__.update({n: root.__dict__[n] for n in own if n in root.__dict__})

    def getattr_(attr: str) -> Any:
        if attr in own:
            return getattr(root, attr)
        raise AttributeError(f"module 'pypto.{name}' has no attribute '{attr}'")

    mod.__dict__["__getattr__"] = getattr_
    return mod
