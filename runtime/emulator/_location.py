"""Where in the user's kernel a statement is: the file and line every diagnostic points at.

A leaf module (no sibling imports) because everything reports locations: the registry's unsupported-op
stubs, the Tensor constructor, the tracer and the ops. The trace-time interpreter runs kernel statements
through ``exec_stmt``; its frame knows the kernel file and line, so that frame wins over the Python
frames of the emulator itself.
"""

from __future__ import annotations

import os
import sys
from types import FrameType

__all__ = ["PKG_DIR", "user_location"]

PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_INTERP_FILE = os.path.join(PKG_DIR, "_trace_interp.py")


def user_location() -> tuple[str | None, int | None]:
    """File and line of the innermost frame outside the emulator package (the kernel statement)."""
    f: FrameType | None = sys._getframe(1)
    while f is not None:
        code = f.f_code
        fn = code.co_filename
        interp = f.f_locals.get("self") if code.co_name == "exec_stmt" and fn == _INTERP_FILE else None
        if interp is not None:
            return interp.p.file, interp.line
        if not fn.startswith(PKG_DIR) and not fn.startswith("<frozen"):
            return fn, f.f_lineno
        f = f.f_back
    return None, None
