"""Where in the user's kernel a statement is: the file and line every diagnostic points at.

A leaf module (no sibling imports) because everything reports locations: the registry's unsupported-op
stubs, the Tensor constructor, the tracer and the ops. The trace-time interpreter runs kernel statements
through ``exec_stmt``; its frame knows the kernel file and line, so that frame wins over the Python
frames of the emulator itself.
"""

from __future__ import annotations

import os
import sys
from types import CodeType, FrameType

__all__ = ["PKG_DIR", "user_location"]

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_INTERP_FILE = os.path.join(PKG_DIR, "_trace_interp.py")
_WALK_FILE = os.path.join(PKG_DIR, "_trace_walk.py")


_INNER, _USER, _EXEC_STMT, _WALK = 0, 1, 2, 3
_KINDS: dict[int, tuple[CodeType, int]] = {}
"""id(code) -> (code, what its frames are: emulator/frozen, user code, the interpreter's ``exec_stmt``, the
expression walker's ``_walk``). Every traced op asks for its location (a walk of ~6 frames): two string prefix tests
per frame were a third of it. The entry holds the code object, so its id is not reused while the entry exists."""
_KINDS_LIMIT = 8192
_INNER_CODES: dict[int, CodeType] = {}
"""id(code) -> code, for the code objects of `_KINDS` that are emulator (or frozen) code: most frames of a walk are
(an op's ``emit``, the op, its checks), and `user_location` passes over them with one lookup instead of the kind
dispatch (session 48: 179 bytecodes a traced op -> ~100). Cleared with `_KINDS`; its entries hold their code objects
too."""


def _kind(code: CodeType) -> int:
    hit = _KINDS.get(id(code))
    if hit is not None and hit[0] is code:
        return hit[1]
    fn = code.co_filename
    if code.co_name == "exec_stmt" and fn == _INTERP_FILE:
        k = _EXEC_STMT
    elif code.co_name == "_walk" and fn == _WALK_FILE:
        k = _WALK
    elif not fn.startswith(PKG_DIR) and not fn.startswith("<frozen"):
        k = _USER
    else:
        k = _INNER
    if len(_KINDS) >= _KINDS_LIMIT:
        _KINDS.clear()
        _INNER_CODES.clear()
    _KINDS[id(code)] = (code, k)
    if k == _INNER:
        _INNER_CODES[id(code)] = code
    return k


def user_location() -> tuple[str | None, int | None]:
    """File and line of the innermost frame outside the emulator package (the kernel statement)."""
    f: FrameType | None = sys._getframe(1)
    kinds, inner = _KINDS, _INNER_CODES
    while f is not None:
        code = f.f_code
        if inner.get(id(code)) is code:  # an emulator frame seen before: the next one
            f = f.f_back
            continue
        hit = kinds.get(id(code))
        k = hit[1] if hit is not None and hit[0] is code else _kind(code)
        if k == _WALK:
            # a kernel expression evaluated by `_trace_walk`: the file and line its compiled code would be at
            loc = f.f_locals
            line = loc.get("_pto_line")
            if line is not None:
                return loc.get("file"), line
            k = _INNER
        if k == _EXEC_STMT:
            interp = f.f_locals.get("self")
            if interp is not None:
                return interp.p.file, interp.line
            k = _INNER  # the interpreter's own frame without its instance: an emulator frame like any other
        if k == _USER:
            return code.co_filename, f.f_lineno
        f = f.f_back
    return None, None
