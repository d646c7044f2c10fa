"""The checkpoint method: kernel parameters named like golden intermediates are compared with them.

The upstream workflow (spec/workflow.md Part B §10.2-10.3) has a person add inspection tensors and bisect
over many device runs. Here the kernel declares a tensor parameter named like a golden intermediate, at any
position among its tensor parameters (the real frontend wants every tensor parameter before the non-tensor
ones), and writes its value there. The wrapper keeps the signature verify calls (the SPEC inputs, positional)
and allocates the checkpoint itself with any contents, padded to whole tiles if it likes: the tool fills it
with NaN poison before the kernel call and compares the part inside the golden's extent. One run compares
every checkpoint; verify ignores them (they are not returned). Per-iteration results and the drift-onset iteration
come from the recorded writes into the checkpoint (what was written in iteration k, compared at the
offsets it was written to), so running accumulators are judged per iteration, not only at the end.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from runtime.bisect._analyzer import Golden
from runtime.bisect._compare import mismatch_mask
from runtime.bisect._parse import is_jit_def, parse_source
from runtime.bisect._records import Rec
from runtime.bisect.report import CheckpointResult, IterationResult, stats_of

__all__ = ["checkpoint_names", "compare_checkpoints", "valid_region"]


def checkpoint_names(stage_file: Path, intermediates: list[str], wrapper: str | None = None) -> list[str]:
    """Parameters of the stage file's jit kernels that are named like a golden intermediate (file order).

    Positional parameters of ``wrapper`` are inputs (e.g. golden-fed STUB boundary tensors), never
    checkpoints; nor is a kernel parameter the wrapper passes data of its inputs in (``q_flat = query.reshape(-1, D)``
    for a kernel's ``q``, :func:`_fed_by_inputs`). Parsing only (the candidate is untrusted and is never imported here).
    """
    try:
        tree = parse_source(Path(stage_file).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return []
    wanted = set(intermediates)
    wrappers = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == wrapper]
    for node in wrappers:
        wanted -= {a.arg for a in node.args.posonlyargs + node.args.args}
    out: list[str] = []
    kernels = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and is_jit_def(n)]
    # (a name the wrapper fills with input data in one kernel's call is an input in every kernel that has it)
    fed = {p for w in wrappers for k in kernels for p in _fed_by_inputs(w, k)}
    for node in kernels:
        for a in node.args.args + node.args.kwonlyargs:
            if a.arg in wanted and a.arg not in out and a.arg not in fed:
                out.append(a.arg)
    return out


_META = frozenset({"shape", "dtype", "device", "ndim", "size", "layout"})
_ALLOC = ("zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like")


def _data_names(node: ast.AST) -> set[str]:
    """Names whose data an expression reads: not those it reads only for their shape, dtype or device (``x.shape[0]``,
    ``torch.empty_like(x)``, ``np.zeros((n, 1))``)."""
    if isinstance(node, ast.Attribute) and node.attr in _META:
        return set()
    if isinstance(node, ast.Call):
        f = node.func
        callee = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if callee in _ALLOC:
            return set()
    if isinstance(node, ast.Name):
        return {node.id}
    out: set[str] = set()
    for ch in ast.iter_child_nodes(node):
        out |= _data_names(ch)
    return out


def _fed_by_inputs(wrapper: ast.FunctionDef, kernel: ast.FunctionDef) -> set[str]:
    """Parameters of ``kernel`` that ``wrapper`` passes data of its own positional parameters (its inputs) in,
    followed back through the wrapper's assignments (``q_flat = query.transpose(1, 2).reshape(-1, D)``; parsed, never
    run): kernel inputs, not checkpoints, whatever their name - a checkpoint is a buffer the wrapper allocates."""
    inputs = {a.arg for a in wrapper.args.posonlyargs + wrapper.args.args}
    aliases = {kernel.name} | {t.id for st in ast.walk(wrapper) if isinstance(st, ast.Assign)
                               and isinstance(st.value, ast.Name) and st.value.id == kernel.name
                               for t in st.targets if isinstance(t, ast.Name)}
    assigns: dict[str, list[ast.AST]] = {}
    for st in ast.walk(wrapper):
        if isinstance(st, ast.Assign):
            for t in st.targets:
                for nm in (x.id for x in ast.walk(t) if isinstance(x, ast.Name)):
                    assigns.setdefault(nm, []).append(st.value)
    names = [a.arg for a in kernel.args.args]
    fed: set[str] = set()
    for call in ast.walk(wrapper):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in aliases):
            continue
        pairs = list(zip(names, call.args, strict=False)) + [(k.arg, k.value) for k in call.keywords if k.arg]
        for pname, arg in pairs:
            todo, seen = list(_data_names(arg)), set()
            while todo:
                nm = todo.pop()
                if nm in seen:
                    continue
                seen.add(nm)
                if nm in inputs:
                    fed.add(pname)
                    break
                for v in assigns.get(nm, []):
                    todo += list(_data_names(v))
    return fed


def _poison_mask(arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind in "iu":
        sentinel = np.iinfo(arr.dtype).min if arr.dtype.kind == "i" else np.iinfo(arr.dtype).max
        return arr == sentinel
    return np.isnan(arr.astype(np.float64))


def valid_region(arr: np.ndarray, shape: tuple[int, ...]) -> np.ndarray | None:
    """The part of a checkpoint array that corresponds to a golden tensor of ``shape``, or None.

    A wrapper may allocate a checkpoint padded to whole tiles (``[ceil(B/T)*T, 1]`` for a ``[B, 1]`` golden)
    or with extra unit axes (``[B, 1]`` for ``[B]``): the leading block of the golden's extent is compared and
    the padding is ignored, as verify ignores nothing but the kernel never promised anything there.
    """
    if arr.shape == tuple(shape):
        return arr
    if arr.ndim == len(shape):
        if all(a >= n for a, n in zip(arr.shape, shape, strict=True)):
            return arr[tuple(slice(0, n) for n in shape)]
        return None
    a_sq = [n for n in arr.shape if n != 1]
    g_sq = [n for n in shape if n != 1]
    if len(a_sq) != len(g_sq) or any(a < n for a, n in zip(a_sq, g_sq, strict=True)):
        return None
    squeezed = arr.reshape(a_sq)[tuple(slice(0, n) for n in g_sq)]
    return squeezed.reshape(shape)


def compare_checkpoints(captured: dict[str, np.ndarray], golden: Golden, records: list[Rec],
                        names: list[str]) -> list[CheckpointResult]:
    """One result per checkpoint, in golden data-flow order.

    ``captured``: the checkpoint tensors after the kernel (the trusted replay's arrays); per-iteration results
    come from the writes' summaries (``Summary.ck``, checked when each write was made).
    """
    out: list[CheckpointResult] = []
    by_seq = {r.seq: r for r in records}

    def tile_shape(w: Rec, written: tuple[int, ...]) -> list[int]:
        """The tile the write came from (its source op's output), not just the written extent."""
        for ref in w.inputs or []:
            src = by_seq.get(int(ref.get("seq", -1))) if ref.get("kind") == "record" else None
            if src is not None and src.shape is not None:
                return list(src.shape)
        return list(w.shape or written)

    for name in sorted(names, key=lambda n: golden.order.get(n, 1 << 30)):
        g = golden.arrays.get(name)
        arr = captured.get(name)
        if g is None or arr is None:
            out.append(CheckpointResult(name=name, status="not_written", not_written=-1))
            continue
        fitted = valid_region(arr, g.shape)
        if fitted is None:
            out.append(CheckpointResult(name=name, status="shape_mismatch"))
            continue
        same_rank = arr.ndim == g.ndim
        arr = fitted
        unwritten = int(_poison_mask(arr).sum())
        st = stats_of(arr, g, golden.atol, golden.rtol)
        per_iter: list[IterationResult] = []
        onset = None
        for w in records:
            if not same_rank or w.target != name or not w.is_write or w.offsets is None:
                continue
            ck = w.summ.ck if w.summ is not None else None
            bs = w.bshape
            if ck is None or bs is None:
                continue
            ok, mx, nan = ck
            inside = tuple(max(0, min(b, n - o)) for b, o, n in zip(bs, w.offsets, g.shape, strict=True))
            tile = tile_shape(w, inside)
            if len(tile) == g.ndim and all(o + t <= n for o, t, n in zip(w.offsets, tile, g.shape, strict=True)) \
                    and any(v < t for v, t in zip(inside, tile, strict=True)):
                ok = False  # the whole tile lies inside the tensor but only part of it was written
            per_iter.append(IterationResult(iteration=dict(w.iteration), offsets=list(w.offsets), all_close=ok,
                                            max_abs_diff=mx, nan_count=nan))
            if not ok and onset is None:
                onset = dict(w.iteration)
        first_bad = None
        if st.out_of_tolerance:
            bad = mismatch_mask(arr, g, golden.atol, golden.rtol)
            first_bad = [int(i[0]) for i in np.nonzero(bad)]
        status = "match" if st.out_of_tolerance == 0 else ("not_written" if unwritten == arr.size else "mismatch")
        out.append(CheckpointResult(name=name, status=status, stats=st, not_written=unwritten,
                                    per_iteration=per_iter[:256], drift_onset=onset, first_bad_index=first_bad))
    return out
