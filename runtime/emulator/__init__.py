"""runtime.emulator — the PyPTO kernel API on the CPU, with real numbers and the real constraints.

``install()`` makes ``import pypto`` resolve to the emulator; a ``@pypto.frontend.jit`` kernel called with
numpy arrays (or torch CPU tensors) is traced once per control path into a graph of tile ops, lowered to a
plain-data kernel program and executed by the device executor (``runtime.emulator.device``) per loop
iteration, writing results into the argument arrays in place. Results, cost counters
and diagnostics land in the current `session` (a ContextVar; kernels called outside one get a fresh
implicit session).

Example::

    import runtime.emulator as emu
    emu.install()
    import pypto
    with emu.session(options=emu.Options(record=True)) as s:
        kernel(x, out)
    s.counters.ops, s.diagnostics, s.records

Module layers (each imports only from layers above it; tests/emulator/test_import_graph.py enforces it):

- leaves: ``_errors``, ``_enums``, ``_symbolic`` (symbolic ints, linear forms), ``_location`` (kernel file and
  line of a diagnostic), ``_session``, ``_numerics``, ``_scalar``, ``_registry`` (op name -> implementation),
  ``_buffers`` (poison)
- the device side: ``device`` (the kernel program as data, its codec and validator, the executor; imports
  only the leaves above - tests/emulator/test_device_imports.py)
- trace time: ``_ir`` (the traced graph), ``_trace`` (the ``Tracer``), ``_tensor`` (the ``Tensor`` handle),
  ``_options``, ``_trace_interp`` (interprets the kernel body's statements while tracing), ``_lower`` (traced
  graph -> ``device.KernelProgram``), ``_executor`` (the replaceable kernel executor; op records)
- ops (trace side: checks, shapes, op records): ``_ops_core`` (views, assemble, move, reshape), ``_indexing``,
  ``_ops_create/_index/_math/_matmul/_reduce``
- assembly: ``_methods`` (the one place that installs methods, operators and indexing on ``Tensor``),
  ``_frontend`` (``jit``: trace, lower, hand to the kernel executor), ``_module`` (the ``pypto`` namespace)
"""

import importlib
from typing import Any

from runtime.emulator._errors import Diagnostic, EmulatorError, EmulatorUnsupported
from runtime.emulator._session import CostCounters, OpRecord, Options, Session, current_session, session

__all__ = [
    "API_SURFACE",
    "NOT_EMULATED",
    "OPS",
    "UNSUPPORTED",
    "CostCounters",
    "Diagnostic",
    "EmulatorError",
    "EmulatorUnsupported",
    "OpRecord",
    "Options",
    "Session",
    "current_session",
    "install",
    "kernel_executor",
    "session",
]

# The pypto namespace (tracer, ops, frontend) is imported on first use, not with the package: the device
# executor (`runtime.emulator.device`) lives inside this package and a device process must be able to import
# it without loading any tracing code (tests/emulator/test_device_imports.py).
_LAZY = {"API_SURFACE": "runtime.emulator._module", "install": "runtime.emulator._module",
         "OPS": "runtime.emulator._module", "UNSUPPORTED": "runtime.emulator._module",
         "NOT_EMULATED": "runtime.emulator._wheel_api"}


_LAZY_MODULES = {"kernel_executor": "runtime.emulator._executor"}
"""``emu.kernel_executor.use(executor)``: the seam where a traced kernel's program is executed"""


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        module = importlib.import_module(_LAZY_MODULES[name])
        globals()[name] = module
        return module
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'runtime.emulator' has no attribute '{name}'")
    module = importlib.import_module(mod)  # registers every op (OPS) as a side effect
    value = getattr(module, name)
    globals()[name] = value
    return value
