"""runtime.emulator — the PyPTO kernel API on the CPU, with real numbers and the real constraints.

``install()`` makes ``import pypto`` resolve to the emulator; a ``@pypto.frontend.jit`` kernel called with
numpy arrays (or torch CPU tensors) is traced once per control path into a graph of tile ops and the graph
is executed per loop iteration, writing results into the argument arrays in place. Results, cost counters
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
  line of a diagnostic), ``_session``, ``_numerics``, ``_scalar``, ``_registry`` (op name -> implementation)
- run-time data: ``_buffers`` (``Env``: buffers of one call; poison), ``_ir`` (the traced graph)
- execution: ``_batch`` (independent loop iterations at once), ``_executor`` (runs the graph)
- trace time: ``_trace`` (the ``Tracer``), ``_tensor`` (the ``Tensor`` handle), ``_options``,
  ``_trace_interp`` (interprets the kernel body's statements while tracing)
- ops: ``_ops_core`` (views, assemble, move, reshape), ``_indexing``, ``_ops_create/_index/_math/_matmul/_reduce``
- assembly: ``_methods`` (the one place that installs methods, operators and indexing on ``Tensor``),
  ``_frontend`` (``jit``: trace, then execute), ``_module`` (the ``pypto`` namespace)
"""

from runtime.emulator._errors import Diagnostic, EmulatorError, EmulatorUnsupported
from runtime.emulator._module import API_SURFACE, install
from runtime.emulator._registry import OPS, UNSUPPORTED
from runtime.emulator._session import CostCounters, OpRecord, Options, Session, current_session, session

__all__ = [
    "API_SURFACE",
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
    "session",
]
