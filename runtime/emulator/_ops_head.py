"""HEAD-only in-place writes: ``pypto.atomic_add`` and ``pypto.axpy_`` (spec §4.3), composed from recorded ops.

Why: the s45 API audit (bench/api_audit.py) found both named in the spec's in-place family and not emulated -
``atomic_add`` raised ``EMU_UNSUPPORTED`` and ``axpy_`` was an ``AttributeError`` of the module - so a HEAD operator
that accumulates partial results into a global output (split-K, MoE combine, gradient accumulation) stopped at its
first call. Semantics, from the spec (HEAD docs; no wheel has them, so nothing here is checked against a real run):

* ``atomic_add(src, offsets, dst)``: ``dst[offsets ...] += src`` over ``src``'s valid region; no return value. The
  device accumulates in the write unit, so concurrent writers to one window add up; the emulator runs iterations
  in order, and an in-order read-add-write is the same sum. Recorded as ``view`` of ``dst`` + ``add`` + ``assemble``
  into ``dst`` - the ``add`` rounds once to ``dst``'s dtype, as an accumulating write of that dtype does. The
  ``add`` needs a vector tile, as every recorded vector op does (``F21004`` otherwise, naming ``ATOMIC_ADD``).
* ``axpy_(y, x, alpha)``: ``y = y + alpha * x`` in place, returns ``y``; recorded as ``y.move(add(y, x,
  alpha=alpha))`` (the emulator's ``add`` with ``alpha``: the product and the sum each rounded to the dtype - a
  fused device instruction may round once; unverified).

Both exist only under ``compat="head"`` (``_module.HEAD_ONLY``), as the 0.2.0 wheel has neither.
"""

from __future__ import annotations

from typing import Any

from runtime.emulator import _ops_core as core
from runtime.emulator import _ops_math as math_ops
from runtime.emulator._registry import op
from runtime.emulator._symbolic import is_symbolic
from runtime.emulator._tensor import Tensor
from runtime.emulator._trace import require_tracer

__all__ = ["atomic_add", "axpy_"]


@op("atomic_add", method=False)
def atomic_add(src: Any, offsets: Any, dst: Any) -> None:
    """``dst[offsets ...] += src`` (valid region of ``src``), in place."""
    tr = require_tracer("atomic_add")
    s = core.reader(tr, src, "atomic_add")
    if not isinstance(dst, Tensor) or dst.key < 0:
        raise tr.pyerror("TypeError", "atomic_add: destination must be a pypto.Tensor", op="atomic_add")
    if not tr.scopes[-1]["vec_tile"]:
        raise tr.error("F21004", "op [ATOMIC_ADD]tile shape not set (call pypto.set_vec_tile_shapes before "
                       "pypto.atomic_add)", op="atomic_add")
    shape = list(s.shape)
    if any(is_symbolic(d) for d in shape):
        raise tr.pyerror("TypeError", f"atomic_add: the source shape {shape} must be Python ints (a view of the "
                         "destination is taken at it)", op="atomic_add")
    if not isinstance(offsets, list | tuple) or len(offsets) != dst.dim:
        raise tr.pyerror("ValueError", f"atomic_add: offsets {offsets!r} must be a list of {dst.dim} values",
                         op="atomic_add")
    window = core.view(dst, shape, list(offsets), valid_shape=s.valid_shape)
    core.assemble(math_ops.add(window, s), list(offsets), dst)


@op("axpy_", method=False)
def axpy_(y: Any, x: Any, alpha: Any = 1.0) -> Tensor:
    """``y = y + alpha * x`` in place; returns ``y``."""
    tr = require_tracer("axpy_")
    if not isinstance(y, Tensor) or y.key < 0:
        raise tr.pyerror("TypeError", "axpy_: y must be a pypto.Tensor", op="axpy_")
    core.move(y, math_ops.add(y, x, alpha=alpha))
    return y
