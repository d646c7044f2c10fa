"""Buffer descriptors: how the device builds a kernel argument (or resolves an output) from trusted data only.

The candidate's process never hands the device numbers to compute with. For every kernel argument it sends a
*descriptor* - a small expression over things the device already holds - and the device evaluates it on its own
copies (:func:`build`). The grammar (JSON lists; ``dtype`` is a :mod:`runtime.dtypes` name):

``["in", i]``                                   wrapper input ``i`` of the current call (the sealed inputs)
``["buf", k]``                                  device buffer ``k`` of the current call (a kernel argument the
                                                device built earlier in this call; its bytes are what the kernel
                                                left there)
``["view", src, offset, shape, strides, dtype]``  a strided view of ``src``'s bytes (reshape, slice, transpose,
                                                permute, broadcast, dtype reinterpretation); offset and strides in
                                                bytes, non-negative, bounds-checked
``["copy", src]``                               a fresh contiguous copy (``.contiguous()``, ``.copy()``)
``["cast", src, dtype]``                        ``src.astype(dtype)``
``["pad", src, [[before, after], ...], value]``   ``np.pad`` with a constant (``value``: hex bytes of one element)
``["const", shape, dtype, value]``              a constant-filled allocation
``["uninit", shape, dtype]``                    an uninitialised allocation (:func:`uninit_array`: NaN for floats,
                                                integer / bool extremes mixed; the candidate's garbage is never used)

An *output* (never a kernel argument) may also be

``["join", shape, dtype, [[offset, shape, strides, src], ...]]``
                                                a new C-contiguous array assembled from pieces: each ``src`` is
                                                placed at a strided view (byte offset and strides) of it. Every
                                                piece must be what a kernel wrote, and the pieces must cover every
                                                element exactly once (:func:`build_join`): one kernel call writing
                                                ``y[:h]`` and ``y[h:]`` as two arguments returns ``y``.

Anything else, too deep, too large or out of bounds is a :class:`DescError` (one line; the verifier reports it
as FAIL_CHEAT naming the argument). ``cast``/``pad``/``const`` are allowed for kernel *inputs* (the wrapper may
lay out and pad its inputs); an *output* must be a view (or copy) of a buffer some kernel wrote
(:func:`kernel_written`), or one rounding or exactly widening cast of such a view (:func:`value_cast_source`).

Only numpy, ml_dtypes and :mod:`runtime.dtypes`: loaded by the device and by the sandboxed runner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime.dtypes import DTypeError, is_float_dtype, to_numpy

__all__ = ["MAX_DEPTH", "MAX_PIECES", "MAX_RANK", "Built", "DescError", "build", "build_join", "canonical_nans",
           "honest_cast", "kernel_written", "output_root", "signature", "value_cast_source", "write_only"]

MAX_DEPTH = 8
MAX_RANK = 8
MAX_PIECES = 256
"""Most pieces a ``join`` output may have (64 kernel calls of a few arguments each)."""
_KINDS = frozenset({"in", "buf", "view", "copy", "cast", "pad", "const", "uninit"})


class DescError(ValueError):
    """A descriptor the device refuses (malformed, out of bounds, over budget). ``str()`` is one line."""


@dataclass
class Built:
    """The result of :func:`build`."""

    array: np.ndarray
    root: int | None
    """The device buffer whose memory ``array`` is a writable view of (``buf`` through ``view`` nodes only),
    or None when ``array`` is new memory or a read-only view of the inputs."""
    inputs_only: bool
    """Built from wrapper inputs and constants only (no device buffer involved)."""
    host_layout: bool
    """Contains ``cast``/``pad``/``const``/``uninit``: fine for a kernel input, never for an output."""
    blank: bool = False
    """Only a fill (``const``/``uninit``, through views and copies): no data of anyone's in it."""


def _dtype(name: Any) -> np.dtype:
    if not isinstance(name, str):
        raise DescError(f"dtype must be a name, got {type(name).__name__}")
    try:
        return to_numpy(name)
    except DTypeError:
        raise DescError(f"unknown dtype {name[:20]!r}") from None


def _shape(value: Any, what: str = "shape") -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > MAX_RANK:
        raise DescError(f"{what} must be a list of at most {MAX_RANK} sizes")
    if not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 1 << 40 for d in value):
        raise DescError(f"{what} has a size that is not a non-negative int")
    return tuple(value)


def _value(hexed: Any, dtype: np.dtype) -> np.ndarray:
    if not isinstance(hexed, str) or len(hexed) != 2 * dtype.itemsize:
        raise DescError("constant value must be the hex bytes of one element")
    try:
        raw = bytes.fromhex(hexed)
    except ValueError:
        raise DescError("constant value is not hex") from None
    return np.frombuffer(raw, dtype=dtype)


def _count(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def build(desc: Any, inputs: list[np.ndarray], buffers: list[np.ndarray], roots: list[int],
          budget_bytes: int) -> Built:
    """Evaluate ``desc`` on trusted data.

    Args:
        desc: the descriptor (decoded JSON).
        inputs: the wrapper inputs of the current call (read-only views of the sealed memory).
        buffers: device buffers of the current call, by id.
        roots: ``roots[k]`` is the root buffer id whose memory ``buffers[k]`` views (``k`` itself for a root).
        budget_bytes: most bytes any node may allocate.

    Raises:
        DescError: anything the grammar does not allow.
    """
    return _build(desc, inputs, buffers, roots, budget_bytes, 0)


def _build(desc: Any, inputs: list[np.ndarray], buffers: list[np.ndarray], roots: list[int], budget: int,
           depth: int) -> Built:
    if depth > MAX_DEPTH:
        raise DescError(f"descriptor nested deeper than {MAX_DEPTH}")
    if not isinstance(desc, list) or not desc or desc[0] not in _KINDS:
        raise DescError(f"unknown descriptor {str(desc)[:40]}")
    kind, args = desc[0], desc[1:]

    def sub(i: int) -> Built:
        return _build(args[i], inputs, buffers, roots, budget, depth + 1)

    def nargs(n: int) -> None:
        if len(args) != n:
            raise DescError(f"`{kind}` takes {n} argument(s)")

    if kind in ("in", "buf"):
        nargs(1)
        idx = args[0]
        pool = inputs if kind == "in" else buffers
        if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < len(pool):
            raise DescError(f"no {'wrapper input' if kind == 'in' else 'device buffer'} {str(idx)[:20]}")
        if kind == "in":
            return Built(pool[idx], None, True, False)
        return Built(pool[idx], roots[idx], False, False)
    if kind == "view":
        nargs(5)
        src = sub(0)
        offset, shape, strides, dt = args[1], _shape(args[2]), _shape(args[3], "strides"), _dtype(args[4])
        if len(strides) != len(shape) or not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise DescError("view needs a non-negative offset and one stride per axis")
        base = src.array
        if not base.flags.c_contiguous:
            base = np.ascontiguousarray(base)
            src = Built(base, None, src.inputs_only, src.host_layout)
        nbytes = base.nbytes
        if _count(shape):
            last = offset + sum((d - 1) * s for d, s in zip(shape, strides, strict=True)) + dt.itemsize
            if last > nbytes:
                raise DescError(f"view reaches byte {last} of a {nbytes}-byte buffer")
        if not _count(shape):
            arr = np.zeros(shape, dt)
        else:
            try:  # numpy checks the bounds again; the memory stays base's (a view: writes reach the buffer)
                arr = np.ndarray(shape, dtype=dt, buffer=base, offset=offset, strides=strides)
            except (ValueError, TypeError) as exc:
                raise DescError(f"view not expressible: {str(exc)[:80]}") from None
        if arr.shape != shape:
            raise DescError("view shape does not match")
        return Built(arr, src.root, src.inputs_only, src.host_layout, src.blank)
    if kind == "copy":
        nargs(1)
        src = sub(0)
        if src.array.nbytes > budget:
            raise DescError("copy over the device budget")
        return Built(np.ascontiguousarray(src.array).copy(), None, src.inputs_only, src.host_layout, src.blank)
    if kind == "cast":
        nargs(2)
        src, dt = sub(0), _dtype(args[1])
        if src.array.size * dt.itemsize > budget:
            raise DescError("cast over the device budget")
        return Built(src.array.astype(dt), None, src.inputs_only, True)
    if kind == "pad":
        nargs(3)
        src = sub(0)
        widths = args[1]
        if not (isinstance(widths, list) and len(widths) == src.array.ndim and all(
                isinstance(w, list) and len(w) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                            and 0 <= v < 1 << 40 for v in w) for w in widths)):
            raise DescError("pad needs [before, after] per axis")
        shape = tuple(d + a + b for d, (a, b) in zip(src.array.shape, widths, strict=True))
        if _count(shape) * src.array.dtype.itemsize > budget:
            raise DescError("pad over the device budget")
        value = _value(args[2], src.array.dtype)
        out = np.full(shape, value[0], dtype=src.array.dtype)
        out[tuple(slice(a, a + d) for d, (a, _b) in zip(src.array.shape, widths, strict=True))] = src.array
        return Built(out, None, src.inputs_only, True)
    if kind == "const":
        nargs(3)
        shape, dt = _shape(args[0]), _dtype(args[1])
        if _count(shape) * dt.itemsize > budget:
            raise DescError("constant over the device budget")
        return Built(np.full(shape, _value(args[2], dt)[0], dtype=dt), None, True, True, True)
    nargs(2)  # uninit
    shape, dt = _shape(args[0]), _dtype(args[1])
    if _count(shape) * dt.itemsize > budget:
        raise DescError("allocation over the device budget")
    return Built(uninit_array(shape, dt), None, True, True, True)


def group_write_only(write_only: list[bool], alias: list[int | None]) -> list[bool]:
    """Per parameter, ``write_only`` with each alias group's first parameter (an alias group: arguments that are the
    same memory, `alias[i]` naming the first) write-only only if every parameter of the group is - one buffer is read
    if any of its parameters reads it (red team s31b: a write-only first parameter made the shared buffer
    "uninitialised" while its alias read the device's fill). Both sides of the device protocol use it."""
    out = list(write_only)
    for i, same in enumerate(alias):
        if same is not None:
            out[same] = out[same] and write_only[i]
    return out


def uninit_array(shape: tuple[int, ...], dt: np.dtype) -> np.ndarray:
    """What the device fills an uninitialised allocation with (the device builds it, the sandboxed child computes the
    same to digest a buffer as the device holds it): NaN for floats; for integers and booleans two extremes - the
    least and the largest integer (the largest and 0 unsigned), False and True - mixed along the flat index without a
    period (a golden-ratio sequence).

    Why not one value: an unwritten element is caught only where the fill differs from the golden. Red team s31c: with
    0, an int32 kernel that left unwritten the half of its ``torch.empty`` output where the golden is 0 passed (hence
    the least integer, which is also a golden's "masked" sentinel); red team s32: with False, a bool mask kernel that
    wrote only its True region passed. Mixed, a run of unwritten elements - a row, a column, a block - differs from
    any one golden value."""
    if is_float_dtype(dt):
        return np.full(shape, np.nan, dtype=dt)
    if dt.kind == "b":
        first, second = False, True
    elif dt.kind == "i":
        first, second = int(np.iinfo(dt).min), int(np.iinfo(dt).max)
    else:
        first, second = int(np.iinfo(dt).max), 0
    out = np.full(shape, first, dtype=dt)
    n = out.size
    if n:
        # which elements take the second value: the top bit of i * 2**32 / golden ratio (mod 2**32) - no period, so
        # no column of a row-major array holds one value only (red team s32b: alternating by parity, every even
        # column of an even-width bool output was False, and a kernel that never wrote column 0 passed)
        pick = (np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B9) & np.uint64(0xFFFFFFFF)) >> np.uint64(31)
        out.reshape(-1)[pick.astype(bool)] = second
    return out


def build_join(desc: Any, inputs: list[np.ndarray], buffers: list[np.ndarray], roots: list[int],
               allowed_roots: set[int], budget_bytes: int) -> np.ndarray:
    """Evaluate a ``join`` output descriptor: the union of several kernel-written pieces (see the module docstring).

    Why: an honest wrapper may let one kernel call write the halves of one allocation through two arguments
    (``kernel(x, y[:h], y[h:])``) and return the allocation (held-out false rejection A14). Each piece is held
    to the rule of a single output (it resolves through ``view``/``copy`` only to a buffer in ``allowed_roots``:
    written by a kernel in this call, or a fill no kernel wrote), and the pieces must cover every element of the
    result exactly once: a gap would be bytes nobody on the device produced (the child's host data), an overlap
    would let a later piece hide what a kernel wrote.

    Raises:
        DescError: malformed, over budget, a piece that is not kernel-written, a gap or an overlap.
    """
    if not (isinstance(desc, list) and len(desc) == 4 and desc[0] == "join"):
        raise DescError("join takes a shape, a dtype and a list of pieces")
    shape, dt, pieces = _shape(desc[1]), _dtype(desc[2]), desc[3]
    if not isinstance(pieces, list) or not 1 <= len(pieces) <= MAX_PIECES:
        raise DescError(f"join needs 1..{MAX_PIECES} pieces")
    nbytes = _count(shape) * dt.itemsize
    if nbytes > budget_bytes:
        raise DescError("join over the device budget")
    out = np.zeros(shape, dt)
    flat = out.reshape(-1).view(np.uint8)
    cover = np.zeros(nbytes, np.uint8)
    placed = 0
    for j, piece in enumerate(pieces):
        if not (isinstance(piece, list) and len(piece) == 4):
            raise DescError(f"join piece {j} is not [offset, shape, strides, src]")
        offset, pshape, pstrides, src = piece[0], _shape(piece[1]), _shape(piece[2], "strides"), piece[3]
        if (len(pstrides) != len(pshape) or not isinstance(offset, int) or isinstance(offset, bool) or offset < 0
                or not _count(pshape)):
            raise DescError(f"join piece {j} needs a non-negative offset, one stride per axis and elements")
        last = offset + sum((d - 1) * st for d, st in zip(pshape, pstrides, strict=True)) + dt.itemsize
        if last > nbytes or any(st == 0 and d > 1 for d, st in zip(pshape, pstrides, strict=True)):
            raise DescError(f"join piece {j} reaches outside the output or repeats an element")
        root = output_root(src, roots)
        if root is None or root not in allowed_roots:
            raise DescError(f"join piece {j} is not a buffer a kernel wrote in this call")
        got = build(src, inputs, buffers, roots, budget_bytes)
        if got.host_layout and not got.blank:
            raise DescError(f"join piece {j} is a cast or padding made on the host")
        if got.array.shape != pshape or got.array.dtype != dt:
            raise DescError(f"join piece {j} does not have the piece's shape and dtype")
        try:
            dst = np.ndarray(pshape, dtype=dt, buffer=flat, offset=offset, strides=pstrides)
            mark = np.ndarray((*pshape, dt.itemsize), dtype=np.uint8, buffer=cover, offset=offset,
                              strides=(*pstrides, 1))
        except (ValueError, TypeError) as exc:
            raise DescError(f"join piece {j} not expressible: {str(exc)[:80]}") from None
        if mark.any():
            raise DescError(f"join piece {j} overlaps an earlier piece")
        mark[...] = 1
        placed += mark.size
        dst[...] = got.array
    # every byte marked and no more marks than bytes: no gap, and no piece overlapping itself or another
    if placed != nbytes or not cover.all():
        raise DescError(f"the pieces leave {int(nbytes - int(cover.sum()))} of {nbytes} bytes unwritten"
                        if placed <= nbytes else "the pieces overlap")
    return out


def _under_layout(node: Any) -> Any:
    """``node`` without its outer ``view`` / ``copy`` nodes (what they lay out)."""
    while isinstance(node, list) and len(node) > 1 and node[0] in ("view", "copy"):
        node = node[1]
    return node


def output_root(desc: Any, roots: list[int]) -> int | None:
    """The root buffer ``desc`` resolves to through ``view``/``copy`` nodes only (None: anything else - an
    input, a cast, a padding, a fill). Call after :func:`build` accepted ``desc``."""
    node = _under_layout(desc)
    if (isinstance(node, list) and len(node) == 2 and node[0] == "buf" and isinstance(node[1], int)
            and not isinstance(node[1], bool) and 0 <= node[1] < len(roots)):
        return roots[node[1]]
    return None


def value_cast_source(desc: Any) -> Any | None:
    """For an output described as view/copy nodes over one ``["cast", src, dtype]`` to a float or integer dtype, with
    only view/copy nodes down to a device buffer under it: ``src``. Else None. Whether the device accepts the cast
    depends on the two dtypes (:func:`honest_cast`), known once ``src`` is built.

    Why (red team s32, a false FAIL_CHEAT): the usual mixed-precision wrapper runs an fp32 kernel and returns
    ``y.to(x.dtype)``; red team s33: an argmax wrapper returns the kernel's int32 ids as ``.long()`` to match
    ``torch.argmax``. Such a cast only rounds (float to float) or widens exactly what the kernel wrote, and the device
    repeats it on its own bytes (numpy / ml_dtypes round to nearest even as torch does); the device still refuses a
    cast of anything a kernel did not write, and any other cast (float to int computes - a floor -, a narrowing int
    cast wraps) on the host."""
    node = _under_layout(desc)
    if not (isinstance(node, list) and len(node) == 3 and node[0] == "cast"):
        return None
    try:
        target = _dtype(node[2])
    except DescError:
        return None
    if not (is_float_dtype(target) or target.kind in "iu"):
        return None
    inner = _under_layout(node[1])
    return node[1] if isinstance(inner, list) and inner[:1] == ["buf"] else None


def honest_cast(src: np.dtype, dst: np.dtype) -> bool:
    """Whether a host cast of kernel-written ``src`` values to ``dst`` is one an output may be
    (:func:`value_cast_source`): float to float (a rounding the device repeats), or a cast that keeps every value
    exactly (``np.can_cast(.., "safe")``: int32 to int64, bool or uint8 to int32, int16 to fp32)."""
    src, dst = np.dtype(src), np.dtype(dst)
    if is_float_dtype(src) and is_float_dtype(dst):
        return True
    if not (is_float_dtype(dst) or dst.kind in "iu"):
        return False
    try:
        return bool(np.can_cast(src, dst, casting="safe"))
    except TypeError:
        return False


def canonical_nans(arr: np.ndarray) -> np.ndarray:
    """``arr`` with every NaN the one positive quiet NaN of its dtype (a copy only when it holds a NaN): torch and
    numpy give a cast NaN different payloads, so a host cast and the device's own are compared without them."""
    if not is_float_dtype(arr.dtype) or not arr.size:
        return arr
    nan = np.isnan(arr)
    if not nan.any():
        return arr
    out = np.array(arr, copy=True)
    out[nan] = np.nan
    return out


def kernel_written(desc: Any, written_roots: set[int], roots: list[int]) -> bool:
    """``desc`` resolves, through ``view``/``copy`` nodes only, to a buffer whose memory a kernel wrote in this
    call. Call after :func:`build` accepted ``desc``."""
    root = output_root(desc, roots)
    return root is not None and root in written_roots


def signature(desc: Any, write_only: bool) -> Any:
    """``desc`` as compared across calls of the same shape: a write-only argument's zero fill and uninitialised
    allocation are the same thing (``np.empty`` may hand back zeroed pages or old bytes); anything else must be
    identical (a constant is a channel for host-computed values)."""
    if write_only and isinstance(desc, list) and desc and desc[0] in ("const", "uninit"):
        if desc[0] == "uninit" or (len(desc) == 4 and isinstance(desc[3], str) and set(desc[3]) <= {"0"}):
            return ["blank", desc[1], desc[2]]
    return desc


def write_only(program: Any) -> list[bool]:
    """Per kernel parameter: the kernel never computes from its initial bytes.

    ``runtime.emulator.device.keys_read`` also counts the destination of an ``assemble``/``move`` into a kernel
    argument as read (its untouched bytes survive the write). For the device that is not a read: the surviving
    bytes are the device's own fill (zeros the wrapper allocated, else NaN), never the candidate's (an output
    pre-filled on the host with the answer and left untouched by the kernel cannot pass).
    """
    from runtime.emulator.device import Guard, Loop, Op, keys_read

    reads: set[int] = set()
    stack = [program.body]
    while stack:
        for path in stack.pop().paths:
            for it in path.items:
                if isinstance(it, Op):
                    got = keys_read(it)
                    if it.kind in ("move", "assemble") and not it.params.get("owned"):
                        got -= set(it.writes) - set(it.ins)
                    reads |= got
                elif isinstance(it, Loop):
                    stack.append(it.body)
                    for e in (it.start, it.stop, it.step):
                        _expr_reads(e, reads)
                elif isinstance(it, Guard):
                    _expr_reads(it.cond, reads)
    return [p.key not in reads for p in program.params]


def _expr_reads(e: Any, out: set[int]) -> None:
    """Tensors an expression reads at run time (``("read", key, (index...), name)`` nodes)."""
    stack = [e]
    seen: set[int] = set()
    while stack:
        x = stack.pop()
        if type(x) is not tuple or not x or id(x) in seen:
            continue
        seen.add(id(x))
        if x[0] == "read" and len(x) > 2:
            out.add(int(x[1]))
            stack.extend(x[2])
        elif x[0] == "bin" and len(x) > 3:
            stack.extend((x[2], x[3]))
