"""Where a tensor lives on the emulated device host: the NPU or the host (both the CPU here).

Why: moving a tensor between the host and the NPU copies on a device host, and the stand-in copies too
(``_torch_npu._moved``), but only a tensor that knows it is on the NPU is left alone by ``.npu()``. s37's first
cut marked only tensors built with ``device="npu"`` or moved there, so every tensor a script *computed* from an NPU
tensor counted as a host tensor: ``out = torch.empty_like(x_npu)`` (how the gym's wrappers allocate outputs), a view
``base[:n]`` or ``x_npu.clone()``. Its ``.npu()`` - a wrapper's ``out = out.npu()`` - was then a copy, the kernel wrote
into the copy and the caller compared the untouched ``out`` (second round: three of the probe scripts failed that
way, where the round before they passed), and its ``.cpu()`` aliased the tensor a later in-place kernel changed.

On a device host an operation's result lives where its tensor operands live. So while a tensor is on the NPU, a
torch function mode (``Placement``) marks every *new* tensor an operation returns from an NPU operand as on the
NPU: views, ``*_like``/``new_*`` allocations, clones, dtype casts, arithmetic. An operation that returns one of its
operands (in-place ops, ``out=``, ``copy_``) leaves that tensor where it was; moves are ``_moved``'s, and a factory
given ``device="cpu"`` is a host tensor. The mode is pushed when the stand-in patches torch, before any mode of the
script's own (``with torch.device(...)`` is one), so it stays at the bottom of torch's mode stack; it costs about
2 us per torch call. Torch keeps function modes per thread, so each thread the script starts (``threading``,
``ThreadPoolExecutor``) runs under a mode of its own, entered and left around the thread's body
(``threading.Thread._bootstrap_inner``; a mode left on a finished thread's stack aborted the interpreter at exit,
"terminate called without an active exception"). Threads not started through ``threading`` (``_thread``) do not
mark results: they count as host tensors there (``.npu()`` copies, as before s37's second round).
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

__all__ = ["ON_NPU", "ORIGINAL", "allocated_bytes", "install", "is_on_npu", "mark"]

ON_NPU = "_pto_forge_on_npu"
"""Set (True) in the ``__dict__`` of a tensor that lives on the NPU."""

ORIGINAL = "_pto_forge_original"
"""Set on the stand-in's wrappers of ``torch.Tensor`` methods (``to``, ``cpu``, ``new_*``): the method they wrap.

torch hands a mode the method it finds on ``torch.Tensor`` by name, which is the wrapper: the mode calls what it
wraps instead, or a wrapper ran twice (``z.to("npu")`` of an NPU tensor saw the mapped ``"cpu"`` the second time
and returned a copy, where a device host returns ``z``)."""

_state: dict[str, Any] = {"mode": None}

_LIVE: list[weakref.ref[Any]] = []
"""Weak references to the tensors marked as on the NPU: what ``torch.npu.memory_allocated`` counts.

Why: s38 left ``torch.npu.max_memory_allocated()`` at 0 whatever the script allocated, so a script printing its
peak or asserting it stays under a budget (or above zero) saw an empty device. A plain weak reference per NPU
tensor is the cheapest record: a ``WeakValueDictionary`` entry with its death callback, tried first, made a
script's ``x + 1`` on an NPU tensor measurably slower (21-22 us against 12-17 us without, on a loaded machine), the
list stays within the noise of that; dead references are dropped when the list doubles (`_remember`) and when a
script asks (`allocated_bytes`). A ``WeakSet`` would compare its members with ``==``, elementwise for tensors."""

_COMPACT = {"at": 4096}

_BLOCK = 512
"""torch_npu's caching allocator hands out blocks in multiples of 512 bytes (its ``kMinBlockSize``)."""


def _remember(tensor: Any) -> None:
    _LIVE.append(weakref.ref(tensor))
    if len(_LIVE) > _COMPACT["at"]:
        n = len(_LIVE)  # a prefix replaced in one step: another thread's appends meanwhile land after it
        _LIVE[:n] = [r for r in _LIVE[:n] if r() is not None]
        _COMPACT["at"] = max(4096, 2 * len(_LIVE))


def allocated_bytes() -> int:
    """Bytes held by the live NPU tensors, each storage once (views share it), rounded up to the allocator's blocks."""
    seen: set[int] = set()
    total = 0
    alive = []
    n = len(_LIVE)
    for r in _LIVE[:n]:
        t = r()
        if t is None:
            continue
        alive.append(r)
        if not is_on_npu(t):
            continue
        try:
            storage = t.untyped_storage()
            ptr, nbytes = storage.data_ptr(), storage.nbytes()
        except (RuntimeError, NotImplementedError):  # a meta / sparse tensor: nothing allocated on a device host
            continue
        if nbytes and ptr not in seen:
            seen.add(ptr)
            total += -(-nbytes // _BLOCK) * _BLOCK
    _LIVE[:n] = alive
    return total


def is_on_npu(tensor: Any) -> bool:
    """Whether ``tensor`` (a torch tensor) lives on the emulated NPU."""
    d = getattr(tensor, "__dict__", None)
    return bool(d and d.get(ON_NPU))


def mark(tensor: Any, on_npu: bool) -> None:
    """Record where ``tensor`` lives."""
    if on_npu:
        tensor.__dict__[ON_NPU] = True
        _remember(tensor)
    else:
        tensor.__dict__.pop(ON_NPU, None)


def _operand_on_npu(args: tuple[Any, ...], kwargs: dict[str, Any], torch: Any) -> tuple[bool, set[int]]:
    """Whether an operand is on the NPU, and the ids of the tensor operands (an op returning one made nothing)."""
    on, ids = False, set()
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            ids.add(id(a))
            on = on or is_on_npu(a)
        elif isinstance(a, list | tuple):  # torch.cat([a, b]), torch.stack(...)
            for b in a:
                if isinstance(b, torch.Tensor):
                    ids.add(id(b))
                    on = on or is_on_npu(b)
    return on, ids


def install(torch: Any) -> None:
    """Push the :class:`Placement` mode on this thread's torch function mode stack (once per process)."""
    if _state["mode"] is not None:
        return
    from torch.overrides import TorchFunctionMode

    class Placement(TorchFunctionMode):
        """Marks the new tensors an operation on NPU tensors returns as on the NPU (see the module doc)."""

        def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            kwargs = kwargs or {}
            result = getattr(func, ORIGINAL, func)(*args, **kwargs)
            on, ids = _operand_on_npu(args, kwargs, torch)
            if on:
                for r in result if isinstance(result, list | tuple) else (result,):
                    if isinstance(r, torch.Tensor) and id(r) not in ids:
                        r.__dict__[ON_NPU] = True
                        _remember(r)
            return result

    mode = Placement()
    _state["mode"] = mode
    mode.__enter__()  # stays on torch's mode stack for the rest of the process (this thread)
    bootstrap = getattr(threading.Thread, "_bootstrap_inner", None)
    if callable(bootstrap):
        def bootstrap_inner(self: threading.Thread) -> None:
            with Placement():
                bootstrap(self)

        threading.Thread._bootstrap_inner = bootstrap_inner  # type: ignore[attr-defined]
