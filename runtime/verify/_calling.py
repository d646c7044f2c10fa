"""The calling convention of a candidate wrapper: what the verifier passes and how it reads the result back.

* Inputs come positionally, in the order of the wrapper's parameters that are SPEC inputs.
* SPEC attributes the wrapper names as parameters come as keyword arguments with the SPEC values
  (``def rms_norm_wrapper(x, gamma, eps=1e-6)`` gets ``eps=<SPEC eps>``).
* A file that imports torch at module level gets torch CPU tensors (sharing memory with the numpy inputs,
  bf16 included) and may return torch tensors; they are read back as numpy arrays. Otherwise numpy in, numpy
  out, as before.
* One entry: the verifier calls ``<op>_wrapper`` (or the stage wrapper) only; a file may hold several jit
  kernels behind it (one per dtype or path), each linted.

Loaded by path in the sandbox child (importing ``runtime.verify`` there would pull in the whole verifier), so
this module imports only numpy, ml_dtypes and (lazily) torch.
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np

from runtime import pyast

__all__ = ["array_view", "call_wrapper", "imports_module", "imports_torch", "output_leaves", "to_call_args"]


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


def _to_torch(a: np.ndarray) -> Any:
    """A torch CPU tensor sharing memory with ``a`` (bf16 through an int16 view)."""
    import torch

    if a.dtype.name == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
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

        if t.dtype == torch.bfloat16:
            import ml_dtypes

            return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        try:
            return t.numpy()
        except (TypeError, RuntimeError):
            return None
    return None


def to_call_args(arrays: list[np.ndarray], torch_io: bool) -> list[Any]:
    """The positional arguments for the wrapper: the arrays, or torch tensors sharing their memory."""
    return [_to_torch(a) for a in arrays] if torch_io else list(arrays)


def call_wrapper(wrapper: Any, arrays: list[np.ndarray], calling: dict[str, Any] | None) -> Any:
    """Call ``wrapper`` with the inputs (positional) and the SPEC attributes it takes (keywords)."""
    calling = calling or {}
    args = to_call_args(arrays, bool(calling.get("torch")))
    return wrapper(*args, **dict(calling.get("kwargs") or {}))


def output_leaves(out: Any) -> list[Any]:
    """The wrapper's outputs as a list; torch tensors become numpy arrays sharing their memory."""
    leaves = list(out) if isinstance(out, tuple | list) else [out]
    result = []
    for leaf in leaves:
        view = array_view(leaf) if _is_torch(leaf) else None
        result.append(view if view is not None else leaf)
    return result
