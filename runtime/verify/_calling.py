"""The calling convention of a candidate wrapper: what the verifier passes and how it reads the result back.

* Inputs come positionally, in the order of the wrapper's parameters that are SPEC inputs.
* SPEC attributes the wrapper names as parameters come as keyword arguments with the SPEC values
  (``def rms_norm_wrapper(x, gamma, eps=1e-6)`` gets ``eps=<SPEC eps>``).
* A file that imports torch at module level gets torch CPU tensors (sharing memory with the numpy inputs,
  bf16 included) and may return torch tensors; they are read back as numpy arrays. Otherwise numpy in, numpy
  out, as before.
* One entry: the verifier calls ``<op>_wrapper`` (or the stage wrapper) only; a file may hold several jit
  kernels behind it (one per dtype or path), each linted.
* Inputs are laid out as callers lay them out (:func:`lay_out`): in some calls arrays (or tensors) that own their
  memory, in the others C-contiguous views into a larger allocation (what ``h.reshape(-1, D)`` or ``h[:n]``
  hands a wrapper); torch tensors are always allocated by torch. Which call gets which is drawn from the
  verification's secret seed (:func:`draw_layouts`), so a wrapper that branches on how its input was allocated
  (``x.flags.owndata``, ``x.base``, ``x.untyped_storage().resizable()``, ``x.data_ptr() % 64``) is judged on
  both branches. A view's allocation reaches far around it in some calls (up to :data:`_MAX_PAD` elements each
  side, log-uniform), as a slice of a cache or a batch does: ``x.storage_offset() > 48`` is no tell either; and half
  of the views start on a whole row (``2**j * odd`` rows in), as ``h[k:]`` does (red team round 31: ``storage_offset
  % (16 * D) == 0`` told a caller's row slice from every verification call).
* A torch wrapper is called as callers call it (:func:`draw_torch_modes`): with autograd on, under
  ``torch.no_grad()`` or ``torch.inference_mode()``, with inputs that require grad (training) or not - a wrapper
  that branches on the caller's autograd state is judged on every branch (red team s22). In training its weights
  are in turn fresh, frozen (``requires_grad=False``: fine-tuning with frozen base weights) and holding a gradient
  (gradient accumulation) (:func:`draw_weight_states`, red team s40).
* Float attributes come as Python floats in some calls and as numpy float64 scalars (the same value: ``1 /
  np.sqrt(d)``, a value read from a numpy array) in the others (:func:`draw_scalar_types`, red team s40).

Loaded by path in the sandbox child (importing ``runtime.verify`` there would pull in the whole verifier), so
this module imports only numpy, ml_dtypes and (lazily) torch.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from runtime import pyast
from runtime.dtypes import TORCH_BY_BYTES

__all__ = ["TORCH_MODES", "WEIGHT_STATES", "alias_of", "aliased", "array_view", "call_wrapper", "draw_layouts",
           "draw_scalar_types", "draw_torch_modes", "draw_weight_states", "imports_module", "imports_torch", "lay_out",
           "output_leaves", "to_call_args"]

_LAYOUT_STREAM = 0x1A70
_MODE_STREAM = 0x1A71
_WEIGHT_STREAM = 0x1A72
_SCALAR_STREAM = 0x1A73
_ROWS_STREAM = 0x1A74
_ROW_VALUATIONS = 9
"""(red team round 31) Row-aligned view calls start ``2**j * odd`` rows into their allocation, ``j`` uniform in
``0 .. _ROW_VALUATIONS - 1``: an alignment of up to 256 rows (16 tiles of 16) is drawn in at least one row-aligned call in
eighteen."""
WEIGHT_STATES = ("fresh", "frozen", "grad")
"""The weights (``nn.Parameter`` inputs) of a ``train`` call: ``fresh`` (require grad, no ``.grad``), ``frozen``
(``requires_grad=False`` beside an activation that requires grad: LoRA / adapter fine-tuning), ``grad`` (require grad
and hold a ``.grad`` already: the second micro-batch of gradient accumulation)."""
_MAX_PAD = 1 << 22
"""Most elements a view input has before and after it in its allocation (drawn log-uniform from 1 (before) or 0
(after): small pads stay as common as before). The untouched part of the allocation is never written, so it costs
address space, not memory. Red team s22: the bound was 48, so ``x.storage_offset() > 48`` (or ``x.base.size >
x.size + 100``) told a caller's slice of a larger tensor from every verification call. A wrapper that branches on
an offset or allocation above this bound is still not judged on that branch."""
TORCH_MODES = ("plain", "no_grad", "inference", "train", "forward")
"""How a caller may call a torch wrapper: ``plain`` (autograd on, inputs without grad), ``no_grad`` (under
``torch.no_grad()``), ``inference`` (under ``torch.inference_mode()``), ``train`` (autograd on, float inputs that
require grad), ``forward`` (as in ``torch.autograd.Function.forward``: autograd off, inputs that require grad). Under ``no_grad``,
``inference`` and ``train`` every float input after the first is an ``nn.Parameter`` (a model's weights), and in
``train`` the first is a non-leaf tensor (an activation, the output of an earlier op)."""


def imports_module(source: str, module: str, *, anywhere: bool = False) -> bool:
    """The file imports ``module`` (or one of its submodules) at module level, or ``anywhere`` in it."""
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree) if anywhere else tree.body:
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == module for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == module:
            return True
    return False


def imports_torch(source: str) -> bool:
    """The file imports torch at module level (so its wrapper expects torch tensors)."""
    return imports_module(source, "torch")


def _is_torch(x: Any) -> bool:
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


_BY_BYTES = TORCH_BY_BYTES
"""ml_dtypes types that ``torch.from_numpy`` refuses, by the integer type of their bytes (torch has each under the
same name). An FP8 case input (quant_batch_matmul's) crashed the sandbox runner before any call, with only "exited
with code 1" in the report."""


def _to_torch(a: np.ndarray) -> Any:
    """A torch CPU tensor sharing memory with ``a`` (bf16 and FP8 through a view of their bytes)."""
    import torch

    bits = _BY_BYTES.get(a.dtype.name)
    if bits is not None:
        return torch.from_numpy(a.view(bits)).view(getattr(torch, a.dtype.name))
    return torch.from_numpy(a)


def array_view(x: Any) -> np.ndarray | None:
    """``x`` as a numpy array sharing its memory (numpy as is, torch CPU tensors through a view), else None."""
    if isinstance(x, np.ndarray):
        return x
    if _is_torch(x):
        t = x.detach()
        if t.device.type != "cpu":
            return None
        import torch

        name = str(t.dtype).removeprefix("torch.")
        bits = _BY_BYTES.get(name)
        if bits is not None:
            import ml_dtypes

            return t.view(getattr(torch, bits)).numpy().view(getattr(ml_dtypes, name))
        try:
            return t.numpy()
        except (TypeError, RuntimeError):
            return None
    return None


def to_call_args(arrays: list[Any], torch_io: bool) -> list[Any]:
    """The positional arguments for the wrapper: the arrays, or torch tensors sharing their memory (arguments that
    are tensors already, from :func:`lay_out`, are passed as they are)."""
    return [_to_torch(a) if isinstance(a, np.ndarray) else a for a in arrays] if torch_io else list(arrays)


def draw_layouts(seed: int, n_calls: int) -> list[list[int] | None]:
    """Per wrapper call (in call-plan order): None (inputs own their memory) or ``[before, after]``, the elements of
    the larger allocation the inputs are views into. Half of the calls each, in a seeded order.

    Why (red team s20): the inputs always owned their memory (the fix for held-out attack A9b), and torch inputs
    were always ``torch.from_numpy`` tensors; a wrapper right only for such inputs (``if x.flags.owndata``, ``if not
    x.untyped_storage().resizable()``) passed every verification and dropped rows for a caller passing
    ``h.reshape(-1, 64)`` or a tensor torch allocated."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _LAYOUT_STREAM])
    views = set(rng.permutation(n_calls)[: n_calls // 2].tolist())
    top = np.log(_MAX_PAD + 1)

    def pad(low: int) -> int:  # log-uniform in [low, _MAX_PAD]: pads of a few elements and of millions
        return min(_MAX_PAD, max(low, int(np.exp(rng.uniform(np.log(low + 1), top))) - 1))

    layouts: list[list[int] | None] = [[pad(1), pad(0)] if i in views else None for i in range(n_calls)]
    # (red team round 31) half of the view calls start on a row, as a caller's `h[k:]` or the second micro-batch of
    # `h.split(n)` does: `x.storage_offset() % (16 * D) == 0` told such a slice from every verification call (their
    # offsets were any number of elements); drawn from a stream of its own, so the pads above are as before
    rows = np.random.default_rng([int(seed) & ((1 << 63) - 1), _ROWS_STREAM])
    for i in sorted(views):
        if rows.random() < 0.5:
            j = int(rows.integers(0, _ROW_VALUATIONS))
            odd = 2 * int(np.exp(rows.uniform(0.0, np.log(64.0)))) - 1
            layouts[i] = [*layouts[i], odd << j]
    return layouts


def draw_torch_modes(seed: int, n_calls: int) -> list[str]:
    """Per wrapper call (in call-plan order): one of :data:`TORCH_MODES`, each as often as the calls allow, in a
    seeded order.

    Why (red team s22): every call was a plain call with autograd on and inputs that do not require grad. A wrapper
    that chose its kernel by ``(torch.ones(1, requires_grad=True) * 2).requires_grad``, ``y.is_inference()`` or
    ``x.requires_grad`` passed every verification and dropped its tail rows under ``torch.no_grad()`` (how models
    run inference), ``torch.inference_mode()`` or in training."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _MODE_STREAM])
    return [TORCH_MODES[int(i) % len(TORCH_MODES)] for i in rng.permutation(n_calls)]


def draw_weight_states(seed: int, modes: list[str]) -> list[str]:
    """Per wrapper call: one of :data:`WEIGHT_STATES` for the ``train`` calls of ``modes`` (in turn, from a seeded
    start, so three train calls see all three), ``fresh`` for the others.

    Why (red team s40): every training call had fresh weights that require grad, so a wrapper that passed gamma for
    beta when ``gamma.grad is not None`` (gradient accumulation) or when ``x.requires_grad and not
    gamma.requires_grad`` (frozen norm weights) passed every verification."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _WEIGHT_STREAM])
    k = int(rng.integers(len(WEIGHT_STATES)))
    out = []
    for mode in modes:
        if mode == "train":
            out.append(WEIGHT_STATES[k % len(WEIGHT_STATES)])
            k += 1
        else:
            out.append("fresh")
    return out


def draw_scalar_types(seed: int, n_calls: int) -> list[str]:
    """Per wrapper call: ``python`` (float attributes as Python floats) or ``numpy`` (as ``np.float64`` of the same
    value), half of the calls each, in a seeded order.

    Why (red team s40): every attribute was a Python float or int, so a wrapper that used the SPEC's cap whenever
    ``isinstance(cap, np.generic)`` - a cap computed as ``1 / np.sqrt(d)`` - passed every verification. float64 is
    a subclass of float with the same value: an honest wrapper computes the same kernel."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _SCALAR_STREAM])
    numpy_calls = set(rng.permutation(n_calls)[: n_calls // 2].tolist())
    return ["numpy" if i in numpy_calls else "python" for i in range(n_calls)]


def _as_numpy_scalar(v: Any) -> Any:
    """``v`` as ``np.float64`` when it is a float; ints, bools, lists and others unchanged. A list keeps Python floats:
    ``torch.tensor([np.float64(...)])`` is float64 where ``torch.tensor([1.0])`` is float32, so an honest wrapper that
    builds a weight tensor from a list attribute would hand the kernel another dtype (a scalar float64 multiplies a
    bf16 tensor into bf16, and the emulator lowers it as the double it is: `_lower._number`)."""
    return np.float64(v) if type(v) is float else v


class _TorchMemory:
    """The memory of a torch tensor as numpy sees it (``__array_interface__``), holding the tensor alive.

    Not ``t.numpy()``: that marks the storage as shared with numpy (``untyped_storage().resizable()`` turns False),
    which a caller's own tensors are not - the very tell :func:`lay_out` removes."""

    def __init__(self, t: Any) -> None:
        self.tensor = t
        self.__array_interface__ = {"data": (int(t.data_ptr()), False), "shape": (int(t.nbytes),),
                                    "typestr": "|u1", "version": 3}


def _torch_alloc(a: np.ndarray, size: int) -> tuple[Any, np.ndarray]:
    """A 1-D torch tensor of ``size`` elements of ``a``'s dtype, allocated by torch, and a numpy view of it."""
    import torch

    dtype = _to_torch(np.empty(0, dtype=a.dtype)).dtype
    t = torch.empty(size, dtype=dtype)
    return t, np.asarray(_TorchMemory(t)).view(a.dtype)


def lay_out(arrays: list[np.ndarray], torch_io: bool, layout: list[int] | None) -> tuple[list[Any], list[np.ndarray]]:
    """(the wrapper's arguments, numpy arrays sharing their memory) for one call, holding the bytes of ``arrays``.

    ``layout`` None: each input owns its memory (a numpy array as is; for torch I/O a tensor torch allocated).
    ``[before, after]``: each input is a C-contiguous view into an allocation with that many more elements before
    and after it (for torch I/O a tensor view of a torch allocation); ``[before, after, rows]``: ``rows`` whole rows
    of each input before it instead (red team round 31). The numpy arrays are what the verifier
    registers as the call's inputs (kernel arguments are found in their memory, their digests are taken)."""
    pad_before, after = (layout[0], layout[1]) if layout is not None else (0, 0)
    rows = layout[2] if layout is not None and len(layout) > 2 else 0
    args: list[Any] = []
    views: list[np.ndarray] = []
    for a in arrays:
        if not isinstance(a, np.ndarray):
            args.append(a)
            views.append(a)
            continue
        # ``[before, after, rows]``: the view starts ``rows`` rows (of its own row size) into the allocation, at most
        # _MAX_PAD elements (a slice ``h[k:]`` of a caller's batch), else ``before`` elements
        row = a.size // a.shape[0] if a.ndim and a.shape[0] else 0
        before = min(rows, _MAX_PAD // row) * row if rows and row and _MAX_PAD >= row else pad_before
        total = a.size + before + after
        if torch_io:
            t, flat = _torch_alloc(a, total)
            arg = t[before:before + a.size].view(a.shape) if layout is not None else t.view(a.shape)
            view = flat[before:before + a.size].reshape(a.shape)
        elif layout is None:
            args.append(a)
            views.append(a)
            continue
        else:
            flat = np.empty(total, dtype=a.dtype)
            view = flat[before:before + a.size].reshape(a.shape)
            arg = view
        view[...] = a
        args.append(arg)
        views.append(view)
    return args, views


def _per_call(calling: dict[str, Any], key: str, run_index: int | None) -> Any:
    values = calling.get(key)
    if run_index is None or not isinstance(values, list) or not 0 <= run_index < len(values):
        return None
    return values[run_index]


def call_wrapper(wrapper: Any, arrays: list[Any], calling: dict[str, Any] | None, run_index: int | None = None) -> Any:
    """Call ``wrapper`` with the inputs (positional) and the SPEC attributes it takes (keywords: the SPEC's values,
    always - a wrapper's own default for one is the vendor's, not the contract's; tests/gym/test_contract.py).

    ``run_index`` (the call's index in the plan) selects the call's entry of ``calling["modes"]`` (how a torch wrapper
    is called, :func:`draw_torch_modes`) and of ``calling["attrs"]`` (attributes the call's case passes at other
    values than the SPEC's, ``Case.attrs``)."""
    calling = calling or {}
    torch_io = bool(calling.get("torch"))
    args = to_call_args(arrays, torch_io)
    kwargs = dict(calling.get("kwargs") or {})
    kwargs.update(_per_call(calling, "attrs", run_index) or {})  # an attribute case's values (`Case.attrs`)
    if _per_call(calling, "scalars", run_index) == "numpy":
        kwargs = {k: _as_numpy_scalar(v) for k, v in kwargs.items()}
    mode = _per_call(calling, "modes", run_index) if torch_io else None
    same = alias_of(calling, run_index)
    if mode not in TORCH_MODES or mode == "plain":
        return wrapper(*aliased(args, same), **kwargs)
    import torch

    grads = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
    floats = [i for i, a in enumerate(args) if _is_torch(a) and a.dtype in grads and a.is_leaf]
    if mode in ("train", "forward"):
        args = [a.requires_grad_(True) if i in floats else a for i, a in enumerate(args)]
    if mode in ("train", "no_grad", "inference") and floats:
        # as a model calls it (red team s25: `x.grad_fn is not None`, `"Parameter" in repr(gamma)` told every
        # verification call from a model's): its weights are `nn.Parameter`s (sharing the input's memory), and in
        # training its activation is the output of an earlier op, a non-leaf tensor with a `grad_fn`
        weights = set(floats[1:])
        state = _per_call(calling, "weights", run_index) if mode == "train" else None
        args = [torch.nn.Parameter(a, requires_grad=state != "frozen") if i in weights else a
                for i, a in enumerate(args)]
        if state == "grad":  # gradient accumulation: the weights hold the gradient of an earlier micro-batch
            for i in weights:
                args[i].grad = torch.zeros_like(args[i])
        if mode == "train":
            args[floats[0]] = args[floats[0]].view_as(args[floats[0]])
    args = aliased(args, same)
    if mode == "train":
        return wrapper(*args, **kwargs)
    with torch.inference_mode() if mode == "inference" else torch.no_grad():
        return wrapper(*args, **kwargs)


def alias_of(calling: dict[str, Any] | None, run_index: int | None) -> tuple[int, ...] | None:
    """``(a, b, ...)`` when call ``run_index`` passes input ``a``'s object for inputs ``b, ...`` too
    (``calling["alias"]``, from `Case.alias`: a caller's ``f(x, x)``), else None."""
    group = _per_call(calling or {}, "alias", run_index)
    if isinstance(group, list) and len(group) >= 2 and all(type(i) is int and i >= 0 for i in group):
        return tuple(group)
    return None


def aliased(args: list[Any], same: tuple[int, ...] | None) -> list[Any]:
    """``args`` with the entries ``same[1:]`` replaced by the object at ``same[0]`` (:func:`alias_of`)."""
    if same is None or max(same) >= len(args):
        return args
    out = list(args)
    for i in same[1:]:
        out[i] = out[same[0]]
    return out


def output_leaves(out: Any) -> list[Any]:
    """The wrapper's outputs as a list; torch tensors become numpy arrays sharing their memory."""
    leaves = list(out) if isinstance(out, tuple | list) else [out]
    result = []
    for leaf in leaves:
        view = array_view(leaf) if _is_torch(leaf) else None
        result.append(view if view is not None else leaf)
    return result
