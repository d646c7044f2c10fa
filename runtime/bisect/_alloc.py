"""An output buffer the wrapper allocates at the size it later crops to (session 48).

A pad-run-crop wrapper (attn_softmax: pad ``S`` to whole tiles, run, return ``out_padded[:, :S]``) allocating its
output at the cropped size (``torch.empty(M, S)`` where ``torch.empty(M, padded_S)`` was meant) makes the kernel's
last write overrun it; the emulator refuses the write ("assemble into 'out': source valid shape (1, 64) is larger
than the destination shape (1, 1) on axis 1") and that write was named. The write is right; the buffer is short. Named
only from the source and the message.
"""

from __future__ import annotations

import ast
import re

from runtime.bisect._parse import parse_source

__all__ = ["static_output_alloc_source"]

_TOO_SMALL_RE = re.compile(r"assemble into '(\w+)': source valid shape \([\d, ]+\) is larger than the destination "
                           r"shape \([\d, ]+\) on axis (\d+)")
_ALLOC = frozenset({"empty", "zeros", "ones", "full", "empty_like", "zeros_like"})


def _dims(call: ast.Call) -> list[ast.expr] | None:
    """The shape an allocation call lists: ``torch.empty(M, S, ..)``, ``np.zeros((M, S), ..)``."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in _ALLOC or call.func.attr.endswith("_like"):
        return None
    if call.args and isinstance(call.args[0], ast.Tuple | ast.List):
        return list(call.args[0].elts)
    dims = call.args[:-1] if call.func.attr == "full" else call.args
    return list(dims) or None


def _crop_bound(sub: ast.Subscript, axis: int) -> ast.expr | None:
    """The upper bound ``E`` of ``buf[.., :E]`` on ``axis`` (a slice from the start), or None."""
    elts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    if axis >= len(elts):
        return None
    s = elts[axis]
    return s.upper if isinstance(s, ast.Slice) and s.lower is None and s.step is None else None


def static_output_alloc_source(source: str | None, error_line: int | None, message: str) -> tuple[int, str] | None:
    """(line, why) for a kernel that raised writing past a destination kernel parameter on an axis, when the wrapper
    passes that parameter a buffer it allocates itself (``torch.empty`` / ``zeros`` / ``ones`` / ``full``, numpy
    alike) listing ``E`` on that axis and crops that same buffer to ``[:E]`` on that axis afterwards - a crop that
    only means something if the buffer was allocated wider; None otherwise (parsed, never run). The allocation's line
    is named."""
    m = _TOO_SMALL_RE.search(message or "")
    if not source or error_line is None or m is None:
        return None
    dest, axis = m.group(1), int(m.group(2))
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return None
    fns = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    kern = max((f for f in fns if f.lineno <= error_line <= (f.end_lineno or f.lineno)), key=lambda f: f.lineno,
               default=None)
    if kern is None:
        return None
    params = [a.arg for a in kern.args.args]
    if dest not in params:
        return None
    pos = params.index(dest)
    hits: set[tuple[int, str, str]] = set()
    for caller in fns:
        if caller is kern:
            continue
        for call in ast.walk(caller):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == kern.name):
                continue
            arg = next((k.value for k in call.keywords if k.arg == dest), None)
            if arg is None and pos < len(call.args):
                arg = call.args[pos]
            if not isinstance(arg, ast.Name):
                continue
            allocs = [n for n in ast.walk(caller) if isinstance(n, ast.Assign) and n.lineno < call.lineno
                      and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == arg.id]
            if not allocs:
                continue
            alloc = max(allocs, key=lambda n: n.lineno)
            dims = _dims(alloc.value) if isinstance(alloc.value, ast.Call) else None
            if dims is None or axis >= len(dims):
                continue
            want = ast.dump(dims[axis])
            for sub in ast.walk(caller):
                if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name) and sub.value.id == arg.id \
                        and sub.lineno > call.lineno and (b := _crop_bound(sub, axis)) is not None \
                        and ast.dump(b) == want:
                    hits.add((alloc.lineno, arg.id, ast.unparse(dims[axis])))
    if len(hits) != 1:
        return None
    line, buf, dim = next(iter(hits))
    return line, (f"the kernel raised at line {error_line} writing past {dest!r} on axis {axis}; the wrapper allocates "
                  f"{buf!r} for it on line {line} with {dim} on that axis and afterwards crops {buf!r} to [:{dim}] "
                  f"there - a crop that means something only if the buffer was allocated wider (padded to the "
                  f"kernel's tiles): the allocation is short, not the write")
