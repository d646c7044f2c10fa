"""A ``torch_npu`` stand-in for running NPU test scripts on the CPU (only under ``python -m runtime.emulator``).

Gym test scripts ``import torch_npu``, call ``torch.npu.set_device/synchronize`` and build tensors on
``"npu:N"``. On this machine there is no NPU, so the stand-in maps every NPU device to the CPU:

* ``import torch_npu`` gives this module's ``build_module()`` result and patches ``torch`` (once per process);
* device arguments ``"npu"``, ``"npu:N"`` and ``torch.device("npu:N")`` given to tensor factories and to
  ``Tensor.to`` mean the CPU; ``Tensor.npu()`` returns the tensor itself;
* ``torch.npu.*`` device calls (``set_device``, ``synchronize``, ``current_device``, ``empty_cache`` ...) are
  no-ops that return what a one-device machine would.

It is never installed by ``runtime.emulator.install()`` (the verifier's sandbox does not need it): only the
script runner registers it, so a real ``torch_npu`` is never shadowed in a library process.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import logging
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["NpuFinder", "build_module", "install_finder", "map_device"]

log = logging.getLogger(__name__)

_FACTORIES = (
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "empty_strided", "normal", "tril_indices", "triu_indices",
)
_PATCHED = "_pto_forge_npu_patched"


def _is_npu(dev: Any) -> bool:
    if isinstance(dev, str):
        return dev == "npu" or dev.startswith("npu:")
    return type(dev).__name__ == "device" and getattr(dev, "type", None) == "npu"


def map_device(dev: Any) -> Any:
    """``"npu"``, ``"npu:N"`` or an npu ``torch.device`` -> ``"cpu"``; anything else unchanged."""
    return "cpu" if _is_npu(dev) else dev


def _wrap_factory(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if "device" in kwargs:
            kwargs["device"] = map_device(kwargs["device"])
        return fn(*args, **kwargs)

    return call


def _wrap_to(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        args = tuple(map_device(a) for a in args)
        if "device" in kwargs:
            kwargs["device"] = map_device(kwargs["device"])
        return fn(self, *args, **kwargs)

    return to


def _npu_namespace(torch: Any) -> types.ModuleType:
    state = {"device": 0}

    def set_device(device: Any) -> None:
        if isinstance(device, int):
            state["device"] = device
        elif isinstance(device, str) and ":" in device:
            state["device"] = int(device.rsplit(":", 1)[1])

    def noop(*_a: Any, **_k: Any) -> None:
        return None

    class _Stream:
        def __init__(self, *_a: Any, **_k: Any) -> None:
            pass

        def synchronize(self) -> None:
            return None

        def wait_stream(self, *_a: Any) -> None:
            return None

    def manual_seed(seed: Any) -> None:  # npu tensors are CPU tensors: seed the CPU generator
        torch.default_generator.manual_seed(int(seed))

    mod = types.ModuleType("torch.npu", "torch.npu of the PTO Forge torch_npu stand-in (device calls are no-ops)")
    mod.__dict__.update(
        set_device=set_device, synchronize=noop, current_device=lambda: state["device"],
        device_count=lambda: 1, is_available=lambda: True, empty_cache=noop, manual_seed=manual_seed,
        manual_seed_all=manual_seed, set_compile_mode=noop, current_stream=lambda *_a: _Stream(),
        Stream=_Stream, reset_peak_memory_stats=noop, max_memory_allocated=lambda *_a: 0,
        memory_allocated=lambda *_a: 0, _is_in_bad_fork=lambda: False, is_initialized=lambda: True,
    )
    return mod


def patch_torch(torch: Any) -> None:
    """Make npu devices mean the CPU in this process (idempotent)."""
    if getattr(torch, _PATCHED, False):
        return
    rename = getattr(getattr(torch, "utils", None), "rename_privateuse1_backend", None)
    if rename is not None:  # makes torch.device("npu:0") constructible; its tensors are then mapped to CPU
        try:
            rename("npu")
        except RuntimeError as exc:  # already renamed by someone else: keep theirs
            log.debug("rename_privateuse1_backend: %s", exc)
    for name in _FACTORIES:
        fn = getattr(torch, name, None)
        if callable(fn):
            setattr(torch, name, _wrap_factory(fn))
    torch.Tensor.to = _wrap_to(torch.Tensor.to)
    torch.Tensor.npu = lambda self, *a, **k: self
    torch.Tensor.is_npu = property(lambda self: False)
    npu = _npu_namespace(torch)
    register = getattr(torch, "_register_device_module", None)
    try:
        if register is not None:
            register("npu", npu)  # torch.manual_seed & co. then find the device module they look for
    except RuntimeError as exc:
        log.debug("_register_device_module: %s", exc)
    torch.npu = npu
    sys.modules.setdefault("torch.npu", npu)
    setattr(torch, _PATCHED, True)


def build_module() -> types.ModuleType:
    """The ``torch_npu`` module: patches torch on creation."""
    import torch

    patch_torch(torch)
    npu = vars(torch)["npu"]  # set by patch_torch (torch has no static `npu` attribute for mypy)
    mod = types.ModuleType("torch_npu", "PTO Forge stand-in for torch_npu: NPU devices map to the CPU")
    mod.__dict__.update({"npu": npu, "__version__": "0.0+pto-forge-emulator", "_pto_forge_stand_in": True})
    return mod


class NpuFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Provides ``torch_npu`` (and ``torch_npu.*`` as empty packages) when the script imports it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "torch_npu" or fullname.startswith("torch_npu."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == "torch_npu":
            mod = build_module()
        else:
            mod = types.ModuleType(spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def install_finder() -> None:
    """Register the stand-in ahead of any real ``torch_npu`` (idempotent)."""
    if not any(isinstance(f, NpuFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, NpuFinder())
