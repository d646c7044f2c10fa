"""A ``torch_npu`` stand-in for running NPU test scripts on the CPU (only under ``python -m runtime.emulator``).

Gym test scripts ``import torch_npu``, call ``torch.npu.set_device/synchronize`` and build tensors on
``"npu:N"`` or on ``device=0``. On this machine there is no NPU, so the stand-in maps every NPU device to the
CPU:

* ``import torch_npu`` gives this module's ``build_module()`` result and patches ``torch`` (once per process);
  ``import torch`` loads it by itself, as torch >= 2.5 auto-loads the real one through its device-backend
  entry point (:func:`install_autoload`; ``TORCH_DEVICE_BACKEND_AUTOLOAD=0`` turns that off, as in torch);
* device arguments ``"npu"``, ``"npu:N"``, ``torch.device("npu:N")`` and a bare index ``N`` (which means the
  NPU on a device host) given to tensor factories and to ``Tensor.to`` mean the CPU; ``Tensor.npu()``
  returns the tensor itself;
* ``torch.npu.*`` device calls (``set_device``, ``synchronize``, ``current_device``, ``empty_cache``,
  ``config.allow_internal_format``, ``get_soc_version`` ...) return what a one-device machine would;
  ``get_soc_version`` follows ``--npuarch`` (A2/A3: 220 = Ascend910B1, DAV_3510: 260 = Ascend950); the rest of
  torch_npu's runtime API (HF32 switches, device properties, generator state, ``amp.autocast``, memory
  statistics) and ``torch_npu.profiler`` are :mod:`runtime.emulator._torch_npu_runtime`'s;
* the ``torch_npu`` ops the gym calls outside kernels (``npu_format_cast``, ``get_npu_format``, ``Format``)
  and the fused operators a golden reference calls (``npu_rms_norm``, ``npu_swiglu``, ``npu_rotary_mul`` ...:
  :mod:`runtime.emulator._torch_npu_ops`) compute on the CPU, also as ``torch.ops.npu.<name>``; formats are
  bookkeeping only (data stays ND);
* any other ``torch_npu.<name>`` / ``torch.npu.<name>`` / ``torch.ops.npu.<name>`` raises :class:`NotProvidedError` (an
  ``AttributeError``, so ``hasattr`` still answers False) naming what the stand-in provides: a vendor test
  that needs an operator the stand-in lacks stops at its own line with that message, not deep inside a
  bare ``AttributeError``.

It is never installed by ``runtime.emulator.install()`` (the verifier's sandbox does not need it): only the
script runner registers it, so a real ``torch_npu`` is never shadowed in a library process.
"""

from __future__ import annotations

import enum
import functools
import importlib.abc
import importlib.machinery
import logging
import os
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

from runtime.emulator._location import user_location
from runtime.emulator._module_specs import distributions_for
from runtime.emulator._session import current_session
from runtime.emulator._torch_npu_agnostic import patch_device_agnostic
from runtime.emulator._torch_npu_device import OWN_DIRS, OWN_PACKAGES, current_index, placed_op
from runtime.emulator._torch_npu_device import install as install_device
from runtime.emulator._torch_npu_dist import register_hccl
from runtime.emulator._torch_npu_placement import ORIGINAL, is_on_npu, mark, npu_index
from runtime.emulator._torch_npu_placement import install as install_placement
from runtime.emulator._torch_npu_runtime import (
    PINNED,
    NpuMemory,
    NpuTensorType,
    is_pinned,
    noop,
    pin_memory,
    profiler_module,
    runtime_names,
)
from runtime.emulator._torch_npu_testing import common_utils_module, testcase_module

__all__ = ["NotProvidedError", "NpuFinder", "build_module", "install_autoload", "install_finder", "map_device",
           "transfer_to_npu"]

log = logging.getLogger(__name__)

_FACTORIES = (
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
    "randint_like", "empty_strided", "normal", "tril_indices", "triu_indices",
    # s40 review: every torch function with a `device` argument - once `x.device` said npu:0 to the script,
    # `torch.hann_window(n, device=x.device)` reached CPU torch with the NPU's device ("Could not run
    # 'aten::empty.memory_format' with arguments from the 'npu' backend"), where before it made a host tensor
    "asarray", "scalar_tensor", "empty_permuted", "hann_window", "hamming_window", "bartlett_window",
    "blackman_window", "kaiser_window", "sparse_coo_tensor", "sparse_csr_tensor",
)
_PATCHED = "_pto_forge_npu_patched"
_FORMAT_ATTR = "_pto_forge_npu_format"

# torch_npu's SocVersion numbers for the architectures ``--npuarch`` names (the gym's conftest tells the
# Ascend 950 by 260 and treats everything else as the 910 family)
_SOC_VERSION = {"DAV_2201": 220, "DAV_3510": 260}
_SOC_NAME = {220: "Ascend910B1", 260: "Ascend950"}


class Format(enum.IntEnum):
    """ACL storage formats (``torch_npu.Format``); the stand-in keeps data ND whatever the format says."""

    UNDEFINED = -1
    NCHW = 0
    NHWC = 1
    ND = 2
    NC1HWC0 = 3
    FRACTAL_Z = 4
    NC1HWC0_C04 = 12
    HWCN = 16
    NDHWC = 27
    FRACTAL_NZ = 29
    NCDHW = 30
    NDC1HWC0 = 32
    FRACTAL_Z_3D = 33


_NPU_TYPES = {"npu"}
NPU_SUBMODULES = ("memory", "streams", "random", "graphs")
"""Modules of torch_npu's ``torch_npu/npu/`` package a script reaches as ``torch.npu.<name>.<fn>`` or imports from
(``from torch_npu.npu.memory import memory_allocated``): the stand-in's ``torch.npu`` itself, as ``utils`` is (s46;
before, ``NotProvidedError`` although the function they name is provided)."""
"""Device types that mean the NPU: ``"cuda"`` joins once the script imports ``torch_npu.contrib.transfer_to_npu``."""


def _is_npu(dev: Any) -> bool:
    if isinstance(dev, bool):
        return False
    if isinstance(dev, int):  # a bare index means the NPU on a device host (torch_npu is the accelerator)
        return True
    if isinstance(dev, str):
        return dev.split(":", 1)[0] in _NPU_TYPES
    return type(dev).__name__ == "device" and getattr(dev, "type", None) in _NPU_TYPES


def _npu_index(dev: Any) -> int | None:
    """The NPU index a device argument names (``"npu:1"``, ``torch.device("npu", 1)``, ``1``; the current device for
    ``"npu"`` / ``torch.device("npu")``), None for one that is not the NPU (s44: the index is kept per tensor)."""
    if not _is_npu(dev):
        return None
    if isinstance(dev, int):
        index: Any = dev
    elif isinstance(dev, str):
        index = dev.split(":", 1)[1] if ":" in dev else None
    else:
        index = getattr(dev, "index", None)
    if index is None:
        return current_index()
    try:
        index = int(index)
    except ValueError:
        raise RuntimeError(f"Invalid device string: '{dev}'") from None
    if index < 0:
        raise RuntimeError(f"Device index must not be negative (got {index})")
    return index


def transfer_to_npu(torch: Any) -> None:
    """``import torch_npu.contrib.transfer_to_npu``: CUDA code runs on the NPU, as the vendor's module makes it.

    Why: vendor scripts ported from CUDA import it and keep ``device="cuda"``, ``x.cuda()``, ``model.cuda()``,
    ``torch.cuda.synchronize()``, ``torch.cuda.Event``, ``torch.autocast("cuda")``; the stand-in imported the module
    and changed nothing, so the first of them died with "Torch not compiled with CUDA enabled" (s37, second round).
    As the real module does: ``"cuda"``/``"cuda:N"``/``torch.device("cuda")`` mean the NPU wherever ``"npu"`` does
    (factories, ``.to``, ``torch.load``, generators, autocast), ``Tensor.cuda``/``Module.cuda`` are ``.npu()``,
    and ``torch.cuda.<name>`` is ``torch.npu.<name>`` for each name the stand-in's ``torch.npu`` has
    (``torch.cuda.amp.autocast`` is ``torch.npu.amp.autocast``). ``is_cuda`` stays False (``device.type`` is
    "npu" to the script, as there: ``_torch_npu_device``)."""
    if "cuda" in _NPU_TYPES:
        return
    _NPU_TYPES.add("cuda")
    npu = vars(torch)["npu"]
    torch.Tensor.cuda = torch.Tensor.npu
    torch.nn.Module.cuda = torch.nn.Module.npu
    cuda = torch.cuda
    for name, value in vars(npu).items():
        if not name.startswith("_") and name not in ("amp", "config", *NPU_SUBMODULES):  # torch.cuda has its own
            setattr(cuda, name, value)
    cuda_amp = getattr(cuda, "amp", None)
    if cuda_amp is not None:
        cuda_amp.autocast = npu.amp.autocast
        cuda_amp.GradScaler = npu.amp.GradScaler


def map_device(dev: Any) -> Any:
    """``"npu"``, ``"npu:N"``, an npu ``torch.device`` or a bare index ``N`` -> ``"cpu"``; anything else unchanged."""
    return "cpu" if _is_npu(dev) else dev


def _context_on_npu() -> int | None:
    """Whether ``with torch.device("npu"):`` / ``torch.set_default_device("npu")`` is in force (a DeviceContext).

    torch's DeviceContext adds the device only to the factories it knew when first asked, the originals the
    stand-in wraps, so the tensors are built on the CPU anyway; they are marked as on the NPU here. The NPU index it
    names (the current device for ``"npu"``), None when no NPU context is in force."""
    try:
        from torch.overrides import _get_current_function_mode_stack
        from torch.utils._device import DeviceContext
    except ImportError:
        return None
    for mode in reversed(_get_current_function_mode_stack()):
        if isinstance(mode, DeviceContext):
            return _npu_index(mode.device)
    return None


def _wrap_factory(fn: Callable, follows_context: bool = False, from_data: bool = False) -> Callable:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        index = _npu_index(kwargs.get("device"))
        given = kwargs.get("device") is not None
        if not given and follows_context:
            index = _context_on_npu()
            given = index is not None
        on_npu = index is not None
        if kwargs.get("device") is not None:
            kwargs["device"] = map_device(kwargs["device"])
        pinned = kwargs.pop("pin_memory", None)  # `torch.empty(n, pin_memory=True)`: CPU torch refuses it without
        result = fn(*args, **kwargs)  # a device; the result says it is pinned (`is_pinned`) unless built on the NPU
        if pinned and not on_npu and _is_tensor(result):
            result.__dict__[PINNED] = True
        if on_npu or given:  # built on the NPU: its `.npu()` is itself, its `.cpu()` a copy (`_moved`); a device
            mark(result, on_npu, index)  # given as the host's: a host tensor (`torch.empty_like(x_npu, device="cpu")`)
        elif from_data and _is_tensor(result):
            # `torch.tensor([a_npu, b_npu])` (0-d NPU tensors, read with `.item()` on a device host): the data is
            # a list, so the result is on the default device - the host - though the placement mode saw NPU
            # operands in it; `torch.tensor(x_npu)` / `torch.as_tensor(x_npu)` stay where `x_npu` is (s39b)
            data = args[0] if args else kwargs.get("data")
            mark(result, _is_tensor(data) and is_on_npu(data), npu_index(data) if _is_tensor(data) else None)
        return result

    setattr(call, ORIGINAL, fn)
    return call


def _is_cpu(dev: Any) -> bool:
    return isinstance(dev, str) and (dev == "cpu" or dev.startswith("cpu:")) or (
        type(dev).__name__ == "device" and getattr(dev, "type", None) == "cpu")


def _is_tensor(obj: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.Tensor)


_HOST = -1
"""`_destination`'s answer for the host"""


def _destination(targets: list[Any]) -> int | None:
    """Where ``.to(*targets)`` (of a tensor or a module) moves: the NPU index, `_HOST`, or None for neither (a dtype
    only). A tensor among them is a device: ``x.to(other)`` goes where ``other`` lives."""
    for a in targets:
        index = npu_index(a) if _is_tensor(a) else _npu_index(a)
        if index is not None:
            return index
    return _HOST if any(_is_tensor(a) or _is_cpu(a) for a in targets) else None


def _moved(self: Any, result: Any, to_npu: bool, index: int | None = None) -> Any:
    """The result of moving ``self`` between the host and the (emulated) NPU ``index`` (None: the current device),
    with a device host's copy semantics.

    Both are the CPU here, so torch returned ``self``; a device host copies a host tensor to the NPU and back, and
    a script relies on it: it runs an in-place kernel on ``y.npu()`` and then computes the golden from ``y``, or
    keeps ``out.cpu()`` while the next kernel call overwrites ``out`` (s37: the golden read the kernel's output, the
    comparison failed). So the move copies, unless the tensor is already where it goes (an NPU tensor's ``.npu()``
    is itself, as on a device host). Tensors an operation computes from NPU tensors are on the NPU too
    (``_torch_npu_placement`` marks them). Moving between two NPUs (``x1.to("npu:0")``) copies as well (s44)."""
    there = (current_index() if index is None else index) if to_npu else None
    if result is self and npu_index(self) != there:
        result = self.clone()
        if hasattr(self, _FORMAT_ATTR):
            setattr(result, _FORMAT_ATTR, getattr(self, _FORMAT_ATTR))
    if to_npu or result is not self:
        mark(result, to_npu, there)
    return result


def _wrap_to(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        where = _destination([*args, kwargs.get("device"), kwargs.get("other")])
        args = tuple(map_device(a) for a in args)
        if "device" in kwargs:
            kwargs["device"] = map_device(kwargs["device"])
        result = fn(self, *args, **kwargs)
        return result if where is None else _moved(self, result, where != _HOST, None if where == _HOST else where)

    setattr(to, ORIGINAL, fn)
    return to


_TENSOR_FACTORIES = ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "new_empty_strided")


_LOADS_TO_NPU: list[dict[int, int]] = []
"""one set per ``torch.load`` running: the storages (`_storage_key`) it put on the NPU - a ``map_location``
function's ``storage.npu()``, or the stand-in's deserializer of ``"npu..."`` locations (`_npu_deserialize`), each
with the NPU index it went to"""

_SAVES_FROM_NPU: list[dict[int, int]] = []
"""one dict per ``torch.save`` running: the storages of the NPU tensors it pickled, with their NPU index
(`_wrap_reduce_ex`)"""


def _storage_key(storage: Any) -> int:
    """A storage's identity, the same for every Python object of it (``_cdata``: the C++ storage's address; an
    empty storage's data pointer is 0 for all of them)."""
    key = getattr(storage, "_cdata", None)
    if isinstance(key, int):
        return key
    untyped = getattr(storage, "_untyped_storage", None)  # a TypedStorage
    return _storage_key(untyped) if untyped is not None else int(storage.data_ptr())


def _storage_npu(self: Any, device: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
    """``storage.npu()``, which torch_npu gives every storage (``generate_methods_for_privateuse1_backend``):
    the same host memory here; inside ``torch.load(..., map_location=lambda s, loc: s.npu())`` the tensors built
    on it are then on the NPU, as on a device host (s41: the lambda died with "'UntypedStorage' object has no
    attribute 'npu'")."""
    if _LOADS_TO_NPU:
        _LOADS_TO_NPU[-1][_storage_key(self)] = (None if device is None else _npu_index(device)) or current_index()
    return self


def _storage_is_npu(self: Any) -> bool:
    return bool(_LOADS_TO_NPU) and _storage_key(self) in _LOADS_TO_NPU[-1]


def _patch_storages(torch: Any) -> None:
    """``npu()`` / ``is_npu`` on the storage classes, where torch has not got them (`_storage_npu`)."""
    for name in ("UntypedStorage", "TypedStorage"):
        cls = getattr(torch, name, None)
        if cls is None:
            continue
        if not hasattr(cls, "npu"):
            cls.npu = _storage_npu
        if not hasattr(cls, "is_npu"):
            cls.is_npu = property(_storage_is_npu)


def _npu_tag(storage: Any) -> str | None:
    """`torch.save`'s location tag of a storage an NPU tensor uses: ``"npu:<index>"``, as a device host writes it."""
    if _SAVES_FROM_NPU and _storage_key(storage) in _SAVES_FROM_NPU[-1]:
        return f"npu:{_SAVES_FROM_NPU[-1][_storage_key(storage)]}"
    return None


def _npu_deserialize(storage: Any, location: Any) -> Any:
    """`torch.load`'s restore of a storage whose location (saved, or given by ``map_location``) is the NPU: the
    host storage as it is, its tensors marked as on the NPU after the load (`_load_with_function`)."""
    if not _is_npu(str(location)):
        return None
    if _LOADS_TO_NPU:
        _LOADS_TO_NPU[-1][_storage_key(storage)] = _npu_index(str(location)) or 0
    return storage


def _wrap_reduce_ex(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``Tensor.__reduce_ex__`` while a ``torch.save`` runs: the storage of an NPU tensor is noted for `_npu_tag`."""

    @functools.wraps(fn)
    def reduce_ex(self: Any, proto: Any) -> Any:
        if _SAVES_FROM_NPU and is_on_npu(self):
            try:
                _SAVES_FROM_NPU[-1][_storage_key(self.untyped_storage())] = npu_index(self) or 0
            except (RuntimeError, NotImplementedError):  # a tensor without storage (sparse, meta)
                pass
        return fn(self, proto)

    return reduce_ex


def _wrap_save(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.save``: the NPU tensors' storages are tagged ``"npu:<index>"`` in the file, as on a device host (s42:
    every storage said ``"cpu"``, so a ``map_location`` function reading its ``location`` argument -
    ``lambda s, loc: s.npu() if loc.startswith("npu") else s`` - and a dict keyed ``{"npu:0": ...}`` saw host
    tensors only)."""

    @functools.wraps(fn)
    def save(*args: Any, **kwargs: Any) -> Any:
        _SAVES_FROM_NPU.append({})
        try:
            return fn(*args, **kwargs)
        finally:
            _SAVES_FROM_NPU.pop()

    return save


def _tensors(obj: Any, depth: int = 0) -> list[Any]:
    """The tensors of a loaded object (nested dicts / lists / tuples, a module's parameters and buffers)."""
    if depth > 6:
        return []
    if _is_tensor(obj):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _tensors(v, depth + 1)]
    if isinstance(obj, list | tuple):
        return [t for v in obj for t in _tensors(v, depth + 1)]
    if callable(getattr(obj, "parameters", None)) and callable(getattr(obj, "buffers", None)):
        return [*obj.parameters(), *obj.buffers()]
    return []


def _load_with_function(fn: Callable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``torch.load`` run so that each tensor is where its storage went: on the NPU when a ``map_location``
    function returned ``storage.npu()`` / ``storage.npu(0)``, or the storage's location - saved, or mapped by a
    ``map_location`` string, device or dict - is the NPU (`_npu_deserialize`); on the host otherwise (the usual
    ``lambda storage, loc: storage``, ``map_location="cpu"``)."""
    to_npu: dict[int, int] = {}
    _LOADS_TO_NPU.append(to_npu)
    try:
        result = fn(*args, **kwargs)
    finally:
        del _LOADS_TO_NPU[next(i for i, d in enumerate(_LOADS_TO_NPU) if d is to_npu)]
    for t in _tensors(result):
        try:
            index = to_npu.get(_storage_key(t.untyped_storage()))
        except (RuntimeError, NotImplementedError):  # a tensor without storage (sparse, meta)
            index = None
        mark(t, index is not None, index)
    return result


def _load_location(where: Any) -> Any:
    """A ``map_location`` as torch is given it: an NPU device (``"npu"``, ``"npu:1"``, a ``torch.device``, a bare
    index, ``"cuda"`` after ``transfer_to_npu``) is the string ``"npu:N"`` the stand-in's deserializer restores;
    in a dict each value so; anything else (``"cpu"``, a function) as it is."""
    if isinstance(where, dict):  # {"cuda:0": "npu:0"}: saved location -> where it goes
        return {k: _load_location(v) for k, v in where.items()}
    if not (isinstance(where, str | int) or type(where).__name__ == "device") or not _is_npu(where):
        return where
    if isinstance(where, str):
        index: Any = where.split(":", 1)[1] if ":" in where else None
    else:
        index = where if isinstance(where, int) else getattr(where, "index", None)
    return f"npu:{current_index() if index is None else index}"


def _wrap_load(fn: Callable) -> Callable:
    """``torch.load``: each tensor comes back where its storage's location puts it - saved ``"npu:0"`` (`_wrap_save`)
    or mapped there by ``map_location`` (a string, device, dict or function) is on the NPU, else on the host.

    Why per storage: a tensor pickles its ``__dict__``, the stand-in's NPU mark with it, so a tensor saved from the
    NPU came back *on the NPU* whatever ``map_location`` said, and the script's ``torch.load(f,
    map_location="cpu")["out"].numpy()`` - fine on a device host - raised "can't convert npu:0 device type
    tensor to numpy" (s39, second round). Without ``map_location`` a tensor returns where it was saved, as
    there (a file a device host wrote, tagged ``"npu:0"``, loads too)."""

    @functools.wraps(fn)
    def load(*args: Any, **kwargs: Any) -> Any:
        if "map_location" in kwargs:
            kwargs["map_location"] = _load_location(kwargs["map_location"])
        elif len(args) > 1:  # torch.load(f, "npu:0")
            args = (args[0], _load_location(args[1]), *args[2:])
        return _load_with_function(fn, args, kwargs)

    return load


def _mark_module(module: Any, on_npu: bool, index: int | None = None) -> Any:
    for t in (*module.parameters(), *module.buffers()):
        mark(t, on_npu, index)
    return module


def _npu_arg(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The NPU index ``x.npu(device)`` / ``module.npu(device)`` names (``1``, ``"npu:1"``, a ``torch.device``), None
    (the current device) when none is given."""
    device = args[0] if args else kwargs.get("device")
    return None if device is None else _npu_index(device if _is_npu(device) else f"npu:{int(device)}")


def _patch_module(torch: Any) -> None:
    """``module.npu()`` / ``.to("npu")`` / ``.cpu()`` say where the module's parameters and buffers live.

    ``module.npu()`` keeps the tensors (torch moves them in place on a device host: the same Parameter objects),
    and marks them as on the NPU, so an optimizer kernel run on ``p.npu()`` updates ``p`` as it does there (before,
    ``p.npu()`` of a parameter of a moved module was a copy); ``.to``/``.cpu()`` copy them through ``Tensor.to``."""
    module, module_to, module_cpu = torch.nn.Module, torch.nn.Module.to, torch.nn.Module.cpu

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = module_to(self, *args, **kwargs)
        where = _destination([*args, kwargs.get("device"), kwargs.get("tensor")])
        if where is not None:
            _mark_module(self, where != _HOST, None if where == _HOST else where)
        return result

    parameter = torch.nn.Parameter
    new_parameter = parameter.__new__

    def new(cls: Any, data: Any = None, requires_grad: bool = True) -> Any:
        """``nn.Parameter(x_npu)`` lives on the NPU, as on a device host: torch makes a new tensor object of the
        data (``_make_subclass``) past the placement mode, so the parameter was a host tensor and the in-place
        kernel a script ran on ``w.npu()`` wrote a copy (s39, second round)."""
        result = new_parameter(cls, data, requires_grad)
        if _is_tensor(data) and is_on_npu(data) and result is not data:
            mark(result, True, npu_index(data))
        return result

    parameter.__new__ = staticmethod(functools.wraps(new_parameter)(new))
    module.npu = lambda self, *a, **k: _mark_module(self, True, _npu_arg(a, k))
    module.to = functools.wraps(module_to)(to)
    module.cpu = functools.wraps(module_cpu)(lambda self: _mark_module(module_cpu(self), False))


def device_count() -> int:
    """``torch.npu.device_count()``: the devices ``ASCEND_RT_VISIBLE_DEVICES`` lists (as torch_npu counts them), else
    one. Tensors may still name any index (``"npu:3"``): each is the CPU here."""
    visible = [d for d in os.environ.get("ASCEND_RT_VISIBLE_DEVICES", "").split(",") if d.strip()]
    return max(1, len(visible))


def soc_version() -> int:
    """The SocVersion number of the architecture the emulator runs as (``--npuarch``)."""
    s = current_session()
    return _SOC_VERSION.get(s.options.npuarch if s is not None else "DAV_2201", 220)


_NO_PRIORITY = ("NPU does not support Stream.{}() currently. (torch_npu's own error, raised on a device host "
                "too: NPU streams take a priority argument but do not report priorities)")


def _npu_namespace(torch: Any) -> types.ModuleType:
    state = {"device": 0}
    memory = NpuMemory()

    def set_device(device: Any) -> None:
        """``torch.npu.set_device(1)`` / ``("npu:1")`` / ``(torch.device("npu", 1))``: later ``"npu"`` tensors go there.
        A negative index or a device that is not the NPU raises as torch_npu does; an index past ``device_count()``
        is accepted (a script written for an eight-device host runs; each device is the CPU here)."""
        if isinstance(device, str) and device.strip().isdigit():
            device = int(device)
        if isinstance(device, bool) or not (isinstance(device, int) or _is_npu(device)):
            raise RuntimeError(f"Expected a npu device, but got: {device}")
        if isinstance(device, int) and device < 0:
            raise RuntimeError(f"Device index must not be negative (got {device})")
        if isinstance(device, str) and ":" not in device or \
                not isinstance(device, int | str) and getattr(device, "index", None) is None:
            return  # "npu" / torch.device("npu"): the current device stays
        index = _npu_index(device)
        if index is not None:
            state["device"] = index

    def _index_of(device: Any) -> int:
        """The device index of a stream / device argument: None, ``"npu"``, ``"npu:1"``, 1, a ``torch.device``."""
        if isinstance(device, str):
            return int(device.rsplit(":", 1)[1]) if ":" in device else int(state["device"])
        index = device if device is None or isinstance(device, int) else getattr(device, "index", None)
        return int(state["device"]) if index is None else int(index)

    class _Stream:
        """An NPU stream. One queue runs everything here (each call completes before it returns), so waits and
        queries have nothing to do; what a script can see is kept as on a device host (s42): the current stream
        is the default one until ``torch.npu.stream(s)`` / ``set_stream(s)`` makes ``s`` current (per thread),
        ``current_stream() == default_stream()`` at start, streams compare and hash by identity of the queue. Before,
        each call made a new object, so a script's ``assert torch.npu.current_stream() == s`` inside
        ``with torch.npu.stream(s)`` failed."""

        _made = [0]

        def __init__(self, device: Any = None, priority: int = 0, *, _default: bool = False, **_k: Any) -> None:
            self._index = _index_of(device)
            self._priority = int(priority)  # accepted as torch_npu accepts it, and not readable (`priority`)
            if not _default:
                self._made[0] += 1
            self.stream_id = 0 if _default else self._made[0]

        @staticmethod
        def priority_range() -> tuple[int, int]:
            """torch_npu 2.14.0 raises here on a device host (its C++ ``THNPStream_priority_range``), so does the
            emulator: s43, it was a raw AttributeError of the stand-in's own class."""
            raise RuntimeError(_NO_PRIORITY.format("priority_range"))

        @property
        def priority(self) -> int:
            """Not readable, as in torch_npu 2.14.0 (``THNPStream_get_priority`` raises); ``Stream(priority=p)``
            is accepted."""
            raise RuntimeError(_NO_PRIORITY.format("get_priority"))

        npu_stream = property(lambda self: 0 if self.stream_id <= 0 else 0x10000 + self.stream_id,
                              doc="the raw stream handle some scripts read (none here: 0 for the default stream)")

        @property
        def device(self) -> Any:
            """the stream's device, as torch's streams have it: ``torch.compile`` reads the current stream's while
            it sets up tracing (s40: without it every ``torch.compile`` died with "'_Stream' object has no
            attribute 'device'")"""
            return torch.device("npu", self._index)

        @property
        def device_index(self) -> int:
            return self._index

        device_type = "npu"

        def synchronize(self) -> None:
            memory.sample()

        def wait_stream(self, *_a: Any) -> None:
            return None

        def wait_event(self, *_a: Any) -> None:
            return None

        def record_event(self, event: Any = None) -> Any:
            event = _Event() if event is None else event
            event.record(self)
            return event

        def query(self) -> bool:
            return True

        def __eq__(self, other: object) -> bool:
            return isinstance(other, _Stream) and (other.stream_id, other._index) == (self.stream_id, self._index)

        def __hash__(self) -> int:
            return hash((self.stream_id, self._index))

        def __repr__(self) -> str:
            return f"<torch_npu.npu.Stream device=npu:{self._index} npu_stream={self.npu_stream:#x}>"

    defaults: dict[int, _Stream] = {}
    current = threading.local()

    def default_stream(device: Any = None) -> _Stream:
        index = _index_of(device)
        stream = defaults.get(index)
        if stream is None:
            stream = defaults.setdefault(index, _Stream(index, _default=True))
        return stream

    def current_stream(device: Any = None) -> _Stream:
        index = _index_of(device)
        streams = getattr(current, "streams", None)
        stream = streams.get(index) if streams else None
        return default_stream(index) if stream is None else stream

    def set_stream(stream: Any) -> None:
        if stream is None:
            return
        if not hasattr(current, "streams"):
            current.streams = {}
        current.streams[stream.device_index] = stream

    class StreamContext:
        """``with torch.npu.stream(s)`` / ``StreamContext(s)``: ``s`` is the current stream of its device inside
        (a ``None`` stream changes nothing)."""

        def __init__(self, stream: Any) -> None:
            self.stream = stream
            self._prev: Any = None

        def __enter__(self) -> Any:
            if self.stream is not None:
                self._prev = current_stream(self.stream.device_index)
                set_stream(self.stream)
            return self.stream

        def __exit__(self, *_exc: Any) -> None:
            if self._prev is not None:
                set_stream(self._prev)

    class _DeviceContext:
        """``with torch.npu.device(i)`` / ``device_of(t)``: ``i`` is the current device inside (-1 or ``None``:
        unchanged)."""

        def __init__(self, device: Any) -> None:
            self.index = None if device is None else npu_index(device) if _is_tensor(device) else _index_of(device)
            self._prev: int | None = None

        def __enter__(self) -> None:
            if self.index is not None and self.index >= 0:
                self._prev = int(state["device"])
                state["device"] = self.index

        def __exit__(self, *_exc: Any) -> None:
            if self._prev is not None:
                state["device"] = self._prev

    class _Event:
        """Host-clock timing event (``elapsed_time`` in milliseconds, like the device's)."""

        def __init__(self, *_a: Any, **_k: Any) -> None:
            self._t: float | None = None

        def record(self, *_a: Any) -> None:
            memory.sample()
            self._t = time.perf_counter()

        def synchronize(self) -> None:
            return None

        def wait(self, *_a: Any) -> None:
            return None

        def query(self) -> bool:
            return True

        def elapsed_time(self, end: _Event) -> float:
            if self._t is None or end._t is None:
                raise RuntimeError("Both events must be recorded before calculating elapsed time.")
            s = current_session()
            if s is not None:  # s25 gym sweep: a performance test printed "NPU Kernel: 45 ms, speedup 4.19x" as is
                file, line = user_location()
                s.warn("EMU_TIMING", "torch.npu.Event.elapsed_time measures the emulator on the host CPU, not the "
                       "NPU: timings and speedups printed from it say nothing of the device (see `python -m "
                       "runtime.toolchain` for cost estimates)", file=file, line=line)
            return (end._t - self._t) * 1000.0

    def manual_seed(seed: Any) -> None:  # npu tensors are CPU tensors: seed the CPU generator
        torch.default_generator.manual_seed(int(seed))

    def get_device_name(*_a: Any) -> str:
        return _SOC_NAME.get(soc_version(), "Ascend910B1")

    config = types.ModuleType("torch_npu.npu.config", "torch_npu.npu.config of the stand-in (flags are recorded)")
    config.__dict__.update(allow_internal_format=False)

    mod = types.ModuleType("torch.npu", "torch.npu of the PTO Forge torch_npu stand-in (device calls are no-ops)")
    mod.__dict__.update(
        set_device=set_device, synchronize=memory.sample, current_device=lambda: state["device"],
        device_count=device_count, is_available=lambda: True, manual_seed=manual_seed,
        manual_seed_all=manual_seed, seed=noop, seed_all=noop, set_compile_mode=noop,
        current_stream=current_stream, default_stream=default_stream, Stream=_Stream, Event=_Event,
        stream=StreamContext, device=_DeviceContext, _is_in_bad_fork=lambda: False,
        is_initialized=lambda: True, init=noop, default_generators=(torch.default_generator,),
        get_soc_version=soc_version, get_device_name=get_device_name,
        config=config, Format=Format, **runtime_names(torch, get_device_name, memory),
    )
    mod.__dict__.update(set_stream=set_stream, StreamContext=StreamContext)
    mod.__dict__["device_of"] = _DeviceContext  # `with torch.npu.device_of(x1)`: x1's device is current inside (s44)
    mod.__dict__["utils"] = mod  # `torch.npu.utils.get_device_name()`: as `import torch_npu.npu.utils` (NpuFinder)
    for sub in NPU_SUBMODULES:  # `torch.npu.memory.memory_allocated()`, `from torch_npu.npu.streams import Event`
        mod.__dict__[sub] = mod
    provided = sorted(n for n in vars(mod) if not n.startswith("__"))
    mod.__dict__["__getattr__"] = _module_getattr(provided, "torch.npu")
    return mod


def npu_format_cast(tensor: Any, acl_format: Any, *_a: Any, **_k: Any) -> Any:
    """``torch_npu.npu_format_cast``: the same data (a view), tagged with the format ``get_npu_format`` reports."""
    fmt = int(acl_format)
    if fmt == get_npu_format(tensor):
        return tensor
    out = tensor.view(tensor.shape)
    setattr(out, _FORMAT_ATTR, fmt)
    return out


def npu_format_cast_(tensor: Any, acl_format: Any) -> Any:
    """In-place ``npu_format_cast_(format or tensor)``: tags the tensor itself."""
    setattr(tensor, _FORMAT_ATTR, get_npu_format(acl_format) if hasattr(acl_format, "shape") else int(acl_format))
    return tensor


def get_npu_format(tensor: Any) -> int:
    """``torch_npu.get_npu_format``: ND (2) unless ``npu_format_cast`` tagged the tensor."""
    return int(getattr(tensor, _FORMAT_ATTR, Format.ND))


def _type_target(torch: Any, dtype: Any) -> tuple[Any, bool | None]:
    """What ``x.type(dtype)`` casts to, as a ``torch.dtype`` where it names a legacy type, and where the result
    lives: True the NPU (``torch.npu.HalfTensor``, ``"torch.npu.HalfTensor"``), False the host (``torch.HalfTensor``,
    ``"torch.HalfTensor"``: a legacy type names its device), None where ``x`` is (a ``torch.dtype``). The cast is
    given as a dtype so that a call the wrapper makes reaches it again unchanged: a torch function mode of the
    script's (``with torch.device("npu")``) calls ``Tensor.type`` - this wrapper - once more."""
    if isinstance(dtype, NpuTensorType):
        return dtype.dtype, True
    if isinstance(dtype, str) and dtype.startswith("torch."):
        to_npu = dtype.startswith("torch.npu.")
        legacy = getattr(torch, dtype[len("torch.npu." if to_npu else "torch."):], None)
        if legacy is not None and type(legacy).__name__ == "tensortype":
            return legacy.dtype, to_npu
        return dtype, None
    if type(dtype).__name__ == "tensortype" and not getattr(dtype, "is_cuda", False):  # torch.HalfTensor
        return dtype.dtype, False
    return dtype, None


def _wrap_type(torch: Any, type_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``Tensor.type`` as on a device host. Why: torch knows no NPU types; there ``x.type()`` of an NPU tensor is
    ``"torch.npu.FloatTensor"`` (a script compares it, or passes it on: ``y.type(x.type())``), and a legacy type
    names a device: ``x.type(torch.npu.HalfTensor)`` of a host tensor is a copy on the NPU, ``x.type(torch.
    HalfTensor)`` of an NPU tensor a copy on the host (`_moved`). A ``torch.dtype`` keeps the device."""

    @functools.wraps(type_fn)
    def type_(self: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
        if dtype is None and not args and "dtype" not in kwargs:
            name = type_fn(self)
            if is_on_npu(self) and name.startswith("torch.") and not name.startswith(("torch.cuda.", "torch.npu.")):
                return "torch.npu." + name[len("torch."):]
            return name
        if dtype is None:
            dtype = kwargs.pop("dtype")
        dtype, to_npu = _type_target(torch, dtype)
        src = self if to_npu is None else _moved(self, self, to_npu)
        result = type_fn(src, dtype, *args, **kwargs)
        if to_npu is not None:
            mark(result, to_npu)
        return result

    setattr(type_, ORIGINAL, type_fn)
    return type_


def _wrap_numpy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``Tensor.numpy`` as on a device host: an NPU tensor's raises torch_npu's ``TypeError`` ("can't convert npu:0
    device type tensor to numpy. Use Tensor.cpu() ..."), ``force=True`` copies, a host tensor is unchanged.

    Why: NPU tensors are CPU tensors here, so ``y_npu.numpy()`` (also ``np.asarray(y_npu)``, ``np.testing.
    assert_allclose(y_npu, ...)``, which go through ``Tensor.__array__``) worked and a script that fails at that line
    on a device host passed on the emulator (s39). PTO Forge's own code - the emulator reading kernel arguments, the
    gym import's observer summarising the tensors a script passes - reads through ``numpy()`` (directly or through
    torch's ``__array__``) and is let through: it is not the script's line (the observer was refused at first, and
    `orchestrator import` of a gym operator found no golden)."""

    @functools.wraps(fn)
    def numpy(self: Any, *, force: bool = False) -> Any:
        if is_on_npu(self) and not force and not _ours(sys._getframe(1)):
            raise TypeError(f"can't convert npu:{npu_index(self)} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        return fn(self, force=force)

    setattr(numpy, ORIGINAL, fn)
    return numpy


_PASS_THROUGH = ("runtime.emulator._torch_npu_placement",)
"""modules of the stand-in whose frames sit between a caller and ``numpy()`` without being the caller: the placement
mode's ``__torch_function__`` runs every torch call, ``Tensor.__array__`` too"""


def _ours(frame: Any) -> bool:
    """Whether the call comes from PTO Forge's own packages (by module name or file), past torch's own frames and
    the placement mode's (``np.asarray`` -> ``Tensor.__array__`` -> the mode -> ``handle_torch_function`` ->
    ``Tensor.__array__``).

    The mode's frame is not the caller: taken for one (s39's first version), it let every ``np.asarray(y_npu)``
    and ``np.testing.assert_allclose(y_npu, ...)`` of a script through, where a device host raises."""
    for _ in range(8):
        if frame is None:
            return False
        name = str(frame.f_globals.get("__name__", ""))
        top = name.split(".", 1)[0]
        if name not in _PASS_THROUGH:
            if top in OWN_PACKAGES or frame.f_code.co_filename.startswith(OWN_DIRS):
                return True
            if top != "torch":
                return False
        frame = frame.f_back
    return False


def _patch_printing(torch: Any) -> None:
    """``print(y_npu)`` / ``repr`` show ``device='npu:0'``, as on a device host (torch prints the device of a tensor
    that is not on the default device, the host's CPU there).

    Why: the stand-in's NPU tensors are CPU tensors, so their text lost the device suffix; a script printing its
    output, or a log compared with a device host's, read a host tensor (s39, second round). torch builds the text
    in ``_tensor_str._str_intern`` and lays the suffixes out in ``_add_suffixes`` (line breaks at the print width);
    the device goes first among them there, as torch puts it."""
    ts = getattr(torch, "_tensor_str", None)
    str_intern, add_suffixes = getattr(ts, "_str_intern", None), getattr(ts, "_add_suffixes", None)
    if ts is None or not (callable(str_intern) and callable(add_suffixes)) or hasattr(str_intern, ORIGINAL):
        return
    local = threading.local()

    @functools.wraps(str_intern)
    def _str_intern(inp: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_on_npu(inp):
            return str_intern(inp, *args, **kwargs)
        local.device = f"device='npu:{npu_index(inp)}'"
        try:
            return str_intern(inp, *args, **kwargs)
        finally:
            local.device = None

    @functools.wraps(add_suffixes)
    def _add_suffixes(tensor_str: Any, suffixes: list[Any], *args: Any, **kwargs: Any) -> Any:
        device = getattr(local, "device", None)
        if device is not None:
            local.device = None
            suffixes = [device, *suffixes]
        return add_suffixes(tensor_str, suffixes, *args, **kwargs)

    setattr(_str_intern, ORIGINAL, str_intern)
    ts._str_intern, ts._add_suffixes = _str_intern, _add_suffixes


def _wrap_set_default_tensor_type(torch: Any, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``torch.set_default_tensor_type(torch.npu.FloatTensor)`` (or ``"torch.npu.FloatTensor"``): new tensors are
    that dtype on the NPU, as on a device host - the host type's default plus ``torch.set_default_device("npu")``;
    a host type afterwards makes them host tensors again. Why: torch itself refuses a type it does not know
    ("invalid type object"), which the NPU types (`NpuTensorType`) are."""
    state = {"npu": False}

    @functools.wraps(fn)
    def set_default_tensor_type(t: Any) -> None:
        if isinstance(t, str) and t.startswith("torch.npu."):
            t = getattr(torch.npu, t[len("torch.npu."):], t)
        if isinstance(t, NpuTensorType):
            fn(t._cpu)
            torch.set_default_device("npu")
            state["npu"] = True
            return
        fn(t)
        if state["npu"]:
            torch.set_default_device(None)
            state["npu"] = False

    return set_default_tensor_type


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
            setattr(torch, name, _wrap_factory(fn, follows_context=not name.endswith("_like"),
                                               from_data=name in ("tensor", "as_tensor")))
    torch.Tensor.to = _wrap_to(torch.Tensor.to)
    for name in _TENSOR_FACTORIES:  # x.new_zeros(..., device="npu:0")
        fn = getattr(torch.Tensor, name, None)
        if callable(fn):
            setattr(torch.Tensor, name, _wrap_factory(fn))
    torch.Tensor.npu = lambda self, *a, **k: _moved(self, self, True, _npu_arg(a, k))
    cpu = torch.Tensor.cpu
    torch.Tensor.cpu = functools.wraps(cpu)(lambda self, *a, **k: _moved(self, cpu(self, *a, **k), False))
    setattr(torch.Tensor.cpu, ORIGINAL, cpu)
    _patch_module(torch)  # a golden written as an nn.Module, moved with .npu() / .to("npu")
    torch.load = _wrap_load(torch.load)
    torch.save = _wrap_save(torch.save)
    torch.Tensor.__reduce_ex__ = _wrap_reduce_ex(torch.Tensor.__reduce_ex__)
    torch.serialization.register_package(1, _npu_tag, _npu_deserialize)  # before the CPU's (10)
    _patch_storages(torch)  # storage.npu() in a map_location function
    torch.Tensor.is_npu = property(is_on_npu)  # True for a tensor on the (emulated) NPU, as on a device host
    torch.Tensor.type = _wrap_type(torch, torch.Tensor.type)
    torch.Tensor.numpy = _wrap_numpy(torch.Tensor.numpy)
    _patch_printing(torch)
    torch.set_default_tensor_type = _wrap_set_default_tensor_type(torch, torch.set_default_tensor_type)
    npu = _npu_namespace(torch)
    patch_device_agnostic(torch, npu, map_device)
    install_placement(torch)  # results of operations on NPU tensors live on the NPU
    install_device(torch)  # x.device says npu:<index> to the script; mixing devices raises as on a device host
    stream_type, record = npu.Stream, torch.Tensor.record_stream
    torch.Tensor.record_stream = lambda self, stream: None if isinstance(stream, stream_type) else record(self, stream)
    torch.Tensor.pin_memory = pin_memory  # a copy that says it is pinned (nothing to pin without a device)
    torch.Tensor.is_pinned = is_pinned
    register = getattr(torch, "_register_device_module", None)
    try:
        if register is not None:
            register("npu", npu)  # torch.manual_seed & co. then find the device module they look for
    except RuntimeError as exc:
        log.debug("_register_device_module: %s", exc)
    torch.npu = npu
    sys.modules.setdefault("torch.npu", npu)
    register_hccl(torch)  # dist.init_process_group("hccl"): gloo's collectives on the emulated NPUs (s44)
    setattr(torch, _PATCHED, True)


class NotProvidedError(AttributeError):
    """A ``torch_npu`` / ``torch.ops.npu`` name the stand-in does not provide (an ``AttributeError``, so
    ``hasattr`` and ``getattr(..., default)`` keep working; the message lists what is provided)."""


def _not_provided(qualname: str, provided: list[str]) -> NotProvidedError:
    return NotProvidedError(f"{qualname} is not provided by the emulator's torch_npu stand-in "
                            f"(provided: {', '.join(provided)})")


def _module_getattr(provided: list[str], module: str = "torch_npu") -> Callable[[str], Any]:
    """The PEP 562 ``__getattr__`` of a stand-in module: a clear error for the names it lacks."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):  # import machinery probes: the plain answer
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise _not_provided(f"{module}.{name}", provided)

    return __getattr__


class _OpPacket:
    """``torch.ops.npu.<name>``: callable, with the ``.default`` overload torch's op packets have."""

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self.__name__ = name
        self.default = fn
        self._fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<torch.ops.npu.{self.__name__} (PTO Forge torch_npu stand-in)>"


class _NpuOpsNamespace(types.SimpleNamespace):
    """``torch.ops.npu`` of the stand-in: the fused operators it implements; anything else a clear error.

    Why not ``torch.library``: the ops would need their full schemas and dispatch registrations for no gain (the
    goldens only call them); this namespace gives the same call forms (``torch.ops.npu.x(...)``, ``.default``).
    """

    def __init__(self, ops: dict[str, Callable[..., Any]]) -> None:
        super().__init__(**{name: _OpPacket(name, fn) for name, fn in ops.items()})

    def __getattr__(self, name: str) -> Any:  # only reached for names not set in __init__
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise _not_provided(f"torch.ops.npu.{name}", sorted(vars(self)))


def build_module() -> types.ModuleType:
    """The ``torch_npu`` module: patches torch on creation, serves the fused operators of ``_torch_npu_ops``
    (also as ``torch.ops.npu.<name>``) and a clear error for any other name."""
    import torch

    from runtime.emulator._torch_npu_ops import OPS  # imports torch: only here, never at stand-in import
    from runtime.emulator._torch_npu_ops_fa import OPS as FA_OPS

    patch_torch(torch)
    npu = vars(torch)["npu"]  # set by patch_torch (torch has no static `npu` attribute for mypy)
    mod = types.ModuleType("torch_npu", "PTO Forge stand-in for torch_npu: NPU devices map to the CPU")
    prof = profiler_module(torch)  # the real torch_npu imports its profiler with the package
    prof.__path__ = []
    sys.modules["torch_npu.profiler"] = prof
    exports: dict[str, Any] = {"npu": npu, "profiler": prof, "Format": Format, "npu_format_cast": npu_format_cast,
                               "npu_format_cast_": npu_format_cast_, "get_npu_format": get_npu_format,
                               **{name: placed_op(torch, fn) for name, fn in (OPS | FA_OPS).items()}}
    # the version of the torch it runs with, as torch_npu's releases follow torch's: a script that checks
    # `torch_npu.__version__ >= "2.1"` takes the branch it takes on a device host ("0.0+..." took the old one)
    # (".post0": `[int(p) for p in __version__.split(".")[:3]]` reads three numbers, as of a release of torch_npu)
    version = stand_in_version(str(torch.__version__))
    # torch_npu/version.py: `from torch_npu.version import __version__`, `torch_npu.version.git_version`
    ver = types.ModuleType("torch_npu.version", "torch_npu.version of the stand-in")
    ver.__dict__.update(__version__=version, git_version="unknown",
                        __getattr__=_module_getattr(["__version__", "git_version"], "torch_npu.version"))
    sys.modules["torch_npu.version"] = ver
    exports["version"] = ver
    mod.__dict__.update({"__version__": version, "_pto_forge_stand_in": True, **exports,
                         "__getattr__": _module_getattr(sorted(exports))})
    ops_ns = _NpuOpsNamespace({name: fn for name, fn in exports.items() if name.startswith("npu_")})
    try:
        setattr(torch.ops, "npu", ops_ns)  # noqa: B010 - torch.ops has no static `npu` attribute
    except (AttributeError, TypeError) as exc:  # a torch whose ops object refuses attributes: no alias then
        log.debug("torch.ops.npu: %s", exc)
    return mod


class NpuFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Provides ``torch_npu`` (``torch_npu.npu`` and ``torch_npu.npu.utils`` are ``torch.npu``; other ``torch_npu.*``
    are packages whose every name raises `NotProvidedError` - before, an empty module, and ``from
    torch_npu.npu.utils import get_soc_version`` failed later as "'module' object is not callable")."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "torchair" or fullname.startswith("torchair."):
            # torchair (torch_npu's graph mode: `torch.compile(m, backend=torchair.get_npu_backend())`) comes with
            # torch_npu on a device host; the stand-in has none. Still a ModuleNotFoundError, so a script's
            # `except ImportError:` takes its eager path as before, but the one line says what is missing (s39)
            raise ModuleNotFoundError(f"No module named {fullname!r}: torchair (torch_npu's graph mode) is not "
                                      "provided by the emulator's torch_npu stand-in; run the eager path",
                                      name=fullname)
        if fullname == "torch_npu" or fullname.startswith("torch_npu.") and not fullname.rsplit(".", 1)[1][:1].isupper():
            # (a capitalised last part is a class, not a module: `from torch_npu.testing.testcase import TestCase`
            # then fails as an import of a missing name, not later as "'module' object is not callable")
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        if spec.name == "torch_npu":
            mod = build_module()
        elif spec.name in ("torch_npu.npu", "torch_npu.npu.utils", *(f"torch_npu.npu.{n}" for n in NPU_SUBMODULES)):
            # torch.npu (the parent import patched torch)
            return vars(sys.modules["torch"])["npu"]
        elif spec.name in ("torch_npu.npu.config", "torch_npu.npu.amp"):
            return getattr(vars(sys.modules["torch"])["npu"], spec.name.rsplit(".", 1)[1])
        elif spec.name == "torch_npu.testing.testcase":  # torch_npu-style unittest tests (_torch_npu_testing)
            mod = testcase_module(_module_getattr)
        elif spec.name == "torch_npu.testing.common_utils":
            npu = vars(sys.modules["torch"])["npu"]
            mod = common_utils_module(sys.modules["torch"], npu_format_cast, npu.get_device_name, _module_getattr)
        else:  # importable (`import torch_npu.contrib.transfer_to_npu`), and each name it lacks says so
            if spec.name == "torch_npu.contrib.transfer_to_npu":
                transfer_to_npu(sys.modules["torch"])
            mod = types.ModuleType(spec.name)
            mod.__dict__["__getattr__"] = _module_getattr([], spec.name)
        mod.__path__ = []
        return mod

    def exec_module(self, module: types.ModuleType) -> None:
        return None

    def find_distributions(self, context: Any = None) -> Any:
        """``importlib.metadata.version("torch_npu")`` (or ``"torch-npu"``) is the stand-in's ``__version__``, as the
        installed wheel answers on a device host (s49: ``PackageNotFoundError``)."""
        return distributions_for(context, {"torch_npu": ("torch_npu", _installed_version)})


def stand_in_version(torch_version: str) -> str:
    """The stand-in's version: the version of the torch it runs with, as torch_npu's releases follow torch's."""
    return f"{torch_version.split('+')[0]}.post0+pto.forge.emulator"


def _installed_version() -> str:
    """The stand-in's version without importing torch (the metadata may be asked while torch imports)."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "__version__"):
        return stand_in_version(str(torch.__version__))
    import importlib.metadata

    return stand_in_version(importlib.metadata.version("torch"))


class _AfterTorch(importlib.abc.Loader):
    """Wraps torch's own loader: once ``torch`` has executed, load ``torch_npu`` the way torch's device-backend
    autoload does on a device host, then hand the module its real loader back."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        try:
            self.inner.exec_module(module)
        finally:
            module.__loader__ = self.inner
            if module.__spec__ is not None:
                module.__spec__.loader = self.inner
        __import__("torch_npu")


class TorchAutoload(importlib.abc.MetaPathFinder):
    """Finds ``torch`` through the other finders and loads the stand-in right after it (once)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _AfterTorch(spec.loader)
                return spec
        return None


def install_finder() -> None:
    """Register the stand-in ahead of any real ``torch_npu`` (idempotent)."""
    if not any(isinstance(f, NpuFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, NpuFinder())


def install_autoload() -> None:
    """Make ``import torch`` load the stand-in too (idempotent; off when ``TORCH_DEVICE_BACKEND_AUTOLOAD=0``)."""
    if os.environ.get("TORCH_DEVICE_BACKEND_AUTOLOAD", "1") == "0":
        return
    if "torch" in sys.modules:
        __import__("torch_npu")
        return
    if not any(isinstance(f, TorchAutoload) for f in sys.meta_path):
        sys.meta_path.insert(0, TorchAutoload())
