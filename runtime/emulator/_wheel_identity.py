"""The 0.2.0 wheel's names for its own functions and classes, given to the emulator's objects that stand for them.

Why: a kernel must not be able to tell the emulator from the device. ``str(pypto.Tensor)`` said
``<class 'runtime.emulator._tensor.Tensor'>``, ``pypto.min.__name__`` was ``sym_min`` and ``repr(pypto)`` had no
file: a wrapper that checks one of them runs a right kernel under verification and another on the NPU (red-team
candidates of session 16). `apply` gives every public top-level function and class, and every ``Tensor`` method, the
wheel's ``__module__``/``__qualname__``/``__name__``; `_module` gives the modules their file. Only the emulator's own
objects are renamed (re-exported library objects are the same objects on both sides). What this cannot hide (a
type's metaclass, members the wheel lacks, behaviour) lint refuses to look at (PF02's introspection rule).

``IDENTITY`` maps the wheel's module to its names; ``name=qualname`` where the qualname is not the name (methods are
``Tensor.x``, qualname ``Tensor.x``). Regenerate: ``python tests/emulator/data/collect_wheel_identity.py`` with the
wheel installed (names only, no vendor code).
"""

from __future__ import annotations

import sysconfig
import types
from pathlib import Path
from typing import Any

__all__ = ["IDENTITY", "MODULE_FILES", "REEXPORTS", "apply", "identities", "place"]

IDENTITY: dict[str, str] = {
    "dataclasses": "dataclass",
    "functools": "wraps",
    "pypto._controller": (
        "cond function get_conv_tile_shapes get_cube_tile_shapes get_vec_tile_shapes is_loop_begin "
        "is_loop_end loop loop_unroll set_conv_tile_shapes set_cube_tile_shapes set_matrix_size "
        "set_vec_tile_shapes"
    ),
    "pypto._element": "Element element=Element",
    "pypto._op_wrapper": "op_wrapper",
    "pypto._utils": "bytes_of ceildiv to_sym to_syms",
    "pypto.config": (
        "CompStage ConfigScope ConvTile CubeTile get_codegen_options get_current_scope "
        "get_debug_options get_global_config get_host_options get_options_tree get_pass_options "
        "get_verify_options options reset_options set_codegen_options set_debug_options "
        "set_global_config set_host_options set_options set_pass_options set_print_options "
        "set_semantic_label set_verify_options"
    ),
    "pypto.converter": "from_torch",
    "pypto.enum": "StatusType",
    "pypto.functions": "Function get_current_function get_last_function",
    "pypto.op.comparison": "argsort eq ge greater gt le lt mrgsort ne sort32 topk",
    "pypto.op.conv": "ConvParams conv",
    "pypto.op.creation": "arange convert_to_element full ones zeros",
    "pypto.op.indexing": (
        "gather gathermask get_scatter_mode index_add index_add_ index_put_ index_select scatter "
        "scatter_ scatter_update"
    ),
    "pypto.op.joining": "concat",
    "pypto.op.math": (
        "abs add bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift "
        "bitwise_xor cbrt ceil ceil_div clip copysign cumsum div exp exp2 expm1 floor fmod gcd "
        "hypot isfinite log log10 log1p log2 logical_and logical_not lrelu mul neg pow prelu "
        "reciprocal relu remainder round rsqrt sign signbit sqrt sub tril triu trunc var"
    ),
    "pypto.op.matmul": "matmul scaled_mm",
    "pypto.op.mutating": "cast expand_clone transpose",
    "pypto.op.other": "expand_exp_dif fillpad one_hot pad where",
    "pypto.op.reduction": "amax amin maximum minimum prod sum",
    "pypto.op.verify": "pass_verify_print pass_verify_save",
    "pypto.operation": "assemble clone max min reshape unsqueeze view",
    "pypto.operator": "cos rms_norm sigmoid sin softmax",
    "pypto.pass_config": (
        "PassConfigKey PassConfigs get_pass_config get_pass_configs get_pass_default_config "
        "set_pass_config set_pass_default_config"
    ),
    "pypto.pypto_impl": (
        "AtomicType CachePolicy CastMode DataType OpType OutType ReLuType ReduceMode SaturationMode "
        "ScatterMode TileOpFormat TransMode"
    ),
    "pypto.runtime": "RunMode set_verify_golden_data verify",
    "pypto.symbolic_scalar": "SymbolicScalar symbolic_scalar=SymbolicScalar",
    "pypto.tensor": (
        "Tensor Tensor.add Tensor.amax Tensor.amin Tensor.assemble Tensor.base Tensor.ceil "
        "Tensor.clone Tensor.cos Tensor.cumsum Tensor.div Tensor.exp Tensor.exp2 "
        "Tensor.expand_clone Tensor.expm1 Tensor.fill_ Tensor.fillpad Tensor.floor Tensor.fmod "
        "Tensor.gather Tensor.gathermask Tensor.gcd Tensor.get_cache_policy Tensor.greater "
        "Tensor.hypot Tensor.index_add Tensor.index_add_ Tensor.log Tensor.log10 Tensor.log1p "
        "Tensor.log2 Tensor.logical_not Tensor.lrelu Tensor.matmul Tensor.maximum Tensor.move "
        "Tensor.mrgsort Tensor.mul Tensor.pad Tensor.prelu Tensor.reciprocal Tensor.relu "
        "Tensor.reshape Tensor.round Tensor.rsqrt Tensor.scatter Tensor.scatter_ "
        "Tensor.scatter_update Tensor.set_cache_policy Tensor.sigmoid Tensor.sign Tensor.signbit "
        "Tensor.sin Tensor.softmax Tensor.sort32 Tensor.sqrt Tensor.sub Tensor.sum Tensor.to_tensor "
        "Tensor.topk Tensor.transpose Tensor.tril Tensor.tril_ Tensor.triu Tensor.triu_ "
        "Tensor.trunc Tensor.unsqueeze Tensor.var Tensor.view Tensor.where tensor=Tensor"
    ),
    "typing": "Any overload",
}

MODULE_FILES: dict[str, tuple[str, str]] = {
    "": ("pypto", "__init__.py"),
    "_controller": ("pypto._controller", "_controller.py"),
    "_element": ("pypto._element", "_element.py"),
    "_op_wrapper": ("pypto._op_wrapper", "_op_wrapper.py"),
    "_utils": ("pypto._utils", "_utils.py"),
    "comparison": ("pypto.op.comparison", "op/comparison.py"),
    "config": ("pypto.config", "config.py"),
    "converter": ("pypto.converter", "converter.py"),
    "cost_model": ("pypto.cost_model", "cost_model.py"),
    "creation": ("pypto.op.creation", "op/creation.py"),
    "distributed": ("pypto.op.distributed", "op/distributed.py"),
    "experimental": ("pypto.experimental", "experimental.py"),
    "frontend": ("pypto.frontend", "frontend/__init__.py"),
    "functions": ("pypto.functions", "functions.py"),
    "indexing": ("pypto.op.indexing", "op/indexing.py"),
    "joining": ("pypto.op.joining", "op/joining.py"),
    "math": ("pypto.op.math", "op/math.py"),
    "mutating": ("pypto.op.mutating", "op/mutating.py"),
    "op": ("pypto.op", "op/__init__.py"),
    "operation": ("pypto.operation", "operation.py"),
    "operator": ("pypto.operator", "operator.py"),
    "other": ("pypto.op.other", "op/other.py"),
    "pass_config": ("pypto.pass_config", "pass_config.py"),
    "pypto_impl": ("pypto.pypto_impl", "pypto_impl" + str(sysconfig.get_config_var("EXT_SUFFIX") or ".so")),
    "reduction": ("pypto.op.reduction", "op/reduction.py"),
    "runtime": ("pypto.runtime", "runtime.py"),
}
"""attribute of ``pypto`` ("" for ``pypto`` itself) -> (the wheel module's ``__name__``, its file under ``pypto/``)"""


REEXPORTS: dict[str, str] = {
    "pypto._controller": (
        "AtomicType CachePolicy CastMode ConvTile CubeTile DT_BF16 DT_BOOL DT_BOTTOM DT_DOUBLE DT_FP16 DT_FP32 "
        "DT_FP4_E1M2X2 DT_FP4_E2M1X2 DT_FP8 DT_FP8E4M3 DT_FP8E5M2 DT_FP8E8M0 DT_HF4 DT_HF8 DT_INT16 DT_INT32 "
        "DT_INT4 DT_INT64 DT_INT8 DT_UINT16 DT_UINT32 DT_UINT64 DT_UINT8 DYN DYNAMIC DataType OpType OutType "
        "ReLuType ReduceMode STATIC SaturationMode ScatterMode StatusType SymbolicScalar Tensor TileOpFormat "
        "TransMode cond function get_conv_tile_shapes get_cube_tile_shapes get_current_scope get_vec_tile_shapes "
        "is_loop_begin is_loop_end loop loop_unroll set_conv_tile_shapes set_cube_tile_shapes set_matrix_size "
        "set_vec_tile_shapes to_sym"
    ),
    "pypto._element": "Element",
    "pypto._op_wrapper": "Element SymbolicScalar Tensor op_wrapper",
    "pypto._utils": "DataType SymbolicScalar bytes_of ceildiv to_sym to_syms",
    "pypto.config": (
        "CompStage ConfigScope ConvTile CubeTile get_codegen_options get_current_scope get_debug_options "
        "get_global_config get_host_options get_options_tree get_pass_options get_verify_options options "
        "reset_options set_codegen_options set_debug_options set_global_config set_host_options set_options "
        "set_pass_options set_print_options set_semantic_label set_verify_options"
    ),
    "pypto.converter": "DataType Tensor TileOpFormat from_torch",
    "pypto.cost_model": "from_torch",
    "pypto.enum": (
        "AtomicType CachePolicy CastMode DT_BF16 DT_BOOL DT_BOTTOM DT_DOUBLE DT_FP16 DT_FP32 DT_FP4_E1M2X2 "
        "DT_FP4_E2M1X2 DT_FP8 DT_FP8E4M3 DT_FP8E5M2 DT_FP8E8M0 DT_HF4 DT_HF8 DT_INT16 DT_INT32 DT_INT4 DT_INT64 "
        "DT_INT8 DT_UINT16 DT_UINT32 DT_UINT64 DT_UINT8 DYN DYNAMIC DataType OpType OutType ReLuType ReduceMode "
        "STATIC SaturationMode ScatterMode StatusType TileOpFormat TransMode"
    ),
    "pypto.experimental": "AtomicType SymbolicScalar Tensor get_current_scope op_wrapper set_options to_syms",
    "pypto.functions": "Function get_current_function get_last_function",
    "pypto.op": (
        "CastMode ConvParams DataType Element OpType OutType SaturationMode ScatterMode SymbolicScalar Tensor abs "
        "add amax amin arange argsort bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift "
        "bitwise_xor cast cbrt ceil ceil_div clip concat conv convert_to_element copysign cumsum div eq exp exp2 "
        "expand_clone expand_exp_dif expm1 fillpad floor fmod full gather gathermask gcd ge get_scatter_mode "
        "greater gt hypot index_add index_add_ index_put_ index_select isfinite le log log10 log1p log2 "
        "logical_and logical_not lrelu lt matmul maximum minimum mrgsort mul ne neg one_hot ones op_wrapper pad "
        "pass_verify_print pass_verify_save pow prelu prod reciprocal relu remainder round rsqrt scaled_mm "
        "scatter scatter_ scatter_update sign signbit sort32 sqrt sub sum to_sym to_syms topk transpose tril triu "
        "trunc var where zeros"
    ),
    "pypto.op.comparison": (
        "Element OpType OutType Tensor argsort eq ge greater gt le lt mrgsort ne op_wrapper sort32 topk"
    ),
    "pypto.op.conv": "ConvParams DataType SymbolicScalar Tensor conv op_wrapper",
    "pypto.op.creation": (
        "DataType Element SymbolicScalar Tensor arange convert_to_element full ones op_wrapper to_syms zeros"
    ),
    "pypto.op.distributed": "AtomicType DataType OpType SymbolicScalar Tensor loop op_wrapper to_syms",
    "pypto.op.indexing": (
        "Element ScatterMode Tensor gather gathermask get_scatter_mode index_add index_add_ index_put_ "
        "index_select op_wrapper scatter scatter_ scatter_update"
    ),
    "pypto.op.joining": "Tensor concat op_wrapper",
    "pypto.op.math": (
        "DataType Element SymbolicScalar Tensor abs add bitwise_and bitwise_left_shift bitwise_not bitwise_or "
        "bitwise_right_shift bitwise_xor cbrt ceil ceil_div clip copysign cumsum div exp exp2 expm1 floor fmod "
        "gcd hypot isfinite log log10 log1p log2 logical_and logical_not lrelu mul neg op_wrapper pow prelu "
        "reciprocal relu remainder round rsqrt sign signbit sqrt sub tril triu trunc var"
    ),
    "pypto.op.matmul": "DataType SymbolicScalar Tensor matmul op_wrapper scaled_mm",
    "pypto.op.mutating": (
        "CastMode DataType SaturationMode SymbolicScalar Tensor cast expand_clone op_wrapper transpose"
    ),
    "pypto.op.other": "Element Tensor expand_exp_dif fillpad one_hot op_wrapper pad where",
    "pypto.op.reduction": "Element Tensor amax amin maximum minimum op_wrapper prod sum",
    "pypto.op.verify": "SymbolicScalar Tensor op_wrapper pass_verify_print pass_verify_save to_sym",
    "pypto.operation": (
        "DataType SymbolicScalar Tensor assemble clone max min op_wrapper reshape to_syms unsqueeze view"
    ),
    "pypto.operator": "Tensor cos rms_norm sigmoid sin softmax",
    "pypto.pass_config": (
        "PassConfigKey PassConfigs get_pass_config get_pass_configs get_pass_default_config set_pass_config "
        "set_pass_default_config"
    ),
    "pypto.platform": "platform",
    "pypto.runtime": "RunMode from_torch set_verify_golden_data verify",
    "pypto.symbolic_scalar": "SymbolicScalar",
    "pypto.tensor": (
        "AtomicType CachePolicy CastMode DT_BF16 DT_BOOL DT_BOTTOM DT_DOUBLE DT_FP16 DT_FP32 DT_FP4_E1M2X2 "
        "DT_FP4_E2M1X2 DT_FP8 DT_FP8E4M3 DT_FP8E5M2 DT_FP8E8M0 DT_HF4 DT_HF8 DT_INT16 DT_INT32 DT_INT4 DT_INT64 "
        "DT_INT8 DT_UINT16 DT_UINT32 DT_UINT64 DT_UINT8 DYN DYNAMIC DataType Element OpType OutType ReLuType "
        "ReduceMode STATIC SaturationMode ScatterMode StatusType SymbolicScalar Tensor TileOpFormat TransMode "
        "to_sym to_syms"
    ),
}
"""The wheel's module -> the names it shares with ``pypto`` itself (what it defines and what it re-exports:
``pypto.enum`` holds ``DataType`` and the ``DT_*`` constants, ``pypto.tensor`` the enums and ``SymbolicScalar``;
library names such as ``typing.List`` left out). A script may import any of them from that module (``from
pypto.enum import DataType, DT_FP32``); `_module.wheel_aliases` gives the emulator's modules the root's objects of
these names. Regenerate: ``python tests/emulator/data/collect_wheel_reexports.py`` with the wheel installed."""


def identities() -> dict[str, tuple[str, str]]:
    """public name (``add``, ``Tensor.add``) -> (wheel module, wheel qualname)"""
    out: dict[str, tuple[str, str]] = {}
    for module, names in IDENTITY.items():
        for item in names.split():
            name, _, qual = item.partition("=")
            out[name] = (module, qual or name)
    return out


def _ours(obj: Any) -> bool:
    return isinstance(obj, type | types.FunctionType) and str(getattr(obj, "__module__", "")).startswith("runtime.")


def apply(root: Any) -> None:
    """Rename the emulator's objects reached from the ``pypto`` module ``root`` (top-level names first: an object
    that also serves as a ``Tensor`` method keeps the top-level name's identity)."""
    done: set[int] = set()
    tensor = root.__dict__.get("Tensor")
    for name, (module, qual) in identities().items():
        owner, _, attr = name.rpartition(".")
        holder = root if not owner else tensor
        obj = (holder.__dict__ if isinstance(holder, types.ModuleType) else vars(holder)).get(attr) \
            if holder is not None else None
        if obj is None and holder is not None and not isinstance(holder, types.ModuleType):
            obj = getattr(holder, attr, None)
        if isinstance(obj, staticmethod | classmethod):
            obj = obj.__func__
        if obj is None or not _ours(obj) or id(obj) in done:
            continue
        done.add(id(obj))
        obj.__module__ = module
        obj.__qualname__ = qual
        obj.__name__ = qual.rpartition(".")[2]


def place(root: types.ModuleType) -> None:
    """Give ``pypto`` and its submodules the wheel's module names and files (under this interpreter's
    site-packages, where ``pip install pypto`` puts them): ``repr(pypto)`` is ``<module 'pypto' from '...'>`` as on
    the device's host. Reading ``__file__`` is lint's PF02; what the file holds is never read."""
    base = Path(sysconfig.get_path("purelib")) / "pypto"
    for attr, (name, rel) in MODULE_FILES.items():
        mod = root if not attr else root.__dict__.get(attr)
        if isinstance(mod, types.ModuleType) and (mod is root or mod.__name__.startswith("pypto")):
            mod.__name__ = name
            mod.__file__ = str(base / rel)
