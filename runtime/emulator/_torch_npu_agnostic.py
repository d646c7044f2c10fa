"""torch's device-agnostic API on the ``torch_npu`` stand-in: generators, ``torch.accelerator``, autocast, events.

Why: scripts written for recent torch do not name the device module. They pick the device with
``torch.accelerator.current_accelerator()``, seed a ``torch.Generator(device="npu")`` and pass it to
``torch.randn(..., generator=g, device="npu")``, time with ``torch.Event(enable_timing=True)`` and run a golden
under ``torch.autocast(device_type=dev.type)``. torch renamed PrivateUse1 to ``npu`` for the stand-in, so it
reports the NPU as the accelerator, but its C++ side has no NPU hooks: each of those calls died with "Please register
PrivateUse1HooksInterface" or "PyTorch is not linked with support for npu devices" (s37), where a device host
answers.

What the stand-in answers (npu tensors are CPU tensors, so every answer is the CPU's work under the NPU's name):

* ``torch.Generator(device=<npu>)`` is a CPU generator whose ``device`` the script reads as ``npu:<index>``
  (``isinstance(g, torch.Generator)`` still holds for every generator, the C type is unchanged: an NPU one is an
  instance of a Python subclass of it); ``torch.npu.default_generators`` is ``(torch.default_generator,)``, the one
  ``torch.npu.manual_seed`` seeds, and its ``device`` still says ``cpu`` (it is the CPU's own generator);
* ``torch.accelerator``: ``current_accelerator()`` stays ``device(type='npu')`` (torch's own answer, what a device
  host says; ``tensor.to(it)`` is the CPU by the stand-in's device mapping), and the calls torch routes to the
  missing C++ hooks go to ``torch.npu`` (device index, ``set_device_index``, ``device_index`` context,
  ``synchronize``, streams, memory statistics of the empty emulated device); ``torch.get_device_module()`` is
  ``torch.npu``;
* ``torch.autocast("npu", ...)`` / ``torch.amp.autocast("npu")`` is torch's CPU autocast in the NPU's default
  dtype (float16), as ``torch.npu.amp.autocast`` already was (before, torch accepted the "npu" autocast and then
  cast nothing: a golden meant to run in float16 ran in float32);
* ``torch.Event(device=<npu or none>)`` / ``torch.Stream(...)`` are ``torch.npu.Event`` / ``torch.npu.Stream``
  (host-clock timing; one queue runs every stream).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from runtime.emulator._torch_npu_device import NPU_GENERATOR_TYPES, caller_is_script

__all__ = ["accelerator_names", "autocast_type", "mapped_type", "patch_device_agnostic"]


def mapped_type(base: type, make: Callable[..., Any], extra: tuple[type, ...] = ()) -> type:
    """A stand-in for the C type ``base`` (``torch.Generator``, ``torch.Event``): calling it calls ``make``, and
    ``isinstance`` / ``issubclass`` answer for ``base`` (and ``extra``) as before; a user subclass is ``base``'s."""

    class _Meta(type(base)):  # type: ignore[misc]  # torch.Stream/Event have a metaclass of their own
        def __call__(cls, *args: Any, **kwargs: Any) -> Any:
            if cls is stand_in:
                return make(*args, **kwargs)
            return super().__call__(*args, **kwargs)

        def __instancecheck__(cls, obj: Any) -> bool:
            return isinstance(obj, (base, *extra)) if cls is stand_in else type.__instancecheck__(cls, obj)

        def __subclasscheck__(cls, sub: type) -> bool:
            return issubclass(sub, (base, *extra)) if cls is stand_in else type.__subclasscheck__(cls, sub)

    stand_in = _Meta(base.__name__, (base,), {"__module__": base.__module__, "__doc__": base.__doc__})
    return stand_in


def _device_arg(map_device: Callable[[Any], Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[
        tuple[Any, ...], dict[str, Any]]:
    if "device" in kwargs:
        kwargs = {**kwargs, "device": map_device(kwargs["device"])}
    elif args:
        args = (map_device(args[0]), *args[1:])
    return args, kwargs


def autocast_type(torch: Any, map_device: Callable[[Any], Any] = lambda d: "cpu" if d == "npu" else d,
                  base: type | None = None) -> type:
    """``torch.autocast`` (or its subclass ``base``) whose ``"npu"`` device type (and any other ``map_device`` maps
    to the CPU: ``"cuda"`` after ``transfer_to_npu``) is the CPU's autocast, float16 by default (the NPU's)."""
    base = torch.amp.autocast if base is None else base

    class autocast(base):  # type: ignore[misc, valid-type]  # noqa: N801 - torch's name
        __doc__ = base.__doc__

        def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                     cache_enabled: bool | None = None) -> None:
            if device_type != "cpu" and map_device(device_type) == "cpu":
                device_type, dtype = "cpu", torch.float16 if dtype is None else dtype
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    autocast.__module__, autocast.__qualname__ = base.__module__, base.__qualname__
    return autocast


def accelerator_names(torch: Any, npu: Any) -> dict[str, Any]:
    """The ``torch.accelerator`` functions that reach torch's missing C++ NPU hooks, answered by ``torch.npu``."""

    def index(device: Any = None) -> int:
        if device is None:
            return int(npu.current_device())
        if isinstance(device, int):
            return device
        if isinstance(device, str):  # "npu:1" / "npu"
            return int(device.rsplit(":", 1)[1]) if ":" in device else int(npu.current_device())
        return int(npu.current_device()) if getattr(device, "index", None) is None else int(device.index)

    def current_device_index() -> int:
        return int(npu.current_device())

    def set_device_index(device: Any, /) -> None:
        if index(device) >= 0:
            npu.set_device(index(device))

    class device_index:  # noqa: N801 - torch's name
        """``with torch.accelerator.device_index(i)``: selects ``i`` (``None``: nothing) and restores the previous."""

        def __init__(self, device: int | None, /) -> None:
            self.idx, self.prev_idx = device, -1

        def __enter__(self) -> None:
            if self.idx is not None:
                self.prev_idx = current_device_index()
                npu.set_device(self.idx)

        def __exit__(self, *_exc: object) -> None:
            if self.idx is not None:
                npu.set_device(self.prev_idx)

    def synchronize(device: Any = None, /) -> None:
        npu.synchronize(index(device))

    def current_stream(device: Any = None, /) -> Any:
        return npu.current_stream(index(device))

    def get_device_capability(device: Any = None, /) -> dict[str, Any]:
        return {"supported_dtypes": {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
                                     torch.float16, torch.bfloat16, torch.float32, torch.float64}}

    def memory_stat(name: str) -> Callable[..., Any]:
        return lambda device_index=None, /: getattr(npu, name)(index(device_index))

    return dict(
        current_device_index=current_device_index, current_device_idx=current_device_index,
        set_device_index=set_device_index, set_device_idx=set_device_index, device_index=device_index,
        synchronize=synchronize, current_stream=current_stream, set_stream=lambda stream, /: npu.set_stream(stream),
        get_device_capability=get_device_capability, empty_cache=lambda: npu.empty_cache(), empty_host_cache=lambda: None,
        get_memory_info=memory_stat("mem_get_info"), memory_stats=memory_stat("memory_stats"),
        memory_allocated=memory_stat("memory_allocated"), max_memory_allocated=memory_stat("max_memory_allocated"),
        memory_reserved=memory_stat("memory_reserved"), max_memory_reserved=memory_stat("max_memory_reserved"),
        reset_accumulated_memory_stats=memory_stat("reset_accumulated_memory_stats"),
        reset_peak_memory_stats=memory_stat("reset_peak_memory_stats"),
    )


def _generator_index(device: Any, npu: Any) -> int:
    """The NPU index a ``torch.Generator(device=...)`` belongs to: the one named (``"npu:1"``, a ``torch.device``
    with an index, a bare ``1``), else the current device, as torch_npu's ``NPUGeneratorImpl`` takes it."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        return int(device.rsplit(":", 1)[1]) if ":" in device else int(npu.current_device())
    index = getattr(device, "index", None)
    return int(npu.current_device()) if index is None else int(index)


def _rebuild_npu_generator(index: int) -> Any:
    """Unpickle an NPU generator (`_npu_generator_type`'s ``__reduce__``): made by the stand-in's
    ``torch.Generator``, its state then set by pickle."""
    return sys.modules["torch"].Generator(device=f"npu:{index}")


def _npu_generator_type(torch: Any, real_generator: Any) -> type:
    """The type of ``torch.Generator(device="npu")``: a CPU generator (the npu tensors it fills are CPU tensors)
    whose ``device`` reads, from the script, as the NPU's (``device(type='npu', index=0)``, what torch_npu's
    generator says). s43: it said ``cpu``, and a script asserting ``g.device.type == "npu"`` (or choosing where
    to put a tensor by ``g.device``) failed. torch's own code (Dynamo's rng guards) still reads the CPU, where the
    numbers are drawn, as it does for NPU tensors."""
    get_device = real_generator.device.__get__
    real_reduce = real_generator.__reduce__
    devices: dict[int, Any] = {}

    class Generator(real_generator):
        __doc__ = real_generator.__doc__
        _npu_index = 0

        @property
        def device(self) -> Any:
            if caller_is_script(sys._getframe(1)):
                made = devices.get(self._npu_index)
                if made is None:
                    made = devices[self._npu_index] = torch.device("npu", self._npu_index)
                return made
            return get_device(self)

        def __reduce__(self) -> tuple[Any, ...]:  # pickle / deepcopy: an NPU generator again, with its state
            state = real_reduce(self)[2]
            return _rebuild_npu_generator, (self._npu_index,), state

    Generator.__module__, Generator.__qualname__ = real_generator.__module__, real_generator.__qualname__
    NPU_GENERATOR_TYPES.append(Generator)
    return Generator


def patch_device_agnostic(torch: Any, npu: Any, map_device: Callable[[Any], Any]) -> None:
    """Install the module doc's answers in ``torch`` (called once, by the stand-in's ``patch_torch``)."""
    real_generator = torch.Generator
    npu_generator = _npu_generator_type(torch, real_generator)

    def generator(*args: Any, **kwargs: Any) -> Any:
        device = kwargs.get("device", args[0] if args else None)
        if device is None or map_device(device) == device:
            return real_generator(*args, **kwargs)
        args, kwargs = _device_arg(map_device, args, kwargs)
        made = npu_generator(*args, **kwargs)
        made._npu_index = _generator_index(device, npu)
        return made

    torch.Generator = mapped_type(real_generator, generator)

    def is_npu(device: Any) -> bool:
        return device is None or map_device(device) != device

    for name, own in (("Event", npu.Event), ("Stream", npu.Stream)):
        real = getattr(torch, name, None)
        if isinstance(real, type):
            def make(*args: Any, _real: type = real, _own: type = own, **kwargs: Any) -> Any:
                device = kwargs.get("device", args[0] if args else None)
                if is_npu(device):
                    return _own(**{k: v for k, v in kwargs.items() if k != "device"})
                return _real(*args, **kwargs)

            setattr(torch, name, mapped_type(real, make, (own,)))

    autocast = autocast_type(torch, map_device)
    torch.autocast = torch.amp.autocast = autocast
    torch.amp.autocast_mode.autocast = autocast
    unmanaged = getattr(torch.amp.autocast_mode, "_UnmanagedAutocast", None)
    if isinstance(unmanaged, type):
        # what a graph torch.compile traced enters (`torch.amp._enter_autocast("npu", ...)`: Dynamo records the
        # script's arguments as they were): s42, `with torch.autocast("npu", torch.bfloat16)` was a no-op in a
        # compiled function (float32 results where the eager call gave bfloat16)
        torch.amp.autocast_mode._UnmanagedAutocast = autocast_type(torch, map_device, unmanaged)

    get_module = torch.get_device_module

    def get_device_module(device: Any = None) -> Any:
        return npu if device is None else get_module(device)

    get_device_module.__doc__ = get_module.__doc__
    # torch.compile looks the original up through it (`torch.get_device_module.__wrapped__`): s40, every
    # torch.compile died with "'function' object has no attribute '__wrapped__'"
    get_device_module.__wrapped__ = getattr(get_module, "__wrapped__", get_module)  # type: ignore[attr-defined]
    torch.get_device_module = get_device_module
    acc = getattr(torch, "accelerator", None)
    if acc is not None:
        for name, fn in accelerator_names(torch, npu).items():
            if hasattr(acc, name):
                setattr(acc, name, fn)
