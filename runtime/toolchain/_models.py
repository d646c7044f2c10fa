"""Typed results of the real-toolchain second opinion (pydantic: they cross into the orchestrator and JSON).

Everything here is a *fact reported by the real pypto compiler* (or the reason it could not be asked). None of
it is a verdict: only ``runtime.verify`` decides one (ARCHITECTURE §0.1). The orchestrator shows these figures
at the final gate, in the README and in the run report, and turns "emulator PASS + compiler reject" into a
fidelity finding.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CompileError", "CostFigures", "PipeUsage", "ShapeResult", "ToolchainResult"]

Pipe = Literal["vector", "mte_in", "mte_out", "mte1", "cube"]


class PipeUsage(BaseModel):
    """One pipe row of ``_simulate.stat.report.txt`` ("Used Vector Pipe Number ... Average Vector Usage")."""

    model_config = ConfigDict(frozen=True)

    used: int = Field(description="number of pipes of this kind that ran at least one instruction")
    average_cycles: float = Field(description="average busy cycles per used pipe")
    percent: float = Field(description="average busy share of Total Cycles, in percent")


class CostFigures(BaseModel):
    """The cost model's summary of one compiled call (simulated; no device involved).

    ``total_cycles`` is the headline: simulated cycles from the first task issued to the last one retired,
    over 72 cores (24 cube + 48 vector). ``e2e_time`` is the AICore end-to-end time printed by the cost model
    (simulated, µs-scale units) and ``utilization_percent`` its AICore utilisation: the share of the cores'
    time that is busy. Lower cycles is faster; utilisation says how much of the machine the kernel occupies.
    """

    model_config = ConfigDict(frozen=True)

    total_cycles: int
    e2e_time: float | None = None
    utilization_percent: float | None = None
    task_count: int | None = None
    vector_tasks: int | None = None
    cube_tasks: int | None = None
    average_task_cycles: float | None = None
    pipes: dict[str, PipeUsage] = {}

    def rounded(self) -> dict[str, int | float | None]:
        """What an agent may see: cycles to 3 significant digits, percentages to 1 decimal (ARCHITECTURE §0.2).

        The cost model is deterministic for a given wheel, but a rounded figure keeps a recorded run replaying
        even if a later wheel shifts a few cycles.
        """
        return {
            "total_cycles": _sig3(self.total_cycles),
            "utilization_percent": None if self.utilization_percent is None else round(self.utilization_percent, 1),
            "tasks": self.task_count,
        }


def _sig3(value: int) -> int:
    if value <= 0:
        return value
    digits = len(str(value))
    step = 10 ** max(0, digits - 3)
    return int(round(value / step) * step)


class CompileError(BaseModel):
    """Why the real toolchain rejected the kernel, mapped to a kernel line where possible.

    ``stage``: ``frontend`` (parser / graph construction, raised while tracing), ``compile`` (a check raised
    after tracing while the graph is compiled, e.g. a tile missing for an inserted copy), ``pass`` (the pass pipeline;
    the reason is read from the plog file), ``cost_model`` (simulation), ``wrapper`` (host code around the
    kernel failed under the real ``pypto``), ``crash`` (the process died), ``timeout``.
    ``line_exact`` is False when the line was inferred (e.g. from the op named in a plog message).
    """

    model_config = ConfigDict(frozen=True)

    stage: Literal["frontend", "compile", "pass", "cost_model", "wrapper", "crash", "timeout"]
    code: str | None = None
    type: str = ""
    message: str = ""
    file: str | None = None
    line: int | None = None
    line_exact: bool = True
    detail: list[str] = []

    def one_line(self) -> str:
        where = f"{self.file}:{self.line}: " if self.file and self.line else ""
        code = f"{self.code} " if self.code else ""
        return f"{where}{code}{self.message}".strip()


class ShapeResult(BaseModel):
    """One compiled call: the kernel's wrapper called on the inputs of one case (one shape and dtype)."""

    case: str
    dims: dict[str, int] = {}
    dtype: str = ""
    status: Literal["accepted", "rejected", "not_run"]
    cost: CostFigures | None = None
    error: CompileError | None = None
    kernel_calls: int = 0
    duration_s: float = 0.0


class ToolchainResult(BaseModel):
    """The second opinion on one kernel file.

    ``status``: ``accepted`` (every compiled shape compiled and simulated), ``rejected`` (one did not; the
    first rejection stops the run because a failed compile poisons its process), ``unavailable`` (no
    interpreter with the real ``pypto``: nothing was asked), ``error`` (the toolchain itself failed to start).
    ``cost`` is the headline figure: that of the first compiled shape.
    """

    kernel: str
    status: Literal["accepted", "rejected", "unavailable", "error"]
    reason: str = ""
    pypto_version: str | None = None
    python: str | None = None
    shapes: list[ShapeResult] = []
    cost: CostFigures | None = None
    error: CompileError | None = None
    layers: dict[str, bool] = {}
    duration_s: float = 0.0
    import_s: float | None = None
    compile_s: float | None = None
    child_s: float | None = None

    @property
    def accepted(self) -> bool:
        return self.status == "accepted"

    @property
    def available(self) -> bool:
        return self.status not in ("unavailable",)

    def summary(self) -> str:
        """One line for humans: verdict of the real compiler and the headline cost."""
        if self.status == "accepted" and self.cost is not None:
            util = "" if self.cost.utilization_percent is None else f", utilisation {self.cost.utilization_percent:.1f}%"
            return f"real pypto {self.pypto_version or '?'} SIM: accepted; {self.cost.total_cycles} cycles{util}"
        if self.status == "rejected" and self.error is not None:
            return f"real pypto {self.pypto_version or '?'} SIM: REJECTED ({self.error.stage}): {self.error.one_line()}"
        return f"real pypto toolchain: {self.status}" + (f" ({self.reason})" if self.reason else "")
