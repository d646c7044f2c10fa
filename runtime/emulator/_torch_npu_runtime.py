"""The rest of ``torch.npu``'s runtime API and ``torch_npu.profiler``, for the ``torch_npu`` stand-in.

Why: a gym test script does more with ``torch.npu`` than pick a device and synchronise. Precision tests switch off
HF32 (``torch.npu.matmul.allow_hf32 = False``), print ``torch.npu.get_device_properties(0)``, save and restore the
generator (``get_rng_state``), check ``is_bf16_supported()``, run a golden under ``torch.npu.amp.autocast()``, read
memory statistics, and performance tests wrap the run in ``torch_npu.profiler.profile(...)``. Each of those names
was missing from the stand-in: the script died at that line with a bare ``AttributeError`` before its kernel ran.
The names and defaults follow torch_npu 2.7.1's ``torch_npu/npu/__init__.py`` ``__all__`` and its
``npu_config`` / ``random`` / ``memory`` / ``profiler`` modules (read for behaviour, nothing copied):

* the HF32 switches keep the vendor's defaults (matmul off, convolution on) and only record the setting: the
  stand-in's torch ops are the CPU's, HF32 does not exist there (a golden computes in full float32);
* the generator functions act on the CPU generator, the one ``torch.npu.manual_seed`` already seeds (npu
  tensors are CPU tensors here);
* ``amp.autocast`` is torch's CPU autocast with the dtype asked for (float16 by default, as on the NPU);
* memory statistics count the tensors the script keeps on the NPU (`NpuMemory`: each storage once, in 512-byte
  blocks); the peak is sampled where a script looks (memory calls, ``synchronize``, events), and the kernel's own
  workspace is not an NPU's, so it is not in them;
* ``get_device_properties`` answers for the chip ``--npuarch`` emulates (`device_properties`);
* ``torch_npu.profiler.profile`` is torch's profiler on the CPU activity (an ``NPU`` activity records the CPU,
  where the emulated kernel runs): its traces and tables are real, of the emulator's work, never of a device.

The graph API (``NPUGraph``, ``graph``, ``make_graphed_callables`` ...) is there and each use raises
``EMU_UNSUPPORTED`` (`graph_names`). Any other ``torch.npu`` name raises the stand-in's ``NotProvidedError`` (an ``AttributeError``) naming what is
provided, as for ``torch_npu.<name>``.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import logging
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from runtime.emulator._errors import EmulatorUnsupported
from runtime.emulator._location import user_location
from runtime.emulator._torch_npu_placement import allocated_bytes, is_on_npu, mark

__all__ = ["GRAPH_NAMES", "LEGACY_TENSOR_TYPES", "PINNED", "NpuMemory", "NpuTensorType", "device_properties", "graph_names", "is_pinned",
           "legacy_tensor_types", "no_context", "noop", "pin_memory", "profiler_module", "runtime_names"]

log = logging.getLogger(__name__)

_GIB = 1 << 30


@dataclasses.dataclass(frozen=True)
class _NPUDeviceProperties:
    """``torch.npu.get_device_properties(i)``: the fields torch_npu's ``_NPUDeviceProperties`` has."""

    name: str
    total_memory: int
    cube_core_num: int
    vector_core_num: int
    L2_cache_size: int

    def __repr__(self) -> str:
        return (f"_NPUDeviceProperties(name='{self.name}', total_memory={self.total_memory // (1 << 20)}MB, "
                f"cube_core_num={self.cube_core_num}, vector_core_num={self.vector_core_num}, "
                f"L2_cache_size={self.L2_cache_size // (1 << 20)}MB)")


def device_properties(name: str) -> _NPUDeviceProperties:
    """The properties of the emulated chip: an Atlas A2 training card's Ascend910B (64 GiB HBM, 24 cube and 48
    vector cores, 192 MiB L2) for A2/A3; the same core counts for DAV_3510 (its card's figures are not published
    to us). Scripts print these or size a grid with the core counts; no emulated number depends on them."""
    return _NPUDeviceProperties(name=name, total_memory=64 * _GIB, cube_core_num=24, vector_core_num=48,
                                L2_cache_size=192 << 20)


class NpuMemory:
    """``torch.npu``'s memory statistics of the tensors a script keeps on the emulated NPU.

    Why: s38 answered every memory call with 0 (an empty device): a script printing ``max_memory_allocated()`` after
    its kernel, checking it against a budget or asserting it is positive read nonsense. ``allocated`` is what the
    live NPU tensors hold (`allocated_bytes`); the peak cannot be watched on every allocation for free, so it is
    taken where a script looks - each memory call, ``synchronize``, a stream's ``synchronize``, an event's
    ``record`` - which is where a script reads it after a kernel (the tensors it allocated are alive then).
    ``reserved`` follows the caching allocator: it keeps what was allocated until ``empty_cache``. The kernel's own
    workspace is not counted (the emulator's buffers are host memory, not an NPU's)."""

    def __init__(self) -> None:
        self.peak = 0
        self.reserved = 0
        self.peak_reserved = 0

    def sample(self, *_a: Any, **_k: Any) -> int:
        """The bytes allocated now, folded into the peaks."""
        now = allocated_bytes()
        self.peak = max(self.peak, now)
        self.reserved = max(self.reserved, now)
        self.peak_reserved = max(self.peak_reserved, self.reserved)
        return now

    def max_allocated(self, *_a: Any, **_k: Any) -> int:
        self.sample()
        return self.peak

    def memory_reserved(self, *_a: Any, **_k: Any) -> int:
        self.sample()
        return self.reserved

    def max_reserved(self, *_a: Any, **_k: Any) -> int:
        self.sample()
        return self.peak_reserved

    def reset_peak(self, *_a: Any, **_k: Any) -> None:
        now = allocated_bytes()
        self.peak, self.peak_reserved = now, max(now, self.reserved)

    def empty_cache(self, *_a: Any, **_k: Any) -> None:
        self.reserved = allocated_bytes()

    def stats(self, *_a: Any, **_k: Any) -> collections.OrderedDict[str, Any]:
        """``memory_stats()``: the keys torch's allocators report that these numbers fill."""
        now = self.sample()
        out: collections.OrderedDict[str, Any] = collections.OrderedDict()
        for kind, cur, peak in (("allocated_bytes", now, self.peak), ("active_bytes", now, self.peak),
                                ("reserved_bytes", self.reserved, self.peak_reserved)):
            for key, value in (("current", cur), ("peak", peak)):
                out[f"{kind}.all.{key}"] = value
        out["num_alloc_retries"] = 0  # the counters a script prints next to the peak (no retries, no OOMs here);
        out["num_ooms"] = 0           # torch_npu reports them always (s39, second round)
        return out


PINNED = "_pto_forge_pinned"
"""Set (True) in the ``__dict__`` of a host tensor in pinned (page-locked) memory: ``x.pin_memory()``, a factory
given ``pin_memory=True``."""


def pin_memory(self: Any, device: Any = None) -> Any:
    """``x.pin_memory()``: a copy in pinned host memory (the tensor itself when it is pinned already), as torch_npu
    makes it; an NPU tensor is refused as there. Why: it returned the tensor unpinned, so a script's
    ``assert x.is_pinned()`` before its ``non_blocking`` copy failed (s42)."""
    if is_on_npu(self):
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if is_pinned(self):
        return self
    copy = self.clone()
    copy.__dict__[PINNED] = True
    return copy


def is_pinned(self: Any, device: Any = None) -> bool:
    """``x.is_pinned()``: a tensor made pinned, or a view of one (its memory is the pinned tensor's)."""
    t = self
    while t is not None:
        if t.__dict__.get(PINNED, False):
            return True
        t = t._base
    return False


def noop(*_a: Any, **_k: Any) -> None:
    """A device call with nothing to do on the one emulated device (``synchronize``, ``empty_cache`` ...)."""
    return None


@contextlib.contextmanager
def no_context(*_a: Any, **_k: Any) -> Iterator[None]:
    """A context with nothing to switch on the one emulated device (``torch.npu.device_of(t)``)."""
    yield


class _HF32Switch:
    """``torch.npu.matmul`` / ``torch.npu.conv``: ``allow_hf32`` is recorded (the vendor's default kept)."""

    def __init__(self, default: bool) -> None:
        self.allow_hf32 = default


def runtime_names(torch: Any, get_device_name: Callable[[], str], memory: NpuMemory | None = None) -> dict[str, Any]:
    """The ``torch.npu`` names beyond device selection (module doc). Device arguments are accepted whatever their
    index, as ``set_device`` accepts any (a script sets the ``TILE_FWK_DEVICE_ID`` it was given): every index
    is the one emulated device."""
    memory = memory if memory is not None else NpuMemory()  # torch.npu's own (its synchronize samples it too)
    options: dict[str, Any] = {}
    state = {"sync_debug_mode": 0, "mm_bmm_nd": True, "autocast": False, "autocast_dtype": torch.float16}

    def get_device_properties(device: Any = None) -> _NPUDeviceProperties:
        return device_properties(get_device_name())

    def mem_get_info(device: Any = None) -> tuple[int, int]:
        total = device_properties(get_device_name()).total_memory
        return total - memory.memory_reserved(), total

    def get_device_capability(device: Any = None) -> None:
        return None  # torch_npu: "Cann does not have a corresponding concept"; it returns None

    def utilization(device: Any = None) -> int:
        return 0

    def can_device_access_peer(device_id: Any, peer_device_id: Any) -> bool:
        return False

    def get_rng_state(device: Any = "npu") -> Any:
        return torch.get_rng_state()

    def set_rng_state(new_state: Any, device: Any = "npu") -> None:
        torch.set_rng_state(new_state)

    def get_rng_state_all() -> list[Any]:
        return [torch.get_rng_state()]

    def set_rng_state_all(new_states: Iterable[Any]) -> None:
        for s in new_states:
            torch.set_rng_state(s)

    def initial_seed() -> int:
        return int(torch.initial_seed())

    def memory_summary(device: Any = None, abbreviated: bool = False) -> str:
        s = memory.stats()
        return (f"|  emulated NPU (PTO Forge): allocated {s['allocated_bytes.all.current']} B "
                f"(peak {s['allocated_bytes.all.peak']} B), reserved {s['reserved_bytes.all.current']} B; "
                "tensors live in host memory  |\n")

    def set_option(option: dict[str, Any]) -> None:
        if not isinstance(option, dict):
            raise TypeError("npu option must be a dict.")
        options.update(option)

    def get_option(name: str) -> Any:
        return options.get(name)

    def set_sync_debug_mode(debug_mode: Any) -> None:
        state["sync_debug_mode"] = {"default": 0, "warn": 1, "error": 2}.get(debug_mode, debug_mode)

    def set_mm_bmm_format_nd(is_nd: bool = True) -> None:
        state["mm_bmm_nd"] = bool(is_nd)

    def is_autocast_enabled() -> bool:
        return bool(state["autocast"])

    def set_autocast_enabled(enable: bool) -> None:
        state["autocast"] = bool(enable)

    def set_autocast_dtype(dtype: Any) -> None:
        state["autocast_dtype"] = dtype

    amp = types.ModuleType("torch.npu.amp", "torch.npu.amp of the PTO Forge torch_npu stand-in (CPU autocast)")

    def autocast(enabled: bool = True, dtype: Any = torch.float16, cache_enabled: bool = True) -> Any:
        """``torch.npu.amp.autocast``: torch's CPU autocast with that dtype (npu tensors are CPU tensors)."""
        return torch.autocast("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    scaler_base = getattr(torch.amp, "GradScaler", None)
    grad_scaler: Any = None
    if isinstance(scaler_base, type):
        class GradScaler(scaler_base):  # type: ignore[misc, valid-type]
            """``torch.npu.amp.GradScaler``: torch's scaler for the ``"npu"`` device, as torch_npu's is. Before (s42)
            it was ``torch.amp.GradScaler`` itself, whose default device is CUDA: disabled here ("CUDA is not
            available"), ``get_scale()`` 1.0 and the loss unscaled where a device host scales it by 65536."""

            def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                         growth_interval: int = 2000, enabled: bool = True, **_kwargs: Any) -> None:
                super().__init__("npu", init_scale=init_scale, growth_factor=growth_factor,
                                 backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)

        grad_scaler = GradScaler
    amp.__dict__.update(autocast=autocast, GradScaler=grad_scaler,
                        is_autocast_enabled=is_autocast_enabled, set_autocast_enabled=set_autocast_enabled)

    return dict(
        mstx=mstx_module(), _lazy_init=noop,
        get_device_properties=get_device_properties, mem_get_info=mem_get_info,
        get_device_capability=get_device_capability, utilization=utilization,
        can_device_access_peer=can_device_access_peer, is_bf16_supported=lambda: True,
        get_amp_supported_dtype=lambda: [torch.float16, torch.bfloat16], is_autocast_enabled=is_autocast_enabled,
        set_autocast_enabled=set_autocast_enabled, get_autocast_dtype=lambda: state["autocast_dtype"],
        set_autocast_dtype=set_autocast_dtype, amp=amp,
        get_rng_state=get_rng_state, set_rng_state=set_rng_state, get_rng_state_all=get_rng_state_all,
        set_rng_state_all=set_rng_state_all, initial_seed=initial_seed,
        memory_stats=memory.stats, memory_stats_as_nested_dict=memory.stats, memory_summary=memory_summary,
        memory_snapshot=lambda: [], memory_cached=memory.memory_reserved, max_memory_cached=memory.max_reserved,
        memory_allocated=memory.sample, max_memory_allocated=memory.max_allocated,
        memory_reserved=memory.memory_reserved, max_memory_reserved=memory.max_reserved,
        reset_peak_memory_stats=memory.reset_peak, reset_max_memory_allocated=memory.reset_peak,
        empty_cache=memory.empty_cache,
        reset_accumulated_memory_stats=noop, reset_max_memory_cached=memory.reset_peak, ipc_collect=noop,
        empty_virt_addr_cache=noop, set_per_process_memory_fraction=noop,
        device_of=no_context,
        set_sync_debug_mode=set_sync_debug_mode, get_sync_debug_mode=lambda: state["sync_debug_mode"],
        set_option=set_option, _get_option=get_option, set_aoe=noop, set_dump=noop, init_dump=noop,
        finalize_dump=noop, set_mm_bmm_format_nd=set_mm_bmm_format_nd,
        get_mm_bmm_format_nd=lambda: state["mm_bmm_nd"], is_jit_compile_false=lambda: True,
        get_npu_overflow_flag=lambda: False, clear_npu_overflow_flag=noop,
        matmul=_HF32Switch(False), conv=_HF32Switch(True),
        # A2/A3 and the 950 compute in INF_NAN mode (torch_npu answers True there; False only on the 910A)
        is_support_inf_nan=lambda: True,
        # the legacy typed constructors (`torch.npu.FloatTensor(2, 3)`, `x.type(torch.npu.HalfTensor)`): NPU
        # types of their own, as on a device host (`NpuTensorType`)
        **legacy_tensor_types(torch),
        **graph_names(),
    )


GRAPH_NAMES = ("NPUGraph", "graph", "make_graphed_callables", "graph_pool_handle", "graph_task_group_begin",
               "graph_task_group_end", "graph_task_update_begin", "graph_task_update_end")
"""torch_npu 2.14.0's graph API (``torch_npu/npu/graphs.py`` ``__all__``) but ``is_current_stream_capturing``."""


def _graph_unsupported(name: str) -> Any:
    file, line = user_location()
    return EmulatorUnsupported(
        "EMU_UNSUPPORTED", f"torch.npu.{name}: NPU graph capture and replay (aclgraph) is not emulated. The "
        "emulator runs each call when the script makes it and records no device graph, so a replay would run "
        "nothing of what was captured; run the captured code eagerly instead (torch.npu."
        "is_current_stream_capturing() is False here)", file=file, line=line, op=name)


def graph_names() -> dict[str, Any]:
    """``torch.npu.NPUGraph`` / ``graph`` / ``make_graphed_callables`` & co.: present, as on a device host, and
    each use raises one ``EMU_UNSUPPORTED`` naming the call (s43: a script capturing a graph died with the
    stand-in's ``NotProvidedError`` listing every provided name). Not an emulation: replaying what ran at capture
    would need every kernel launch and tensor operation of the capture recorded and re-run against the same
    tensors, which the emulator does not do, and a replay that silently re-ran nothing would leave the static
    outputs holding the capture's values, a pass that says nothing. ``is_current_stream_capturing()`` is answered:
    nothing is ever capturing."""

    def unsupported(name: str) -> Any:
        def call(*_a: Any, **_k: Any) -> Any:
            raise _graph_unsupported(name)

        call.__name__ = call.__qualname__ = name
        return call

    class NPUGraph:
        """torch_npu's NPU graph: not emulated (`graph_names`)."""

        def __new__(cls, *_a: Any, **_k: Any) -> Any:
            raise _graph_unsupported("NPUGraph")

    class graph:  # noqa: N801 - torch_npu's name
        """``with torch.npu.graph(g)``: not emulated (`graph_names`)."""

        def __init__(self, *_a: Any, **_k: Any) -> None:
            raise _graph_unsupported("graph")

    names: dict[str, Any] = {name: unsupported(name) for name in GRAPH_NAMES}
    names.update(NPUGraph=NPUGraph, graph=graph, is_current_stream_capturing=lambda: False)
    return names


LEGACY_TENSOR_TYPES = ("FloatTensor", "HalfTensor", "BFloat16Tensor", "DoubleTensor", "IntTensor", "LongTensor",
                       "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor")


class NpuTensorType(type):
    """The metaclass of ``torch.npu.FloatTensor`` & co.: an NPU tensor type, told apart from the host's
    ``torch.FloatTensor`` as on a device host.

    Why: s38's first cut made ``torch.npu.HalfTensor`` *be* ``torch.HalfTensor``, so ``x.type(torch.npu.HalfTensor)``
    of a host tensor returned a host tensor (the same object when the dtype matched: an in-place kernel on it then
    changed the golden's input, where a device host copies to the NPU), ``torch.npu.FloatTensor(4)`` was a host
    tensor and ``isinstance(host_x, torch.npu.FloatTensor)`` was True. Calling one builds the host type's tensor and
    marks it as on the NPU; ``isinstance`` asks for the dtype and the NPU; ``Tensor.type`` (the stand-in's
    ``_wrap_type``) moves to the NPU for one of these. ``_cpu`` is the host type, ``dtype`` its dtype."""

    _cpu: Any
    dtype: Any
    _torch_tensor: Any

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        tensor = cls._cpu(*args, **kwargs)
        mark(tensor, True)
        return tensor

    def __instancecheck__(cls, obj: Any) -> bool:
        return getattr(obj, "dtype", None) == cls.dtype and is_on_npu(obj) and isinstance(obj, cls._torch_tensor)

    def __repr__(cls) -> str:
        return f"<class 'torch.npu.{cls.__name__}'>"


def legacy_tensor_types(torch: Any) -> dict[str, type]:
    """``torch.npu.<T>Tensor`` for each legacy host type torch has (`NpuTensorType`)."""
    out: dict[str, type] = {}
    for name in LEGACY_TENSOR_TYPES:
        cpu = getattr(torch, name, None)
        if cpu is not None:
            out[name] = NpuTensorType(name, (), {"_cpu": cpu, "dtype": cpu.dtype, "_torch_tensor": torch.Tensor,
                                                 "is_cuda": False, "is_sparse": False, "__module__": "torch.npu"})
    return out


# ---- torch_npu.profiler ---------------------------------------------------------------------------------------

def mstx_module() -> types.SimpleNamespace:
    """``torch.npu.mstx`` (torch_npu's MindStudio Tools Extension markers, s45): ``mark(message)``,
    ``range_start(message) -> id``, ``range_end(id)`` and the ``mstx_range`` decorator annotate a device timeline
    for msprof. Here there is no device timeline: each call is accepted and does nothing (``range_start`` returns a
    fresh id, as the real one does), so a performance script that marks its phases runs. Before, the first marker
    stopped the script with ``NotProvidedError``."""
    ids = iter(range(1, 1 << 62))

    def mark(message: str = "", stream: Any = None, domain: str = "default") -> None:
        return None

    def range_start(message: str = "", stream: Any = None, domain: str = "default") -> int:
        return next(ids)

    def range_end(range_id: int, domain: str = "default") -> None:
        return None

    def mstx_range(message: str = "", stream: Any = None, domain: str = "default") -> Callable[[Any], Any]:
        return lambda fn: fn

    return types.SimpleNamespace(mark=mark, range_start=range_start, range_end=range_end, mstx_range=mstx_range)


def profiler_module(torch: Any) -> types.ModuleType:
    """``torch_npu.profiler``: torch's profiler on the CPU activity, with torch_npu's names and signatures."""
    tp = torch.profiler
    mod = types.ModuleType("torch_npu.profiler", "torch_npu.profiler of the PTO Forge stand-in: torch's profiler "
                           "recording the CPU, where the emulated kernels run")
    activity = types.SimpleNamespace(CPU="CPU", NPU="NPU")
    level = types.SimpleNamespace(Level0="Level0", Level1="Level1", Level2="Level2", Level_none="Level_none")
    metrics = types.SimpleNamespace(PipeUtilization="ACL_AICORE_PIPE_UTILIZATION",
                         ArithmeticUtilization="ACL_AICORE_ARITHMETIC_UTILIZATION",
                         Memory="ACL_AICORE_MEMORY_BANDWIDTH", MemoryL0="ACL_AICORE_L0B_AND_WIDTH",
                         MemoryUB="ACL_AICORE_MEMORY_UB", ResourceConflictRatio="ACL_AICORE_RESOURCE_CONFLICT_RATIO",
                         L2Cache="ACL_AICORE_L2_CACHE", MemoryAccess="ACL_AICORE_MEMORY_ACCESS",
                         AiCoreNone="ACL_AICORE_NONE")
    export = types.SimpleNamespace(Db="db", Text="text")
    host = types.SimpleNamespace(CPU="cpu", MEM="mem", DISK="disk", NETWORK="network", OSRT="osrt")

    class _ExperimentalConfig:
        """Recorded, not applied: its switches configure the device's profiler, which does not exist here."""

        def __init__(self, profiler_level: str = "Level0", aic_metrics: str = "ACL_AICORE_NONE", **kwargs: Any):
            self.profiler_level = profiler_level
            self.aic_metrics = aic_metrics
            self.options = kwargs

    def profile(*, activities: Iterable[Any] | None = None, schedule: Callable[[int], Any] | None = None,
                on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                with_modules: bool = False, experimental_config: Any = None, use_cuda: bool | None = None) -> Any:
        """``torch_npu.profiler.profile``: ``torch.profiler.profile`` on the CPU activity (an NPU activity included)."""
        if activities is not None and not set(activities) <= {"CPU", "NPU"}:
            raise ValueError(f"unknown profiler activities {sorted(map(str, activities))}: use "
                             "torch_npu.profiler.ProfilerActivity.CPU / .NPU")
        log.info("torch_npu.profiler: recording the CPU (the emulated kernels run there; no device trace exists)")
        return tp.profile(activities=[tp.ProfilerActivity.CPU], schedule=schedule, on_trace_ready=on_trace_ready,
                          record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack,
                          with_flops=with_flops, with_modules=with_modules)

    def schedule(wait: int, active: int, warmup: int = 0, repeat: int = 0, skip_first: int = 0) -> Any:
        """``torch_npu.profiler.schedule(wait, active, warmup=0, repeat=0, skip_first=0)`` (torch_npu's positional
        order; torch's own ``schedule`` takes them by keyword)."""
        return tp.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat, skip_first=skip_first)

    def tensorboard_trace_handler(dir_name: str | None = None, worker_name: str | None = None,
                                  analyse_flag: bool = True, async_mode: bool = False) -> Any:
        return tp.tensorboard_trace_handler(dir_name or "./", worker_name)

    mod.__dict__.update(
        profile=profile, schedule=schedule, tensorboard_trace_handler=tensorboard_trace_handler,
        ProfilerActivity=activity, ProfilerAction=tp.ProfilerAction, ProfilerLevel=level, AiCMetrics=metrics,
        ExportType=export, HostSystem=host, _ExperimentalConfig=_ExperimentalConfig, record_function=tp.record_function,
        supported_activities=lambda: {activity.CPU, activity.NPU},
        supported_profiler_level=lambda: {level.Level0, level.Level1, level.Level2, level.Level_none},
        supported_ai_core_metrics=lambda: set(vars(metrics).values()),
        supported_export_type=lambda: {export.Db, export.Text},
    )
    return mod
