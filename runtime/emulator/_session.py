"""Sessions: the explicit, ContextVar-held context a kernel runs in.

A session owns everything a run produces (cost counters, diagnostics, op records) and the options that
shape it. Nothing lives in module globals: a kernel called outside ``with session(...)`` gets a fresh
implicit session, so two kernels in one process (or two tests) never see each other's state.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from runtime.emulator._errors import Diagnostic

__all__ = ["DEFAULT_COMPAT", "Compat", "CostCounters", "OpRecord", "Options", "Session", "current_session", "session"]

Compat = Literal["head", "0.2.0"]
"""The PyPTO versions the emulator can follow (``runtime.targets`` resolves which one an op dir wants; kept
here as well so that the emulator, which the sandbox loads on its own, imports nothing outside its package
but ``runtime.dtypes``; tests/gym/test_targets.py checks the two agree)."""
DEFAULT_COMPAT: Compat = "head"

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class Options:
    """How the emulator runs a kernel. Defaults are the strict ones.

    Attributes:
        record: keep every traced op output per loop iteration in ``Session.records`` (for bisection).
        record_limit: stop recording after this many records (protects memory); 0 = unlimited.
        out_of_bounds: ``"raise"`` (default) reports a view/assemble window leaving its tensor as an error;
            ``"clip"`` clips views like the 0.2.0 CPU oracle does (valid extent shrinks) and only warns.
        compat: the PyPTO version whose semantics the run follows (``runtime.targets``): ``"head"`` (default,
            what user code is written for: symbolic reshape dims, multi-axis broadcast with a warning, builtin
            2-arg ``min/max`` on symbols, HEAD-only runtime options) or ``"0.2.0"`` (the runnable wheel, which
            rejects those). The differences are listed with a probe each in docs/emulator-fidelity.md.
        npuarch: value of ``pypto.platform.npuarch`` (``DAV_2201`` = A2/A3, ``DAV_3510`` = Ascend 950).
        check_poison: check kernel arguments for the NaN poison that marks padding outside ``valid_shape`` and
            uninitialized memory.
        poison_check: when ``check_poison``, ``"final"`` (default) checks the kernel arguments' contents after the
            whole run: a kernel whose output is transiently poisoned in some iteration but finally correct passes,
            as it does on the device (the error, if any, still names the first poisoned write-back, its line and
            iteration). ``"iteration"`` rejects every poisoned write-back in every iteration (stricter than the
            device; useful to find where poison first reaches an output).
        roll: trace a Python ``range`` loop whose iterations differ only by its index once, as a device loop
            (`_roll`: the same ops on the same data, so the same numbers, counters and diagnostics; it runs
            batched when its iterations are independent). Off under ``record`` (bisection sees every iteration as
            the author's unrolled code) and with ``roll=False`` (default: ``PTO_FORGE_ROLL=0`` in the environment).
    """

    record: bool = False
    record_limit: int = 200_000
    out_of_bounds: Literal["raise", "clip"] = "raise"
    compat: Compat = DEFAULT_COMPAT
    npuarch: str = "DAV_2201"
    check_poison: bool = True
    poison_check: Literal["final", "iteration"] = "final"
    roll: bool = field(default_factory=lambda: os.environ.get("PTO_FORGE_ROLL", "1") != "0")


class CostCounters(BaseModel):
    """Work done by the runs of a session (a cost estimate, not a timing)."""

    ops: dict[str, int] = Field(default_factory=dict)
    """executed op count by op name"""
    tiles: int = 0
    """vector/cube tiles processed (ceil of output elements / tile elements, per executed op)"""
    elements: int = 0
    """output elements produced"""
    bytes_in: int = 0
    """bytes read from kernel arguments (views of GM tensors)"""
    bytes_out: int = 0
    """bytes written to kernel arguments (assemble / move into GM tensors)"""
    matmul_flops: int = 0
    """2*M*N*K per matmul (times batch)"""
    loop_trips: dict[str, int] = Field(default_factory=dict)
    """iterations executed per loop name"""
    runs: int = 0
    """kernel calls"""
    batched_iterations: int = 0
    """loop iterations executed through the batched fast path (the others ran one by one)"""


class OpRecord(BaseModel):
    """One traced op output in one loop iteration (kept when ``Options(record=True)``).

    ``Session.records`` is in execution order and ``seq`` equals the list index.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    seq: int = 0
    """global execution order inside the session"""
    node: int | None = None
    """id of the traced op (same for every iteration of that op; distinct per op on one line)"""
    op: str
    file: str | None
    line: int | None
    iteration: dict[str, int]
    """loop name -> index value, outermost first"""
    value: Any = None
    """copy of the output array (numpy)"""
    dtype: str | None = None
    offsets: list[int] | None = None
    shape: list[int] | None = None
    valid_shape: list[int] | None = None
    target: str | None = None
    """for assemble/move: name of the destination tensor"""
    name: str | None = None
    """name of the output tensor (the kernel variable it is bound to)"""
    source: str | None = None
    """for view: name of the viewed tensor when it is a kernel argument or a local pypto.tensor"""
    inputs: list[dict] = Field(default_factory=list)
    """tensor operands in call order: {"kind": "record", "seq": n} (produced by a recorded op) or
    {"kind": "tensor", "name": ...} (a kernel argument / local read before any recorded write)"""
    attrs: dict = Field(default_factory=dict)
    """op parameters that change meaning (dim/keepdim, a_trans/b_trans, dtype, shape ...)"""


class Session:
    """Results and options of the kernel runs made inside one ``with session(...)`` block."""

    def __init__(self, options: Options | None = None) -> None:
        self.options = options or Options()
        self.counters = CostCounters()
        self.diagnostics: list[Diagnostic] = []
        self.records: list[OpRecord] = []
        self.kernel_args: list[dict] = []
        """per kernel call: {"kernel": name, "args": [{"name", "shape", "dtype"}, ...]} in signature order"""
        self._warned: set[tuple] = set()
        self._captures: list[list[tuple]] = []

    @contextlib.contextmanager
    def capture_warnings(self) -> Iterator[list[tuple]]:
        """Every `warn` call made inside the block, de-duplicated or not, as ``(code, message, file, line, op)``
        (the trace cache emits a cached trace's warnings again through `warn`)."""
        got: list[tuple] = []
        self._captures.append(got)
        try:
            yield got
        finally:
            # by identity: nested captures hold equal lists (`warn` appends to every open one), and `remove` by
            # equality took the outer one - a "not in list" error out of a correct kernel's retried trace
            for i in range(len(self._captures) - 1, -1, -1):
                if self._captures[i] is got:
                    del self._captures[i]
                    break

    @contextlib.contextmanager
    def warnings_rewound_on(self, exc: type[BaseException]) -> Iterator[None]:
        """When ``exc`` leaves the block, the diagnostics, the de-duplication memory and every open capture are put
        back as they were when it began (an attempt that is thrown away and made again - `trace_rolling` - must not
        leave its warnings behind, nor keep the second attempt's from being reported)."""
        n_diag, warned = len(self.diagnostics), set(self._warned)
        caps = [(c, len(c)) for c in self._captures]
        try:
            yield
        except exc:
            del self.diagnostics[n_diag:]
            self._warned = warned
            for c, n in caps:
                del c[n:]
            raise

    def warn(self, code: str, message: str, *, file: str | None = None, line: int | None = None,
             op: str | None = None) -> None:
        """Add a warning diagnostic (deduplicated per code/location/message)."""
        for c in self._captures:
            c.append((code, message, file, line, op))
        key = (code, file, line, message)
        if key in self._warned:
            return
        self._warned.add(key)
        log.debug("emulator warning %s at %s:%s: %s", code, file, line, message)
        self.diagnostics.append(
            Diagnostic(severity="warning", code=code, message=message, file=file, line=line, op=op)
        )

    def add_record(self, rec: OpRecord) -> None:
        lim = self.options.record_limit
        if lim and len(self.records) >= lim:
            return
        if isinstance(rec.value, np.ndarray):
            rec.value = rec.value.copy()
        rec.seq = len(self.records)
        self.records.append(rec)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]


_CURRENT: contextvars.ContextVar[Session | None] = contextvars.ContextVar("pypto_emulator_session", default=None)


def current_session() -> Session | None:
    """The explicit session in effect, or None."""
    return _CURRENT.get()


@contextlib.contextmanager
def session(options: Options | None = None) -> Iterator[Session]:
    """Enter an explicit emulator session; kernels called inside report into it."""
    s = Session(options)
    token = _CURRENT.set(s)
    try:
        yield s
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def active_session() -> Iterator[Session]:
    """The explicit session, or a fresh implicit one for the duration of one kernel call."""
    s = _CURRENT.get()
    if s is not None:
        yield s
        return
    s = Session()
    token = _CURRENT.set(s)
    try:
        yield s
    finally:
        _CURRENT.reset(token)
