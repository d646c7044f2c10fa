"""The PyPTO API surface that OL55 checks ``pypto.<name>`` against.

The authority is the emulator's ``runtime.emulator.API_SURFACE`` (the names the emulated ``pypto`` module
really offers). It is imported lazily, once; while the emulator does not export it yet (or fails to import),
the lint falls back to ``FALLBACK_SURFACE`` below, transcribed from spec/pypto-api.md (0.2.0 + HEAD names).
This is the only place the list lives.
"""

from __future__ import annotations

import logging
from functools import lru_cache

__all__ = ["FALLBACK_SURFACE", "api_surface"]

log = logging.getLogger(__name__)

_NAMES = """
frontend jit function experimental platform operator error
Tensor tensor DataType Element SymbolicScalar SymInt StatusType DYNAMIC DYN STATIC
DT_INT4 DT_INT8 DT_INT16 DT_INT32 DT_INT64 DT_FP8 DT_FP16 DT_FP32 DT_BF16 DT_HF4 DT_HF8 DT_UINT8 DT_UINT16
DT_UINT32 DT_UINT64 DT_BOOL DT_DOUBLE DT_FP8E5M2 DT_FP8E4M3 DT_FP8E8M0 DT_FP4_E2M1X2 DT_FP4_E1M2X2 DT_BOTTOM
bytes_of TileOpFormat CastMode SaturationMode OpType OutType ReLuType TransMode ScatterMode ReduceMode
AtomicType CachePolicy RunMode CompStage PrecisionType TopKAlgo LogBaseType DequantScaleRoundingMode
loop loop_unroll is_loop_begin is_loop_end cond min max ceildiv
view assemble reshape unsqueeze transpose permute concat clone expand_clone tril triu pad fillpad one_hot
gather index_select gathermask scatter scatter_ scatter_update index_add index_add_ index_put_ atomic_add axpy_
deinterleave interleave
add sub mul div floor_div remainder fmod pow maximum minimum clip hypot copysign prelu lrelu gcd ceil_div
bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift logical_and logical_not
abs neg exp exp2 expm1 log log1p log2 log10 sqrt rsqrt reciprocal sign signbit relu sigmoid round ceil floor
trunc cbrt isfinite isnan sin cos tan tanh sinh cosh asin acos atan atan2 asinh acosh atanh erf erfc
eq ne lt le gt ge greater where cast
sum amax amin prod var cumsum cumprod topk argsort argmax argmin sort32 mrgsort
softmax rms_norm expand_exp_dif online_softmax online_softmax_update
matmul scaled_mm conv quantize dequantize quant_mx
full zeros ones arange zeros_like ones_like full_like
set_vec_tile_shapes get_vec_tile_shapes set_cube_tile_shapes get_cube_tile_shapes CubeTile
set_conv_tile_shapes get_conv_tile_shapes set_matrix_size
options set_options get_current_scope reset_options get_options_tree set_global_config get_global_config
set_pass_options get_pass_options set_host_options set_codegen_options set_runtime_options set_verify_options
set_debug_options set_semantic_label set_print_options set_verify_golden_data pass_verify_print pass_verify_save
from_torch
frontend.jit frontend.function frontend.dynamic experimental.conv experimental.gather_in_l1
experimental.gather_in_ub experimental.get_operation_options experimental.set_operation_options
experimental.transposed_batchmatmul operator.cos operator.sin platform.npuarch
"""

FALLBACK_SURFACE: frozenset[str] = frozenset(_NAMES.split())


@lru_cache(maxsize=1)
def api_surface() -> tuple[frozenset[str], str]:
    """(names, source) where source is ``"emulator"`` or ``"fallback"``."""
    try:
        from runtime.emulator import API_SURFACE  # lazy: the emulator is optional for the lint

        names = frozenset(str(n) for n in API_SURFACE)
        if names:
            return names, "emulator"
    except Exception as exc:  # ImportError, or an emulator mid-edit: fall back, never crash the lint
        log.debug("runtime.emulator.API_SURFACE unavailable (%s); using the fallback list", exc)
    return FALLBACK_SURFACE, "fallback"
