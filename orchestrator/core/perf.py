"""The optional performance stage (``--perf``): verified variants of the delivered kernel, scored, best delivered.

Flow (graph: ``gate_final`` approve -> ``gate_perf_start`` -> ``perf`` x budget -> ``gate_perf_deliver`` ->
``report``; see docs/performance.md):

1. ``gate_perf_start`` shows the baseline (the kernel that passed the final verification) and its score;
2. each ``perf`` dispatch asks the implementer for ONE variant of ``<op>_impl.py`` (tile shapes, loop
   structure, unroll), verifies it with ``runtime.verify`` on all cases (only a PASS counts) and scores it;
3. ``gate_perf_deliver`` shows the table; approve delivers the best verified variant (the baseline when
   none is faster), reject keeps the baseline.

Scores, lower is better:

* **cost model** (``runtime.toolchain``, the real pypto 0.2.0 SIM): total simulated cycles summed over the
  SPEC's distinct shapes. Recorded in the trace like a tool result, so a replay needs no pypto;
* **emulator estimate** (no toolchain): :func:`emulator_estimate` of the emulator's cost counters for the
  first case - a rough, clearly labelled figure (``eu``, estimate units), never called cycles.

Agents see the figures rounded to 3 significant digits (ARCHITECTURE §0.2); the exact ones go to the README,
the run report and the trace. The delivered file always has a PASS report whose hashes match it.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel

from orchestrator.core.services import Services
from runtime.verdicts import Verdict

__all__ = ["PERF_MARKER", "PerfRow", "PerfSummary", "emulator_estimate", "from_state", "request",
           "request_update", "round3"]

PERF_MARKER = "PERFORMANCE STAGE"
"""First words of the implementer feedback of a perf dispatch (scripted agents key their answers on it)."""

VECTOR_CORES = 48
"""Vector cores of the simulated machine (pypto 0.2.0 cost model: 24 cube + 48 vector)."""

Scorer = Literal["cost_model", "emulator_estimate"]


def round3(value: float | int | None) -> float | int | None:
    """Round to 3 significant digits (what agents see)."""
    if value is None or value == 0:
        return value
    digits = 3 - int(math.floor(math.log10(abs(value)))) - 1
    out = round(value, digits)
    return int(out) if float(out).is_integer() else out


def emulator_estimate(counters: dict[str, Any]) -> float | None:
    """A rough cost of one kernel call from the emulator's counters, in estimate units (``eu``).

    work = bytes moved / 64 + output elements / 16 + matmul flops / 1024 (per-call totals); the outermost
    loop's trips are the parallel tasks, spread over 48 vector cores in ``waves``:
    ``estimate = waves * work / trips + 16 * trips`` (a per-task launch cost). It models neither pipes nor
    dependencies: use it to rank variants of one kernel, never as a time.
    """
    if not counters:
        return None
    work = (int(counters.get("bytes_in", 0)) + int(counters.get("bytes_out", 0))) / 64 \
        + int(counters.get("elements", 0)) / 16 + int(counters.get("matmul_flops", 0)) / 1024
    trips_by_loop = counters.get("loop_trips") or {}
    trips = max([int(v) for v in trips_by_loop.values()] or [1]) // max(1, int(counters.get("runs", 1) or 1))
    trips = max(trips, 1)
    waves = math.ceil(trips / VECTOR_CORES)
    return round(waves * work / trips + 16 * trips, 1)


class PerfRow(BaseModel):
    """One candidate of the perf stage (variant 0 = the baseline that passed the final verification)."""

    variant: int
    file: str = ""
    sha256: str | None = None
    verdict: Verdict | None = None
    """The verifier's verdict; None when the implementer gave no usable answer (``note`` says why)."""
    report_hash: str | None = None
    evidence: str | None = None
    """Agent-visible identity of the variant's report (inputs + outcome; never the report hash)."""
    cycles: int | None = None
    """cost model: total cycles summed over the compiled shapes"""
    first_cycles: int | None = None
    utilization_percent: float | None = None
    estimate: float | None = None
    """emulator estimate (eu) when no cost model"""
    toolchain: str = ""
    """real compiler status for this variant (accepted / rejected / '')"""
    note: str = ""

    def shown(self) -> str:
        """The verdict as the table shows it."""
        return self.verdict.value if self.verdict is not None else "no answer"

    def score(self, scorer: Scorer) -> float | None:
        if self.verdict != Verdict.PASS:
            return None
        return float(self.cycles) if scorer == "cost_model" and self.cycles is not None else \
            (self.estimate if scorer == "emulator_estimate" else None)


class PerfSummary(BaseModel):
    """``state["perf"]``: request, progress and the table of variants (renderers read this model)."""

    requested: bool = False
    budget: int = 3
    status: Literal["pending", "running", "skipped", "done"] = "pending"
    scorer: Scorer = "cost_model"
    baseline: PerfRow | None = None
    variants: list[PerfRow] = []
    best: int = 0
    delivered: int | None = None

    def rows(self) -> list[PerfRow]:
        return ([self.baseline] if self.baseline else []) + list(self.variants)

    def best_row(self) -> PerfRow | None:
        return next((r for r in self.rows() if r.variant == self.best), None)

    def unit(self) -> str:
        return "cycles" if self.scorer == "cost_model" else "eu (emulator estimate)"

    def table(self, *, rounded: bool) -> list[str]:
        """Markdown table of the variants; ``rounded`` for anything an agent reads."""
        fig = round3 if rounded else (lambda v: v)
        head = "| variant | verdict | " + ("cycles (sum over shapes) | first shape | utilisation |"
                                          if self.scorer == "cost_model" else "estimate (eu) |") + " note |"
        sep = "|---|---|---|---|---|---|" if self.scorer == "cost_model" else "|---|---|---|---|"
        out = [head, sep]
        for r in self.rows():
            mark = " (best)" if r.variant == self.best else ""
            name = ("baseline" if r.variant == 0 else f"v{r.variant}") + mark
            if self.scorer == "cost_model":
                util = "" if r.utilization_percent is None else f"{round(r.utilization_percent, 1)}%"
                out.append(f"| {name} | {r.shown()} | {_s(fig(r.cycles))} | {_s(fig(r.first_cycles))} | {util} | "
                           f"{r.note} |")
            else:
                out.append(f"| {name} | {r.shown()} | {_s(fig(r.estimate))} | {r.note} |")
        return out

    def markdown(self) -> str:
        """README / report section."""
        if not self.baseline or self.status == "skipped":
            return ""
        best = self.best_row()
        lines = ["## Performance stage", "",
                 f"Scored by the {'cost model of the real pypto 0.2.0 (SIM)' if self.scorer == 'cost_model' else 'emulator estimate (rough; see docs/performance.md)'}; "
                 f"{len(self.variants)} variant(s) tried, each verified on all cases before it was scored.", ""]
        lines += self.table(rounded=False)
        if best is not None and self.baseline is not None:
            b, s = self.baseline.score(self.scorer), best.score(self.scorer)
            if self.delivered is not None and b and s is not None:
                lines += ["", f"Delivered: {'baseline' if self.delivered == 0 else f'v{self.delivered}'} "
                              f"({_s(s)} vs {_s(b)} {self.unit()} for the first verified kernel, "
                              f"{100 * (b - s) / b:.1f}% fewer)."]
        return "\n".join(lines) + "\n"


def _s(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def request(svc: Services) -> dict[str, Any] | None:
    """The perf request to store in state at the final PASS (None when ``--perf`` was not given).

    A replay follows its recording: the stage runs when the recorded trace decided its start gate.
    """
    wanted = svc.config.perf
    if not wanted:
        wanted = svc.trace.recorded_decision("perf_start", None, 0) is not None
    if not wanted:
        return None
    return PerfSummary(requested=True, budget=svc.config.perf_budget).model_dump(mode="json")


def request_update(svc: Services) -> dict[str, Any]:
    """``{"perf": request}`` for a node's state update when the stage is requested, else ``{}``."""
    req = request(svc)
    return {"perf": req} if req is not None else {}


def from_state(state: dict[str, Any]) -> PerfSummary | None:
    raw = state.get("perf")
    return PerfSummary.model_validate(raw) if raw else None
