"""The real compiler's second opinion at the final verification, recorded like a tool result.

After ``verify_final`` PASSes, the delivered ``<op>_impl.py`` is compiled with the real pypto 0.2.0 in SIM
mode (``runtime.toolchain``) when an interpreter with it is configured. The answer never changes the verdict
(only ``runtime.verify`` sets one, ARCHITECTURE §0.1); it adds two things a user needs:

* a **fidelity finding** when the emulator passes a kernel the real compiler rejects: shown at the final
  gate, written as a probe candidate into the run directory (``fidelity/``), never a silent pass;
* the **cost-model figures** (cycles, utilisation, per-pipe usage) for the final gate, README and report.

Replay: the result is stored in the trace as a ``verify`` event with ``node="toolchain"`` and ``verdict``
null (it is not a verdict). A replay takes it from the trace (no pypto needed, deterministic) and emits it
again; a strict replay whose trace has none does not run the toolchain at all, so traces recorded without
it replay unchanged.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from orchestrator.core.services import Services
from orchestrator.core.state import FinalState
from orchestrator.store.paths import run_dir, sha256_file
from runtime.toolchain import CompileError, CostFigures, ToolchainResult, ToolchainUsageError, compile_kernel
from runtime.verdicts import Verdict

__all__ = ["TRACE_NODE", "SecondOpinion", "attach", "from_state", "second_opinion", "toolchain_result"]

log = logging.getLogger(__name__)

TRACE_NODE = "toolchain"
_EXCLUDE: Any = {"python": True, "duration_s": True, "import_s": True, "compile_s": True, "child_s": True,
                 "layers": True, "shapes": {"__all__": {"duration_s"}}}


Source = Literal["live", "replay", "none"]
"""Where a second opinion came from."""


class SecondOpinion(BaseModel):
    """What the run keeps of the real compiler's answer on the delivered kernel (state ``final.toolchain``).

    Renderers (final gate, README, run report) read this model; ``markdown()`` is the README section.
    """

    status: Literal["accepted", "rejected", "unavailable", "error"]
    source: Source = "none"
    target: str = ""
    summary: str = ""
    pypto_version: str | None = None
    cost: CostFigures | None = None
    shapes: list[dict[str, Any]] = []
    error: CompileError | None = None
    fidelity_finding: str | None = None
    probe_candidate: str | None = None

    def gate_lines(self) -> list[str]:
        """Lines for the final gate's details."""
        lines = [f"second opinion: {self.summary}" + (" (from the trace)" if self.source == "replay" else "")]
        if self.fidelity_finding:
            lines.append(f"FIDELITY FINDING: {self.fidelity_finding}")
            if self.probe_candidate:
                lines.append(f"probe candidate written: {self.probe_candidate}")
        for s in self.shapes:
            if s.get("total_cycles") is not None:
                lines.append(f"  {s['case']}: {s['total_cycles']} cycles, utilisation {s.get('utilization_percent')}%")
        return lines

    def markdown(self) -> str:
        """The README / report section "Performance (cost model)"; empty when nothing was compiled."""
        if self.status not in ("accepted", "rejected"):
            return ""
        out = ["## Real toolchain (pypto SIM) and cost model", ""]
        if self.status == "rejected" and self.error is not None:
            where = f" at line {self.error.line}" + ("" if self.error.line_exact else " (inferred)") \
                if self.error.line else ""
            out += [f"The real pypto {self.pypto_version or ''} compiler **rejects** this kernel "
                    f"({self.error.stage}{where}): {self.error.code or ''} {self.error.message}".rstrip(), ""]
            if self.fidelity_finding:
                out += [f"This is a fidelity finding: {self.fidelity_finding}", ""]
            return "\n".join(out) + "\n"
        out += [f"Compiled by the real pypto {self.pypto_version or ''} in `RunMode.SIM`; figures from its cost "
                "model (simulated, no device; see docs/toolchain.md for how to read them).", "",
                "| case | total cycles | AICore e2e time | utilisation | tasks | vector | MTE in | MTE out | cube |",
                "|---|---|---|---|---|---|---|---|---|"]
        for s in self.shapes:
            out.append(f"| {s['case']} | {s.get('total_cycles', '')} | {_fmt(s.get('e2e_time'))} | "
                       f"{_fmt(s.get('utilization_percent'), '%')} | {s.get('tasks', '')} | "
                       f"{_fmt(s.get('vector'), '%')} | {_fmt(s.get('mte_in'), '%')} | {_fmt(s.get('mte_out'), '%')} | "
                       f"{_fmt(s.get('cube'), '%')} |")
        return "\n".join(out) + "\n"


def _fmt(value: Any, unit: str = "") -> str:
    if value is None:
        return ""
    return f"{value:.2f}{unit}" if isinstance(value, float) else f"{value}{unit}"


def _shape_rows(res: ToolchainResult) -> list[dict[str, Any]]:
    rows = []
    for s in res.shapes:
        c = s.cost
        row: dict[str, Any] = {"case": s.case, "status": s.status}
        if c is not None:
            row.update(total_cycles=c.total_cycles, e2e_time=c.e2e_time, utilization_percent=c.utilization_percent,
                       tasks=c.task_count, **{k: v.percent for k, v in c.pipes.items()})
        rows.append(row)
    return rows


_KNOWN: dict[str, dict[str, Any]] = {}
"""Real-compiler answers carried over from an earlier recording, by kernel sha256 (see :func:`known_answers`)."""


@contextlib.contextmanager
def known_answers(trace_events: list[dict[str, Any]]) -> Iterator[int]:
    """Serve the toolchain answers of an earlier recording for identical kernel files during a record run.

    Re-authoring a shipped trace on a machine without pypto then records the same cost figures again (they
    are a function of the kernel file and the wheel), instead of silently dropping them.
    """
    found = {str(e.get("target_sha256")): e["toolchain"] for e in trace_events
             if e.get("kind") == "verify" and e.get("node") == TRACE_NODE and e.get("toolchain")}
    _KNOWN.update(found)
    try:
        yield len(found)
    finally:
        for sha in found:
            _KNOWN.pop(sha, None)


def toolchain_result(svc: Services, root: Path, target: str, *, node: str = TRACE_NODE,
                     max_shapes: int | None = None) -> tuple[ToolchainResult | None, Source]:
    """The real compiler's answer on ``target``: from the trace on replay, else live when available.

    Returns ``(result, source)``; ``(None, "none")`` when nothing can be had (no pypto, or a strict replay
    whose trace holds no answer for this file). A live answer is emitted as a trace event.
    """
    sha = sha256_file(root / target)
    events = svc.trace.recorded("verify", node=node, target=target, target_sha256=sha)
    if events:  # re-emitted so the replay's trace is as complete as the recording
        svc.trace.emit("verify", node=node, target=target, target_sha256=sha, verdict=None,
                       toolchain=events[0]["toolchain"])
        return ToolchainResult.model_validate(events[0]["toolchain"]), "replay"
    if svc.trace.mode == "replay":
        return None, "none"
    if sha in _KNOWN:  # an identical file answered in an earlier recording (re-authoring without pypto)
        svc.trace.emit("verify", node=node, target=target, target_sha256=sha, verdict=None, toolchain=_KNOWN[sha])
        return ToolchainResult.model_validate(_KNOWN[sha]), "replay"
    python = svc.config.toolchain_python
    try:
        res = compile_kernel(root, root / target, python=python, max_shapes=max_shapes)
    except ToolchainUsageError as exc:
        log.warning("second opinion not available: %s", exc)
        return None, "none"
    if res.status == "unavailable":
        return None, "none"
    svc.trace.emit("verify", node=node, target=target, target_sha256=sha, verdict=None,  # a second opinion,
                   toolchain=res.model_dump(mode="json", exclude=_EXCLUDE))           # never a verdict
    return res, "live"


def second_opinion(svc: Services, state: dict[str, Any], root: Path, target: str) -> SecondOpinion | None:
    """Run (or replay) the second opinion on the delivered file after a final PASS; None when unavailable."""
    res, source = toolchain_result(svc, root, target)
    if res is None:
        return None
    op = SecondOpinion(status=res.status, source=source, target=target, summary=res.summary(),
                       pypto_version=res.pypto_version, cost=res.cost, shapes=_shape_rows(res), error=res.error)
    if res.status == "rejected" and res.error is not None:
        op.fidelity_finding = (f"the emulator PASSes {target} but the real compiler rejects it "
                               f"({res.error.stage}, {res.error.one_line()})")
        op.probe_candidate = _write_probe(root, state.get("run_id", "run"), target, res)
    return op


def _write_probe(root: Path, run_id: str, target: str, res: ToolchainResult) -> str | None:
    """Copy the kernel and the real outcome into ``.forge/run-<id>/fidelity/`` (a probe for the emulator)."""
    dest = run_dir(root, run_id) / "fidelity"
    try:
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / target, dest / Path(target).name)
        (dest / f"{Path(target).stem}.real.json").write_text(json.dumps(
            {"kernel": Path(target).name, "emulator": Verdict.PASS.value, "real": res.model_dump(mode="json", exclude=_EXCLUDE),
             "how_to_use": "add as a probe in tests/toolchain/fixtures/probes with this expectation; the emulator should "
                           "reject it the same way"}, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        log.warning("could not write the fidelity probe candidate: %s", exc)
        return None
    return str((dest / Path(target).name).relative_to(root))


def from_state(state: dict[str, Any]) -> SecondOpinion | None:
    """The second opinion stored in a run's state (``final.toolchain``), for gates and reports."""
    raw = (state.get("final") or {}).get("toolchain")
    return SecondOpinion.model_validate(raw) if raw else None


def attach(svc: Services, state: dict[str, Any], root: Path, target: str, final: FinalState) -> None:
    """Run the second opinion on the delivered file and store it in ``final`` (the README shows it:
    ``orchestrator.core.delivery``). Called where a final PASS is established (``verify_final``, ``cleanup`` on L0)."""
    opinion = second_opinion(svc, state, root, target)
    if opinion is not None:
        final["toolchain"] = opinion.model_dump(mode="json")
