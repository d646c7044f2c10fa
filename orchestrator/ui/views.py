"""What a reviewer needs at each gate, as plain data read from the op dir, the run's state and its reports.

Shown to humans only (terminal screens, ``show``, the HTML report); nothing here ever reaches a model
request. Built from files the run already keeps: stage files, stored verify reports, module_interfaces.yaml,
DESIGN.md, and the design snapshots the driver takes when a design gate opens (for the diff against the
design the human rejected).

The run's state (LangGraph) and the nodes' helpers are imported where a gate view needs them: ``show REPORT``
renders a stored report through :mod:`orchestrator.ui.screens`, which imports this module, and took ~2 s of CPU
loading the graph it never used (UX audit s45).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, Field

from orchestrator.core.perf import PerfSummary
from orchestrator.core.second_opinion import from_state as second_opinion
from orchestrator.errors import ForgeError
from orchestrator.gates import GateRequest
from orchestrator.store.artifacts import attempts_dir, previous_design
from orchestrator.store.reports import load_report, read_report
from orchestrator.store.runs import latest_run, lock_holder
from runtime.frontmatter import split_front_matter
from runtime.stages import final_file
from runtime.yamlio import load_yaml

if TYPE_CHECKING:
    from runtime.verify import VerifyReport

MAX_DIFF_LINES = 80
"""Diff lines shown in a terminal screen (the HTML report shows whole diffs)."""


class CaseRow(BaseModel):
    case: str
    dims: str
    dtype: str
    seed: int | None = None
    status: str
    max_diff: float | None = None
    oot_ratio: float | None = None
    """Out-of-tolerance ratio (worst leaf)."""
    passed: bool
    error: str = ""


class GateView(BaseModel):
    """Everything a gate screen shows; every section may be empty."""

    gate: str
    module: int | None = None
    seq: int = 0
    title: str = ""
    facts: list[tuple[str, str]] = Field(default_factory=list)
    decomposition: list[dict[str, str]] = Field(default_factory=list)
    interfaces: list[dict[str, str]] = Field(default_factory=list)
    rationale: str = ""
    design_diff: list[str] = Field(default_factory=list)
    design_diff_against: str = ""
    cases: list[CaseRow] = Field(default_factory=list)
    code_diff: list[str] = Field(default_factory=list)
    code_diff_label: str = ""
    diagnosis: str = ""
    coverage: list[dict[str, str]] = Field(default_factory=list)
    coverage_note: str = ""
    cause: list[str] = Field(default_factory=list)
    cause_source: str = "last verify report"
    """Where ``cause`` comes from, for its title: the last verify report, or the module's last feedback when no
    verification ran (UX audit s33: an agent error was titled "last verify report")."""
    counters: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    """Further lines the gate itself carries (e.g. the real toolchain's second opinion at the final gate)."""
    choices: list[str] = Field(default_factory=list)


def case_rows(report: VerifyReport | None) -> list[CaseRow]:
    """One row per case of a report: worst leaf's max diff and out-of-tolerance ratio, pass or not."""
    rows = []
    for c in report.cases if report is not None else []:
        diffs = [leaf.max_diff for leaf in c.leaves]
        ratios = [leaf.out_of_tolerance_ratio for leaf in c.leaves]
        err = c.error
        rows.append(CaseRow(case=c.name, dims=", ".join(f"{k}={v}" for k, v in c.dims.items()), dtype=c.dtype,
                            seed=c.seed, status=c.status, max_diff=max(diffs) if diffs else None,
                            oot_ratio=max(ratios) if ratios else None, passed=c.status == "pass",
                            error=f"{err.type}: {err.message}"[:160] if err is not None else ""))
    return rows


def unified(old: str, new: str, a: str, b: str) -> list[str]:
    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), a, b, lineterm="", n=2))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


# --------------------------------------------------------------------------------------------------- views

def rationale_excerpt(design_md: str, limit: int = 14) -> str:
    """The decision and rationale paragraphs of DESIGN.md (the ``Decomposition`` section), else its start."""
    lines = split_front_matter(design_md).body.splitlines()  # the whole text when it has no front matter
    start = next((i for i, ln in enumerate(lines) if ln.lstrip("#").strip().lower().startswith("decomposition")
                  and ln.startswith("#")), None)
    if start is None:
        body = [ln for ln in lines if ln.strip()][:limit]
        return "\n".join(body)
    out = []
    for ln in lines[start + 1:]:
        if ln.startswith("## "):
            break
        if ln.startswith("|"):
            continue
        out.append(ln)
    text = "\n".join(out).strip()
    return "\n".join(text.splitlines()[:limit])


def design_view(op_dir: Path, run_id: str, values: dict, seq: int) -> GateView:
    view = GateView(gate="design")
    d = values.get("design", {})
    cx = values.get("complexity", {})
    view.facts = [("module_count", f"{values.get('module_count')} ({values.get('level')})"),
                  ("computed by the formula", str(cx.get("module_count"))),
                  ("design attempt", str(d.get("attempts")))]
    try:
        mi = load_yaml(_read(op_dir / "module_interfaces.yaml")) or {}
    except yaml.YAMLError:
        mi = {}
    inventory = values.get("inventory", [])
    for m in mi.get("modules", []) if isinstance(mi, dict) else []:
        if not isinstance(m, dict):
            continue
        rows = [str(r.get("index")) for r in inventory if r.get("module") == m.get("id")]
        view.decomposition.append({
            "module": f"M{m.get('id')}", "name": str(m.get("name", "")),
            "description": str(m.get("description", "")),
            "golden rows": ", ".join(rows) or "-"})
        ins = ", ".join(f"{i.get('name')}<-{i.get('source')}" for i in m.get("inputs", []) if isinstance(i, dict))
        outs = ", ".join(f"{o.get('name')} {o.get('dtype', '')}[{', '.join(str(d) for d in o.get('shape') or [])}]"
                         for o in m.get("outputs", []) if isinstance(o, dict))
        view.interfaces.append({"module": f"M{m.get('id')}", "inputs": ins, "outputs": outs})
    if not view.decomposition:
        view.decomposition = [{"module": f"M{m['id']}", "name": str(m.get("name")), "description": "",
                               "golden rows": "-"} for m in values.get("modules", [])]
    design_md = _read(op_dir / "DESIGN.md")
    view.rationale = rationale_excerpt(design_md)
    if d.get("rationale") and d["rationale"] not in view.rationale:
        view.rationale = f"{d['rationale']}\n\n{view.rationale}".strip()
    prev = previous_design(op_dir, run_id, seq)
    if prev is not None:
        view.design_diff_against = f"the design shown at gate #{int(prev.name[:3])}"
        for name in ("DESIGN.md", "module_interfaces.yaml"):
            view.design_diff += unified(_read(prev / name), _read(op_dir / name), f"rejected/{name}", f"now/{name}")
        if not view.design_diff:
            view.notes.append(f"UNCHANGED: this design is byte-identical to {view.design_diff_against}, which was "
                              "rejected; the designer did not act on the note")
    return view


def _latest_diagnosis(module: dict) -> str:
    for note in reversed(module.get("feedback", [])):
        if str(note).startswith("debugger: "):
            return str(note)[len("debugger: "):]
    return ""


def module_view(op_dir: Path, run_id: str, values: dict, k: int) -> GateView:
    mods = values.get("modules", [])
    m = mods[k - 1] if 1 <= k <= len(mods) else {}
    view = GateView(gate="module", module=k)
    report = load_report(op_dir, run_id, m.get("report_hash"))
    view.facts = [("stage file", str(m.get("stage_file"))), ("verdict", str(m.get("verdict"))),
                  ("attempts", f"{m.get('attempts')}/{m.get('budget')}"),
                  ("report", str(m.get("report_hash") or "-")[:16]), ("audit", str(m.get("audit")))]
    view.cases = case_rows(report)
    new = _read(op_dir / str(m.get("stage_file", "")))
    prev_file = mods[k - 2].get("stage_file") if k > 1 else None
    if prev_file:
        view.code_diff = unified(_read(op_dir / prev_file), new, prev_file, str(m.get("stage_file")))
        view.code_diff_label = f"{prev_file} -> {m.get('stage_file')}"
    else:
        view.code_diff = unified("", new, "/dev/null", str(m.get("stage_file")))
        view.code_diff_label = f"new file {m.get('stage_file')}"
    view.diagnosis = _latest_diagnosis(m)
    cov = values.get("coverage", {})
    from orchestrator.core.nodes.audit import rows_in_scope  # the nodes: only for a gate screen

    scope = set(rows_in_scope(values, k))  # type: ignore[arg-type]
    for r in values.get("inventory", []):
        if int(r.get("index", 0)) not in scope:
            continue
        c = cov.get(str(r.get("index")), {})
        view.coverage.append({"#": str(r.get("index")), "operation": str(r.get("operation")),
                              "status": str(c.get("status", "-")), "pypto call": str(c.get("pypto_call", "")),
                              "line": str(c.get("line", ""))})
    if not view.coverage:
        view.coverage_note = (f"golden coverage audit: no inventory row is in scope for M{k} yet (rows without a "
                              "module marker are audited with the last module)")
    return view


def final_view(op_dir: Path, run_id: str, values: dict) -> GateView:
    f = values.get("final", {})
    view = GateView(gate="final")
    report = load_report(op_dir, run_id, f.get("report_hash"))
    kernel = _read(op_dir / final_file(str(values.get("op_name", ""))))
    view.facts = [("kernel", final_file(str(values.get("op_name", "")))),
                  ("size", f"{len(kernel.splitlines())} lines, {len(kernel.encode())} bytes"),
                  ("final verdict", str(f.get("verdict"))), ("report", str(f.get("report_hash") or "-")[:16]),
                  ("modules", str(len(values.get("modules", []))))]
    view.cases = case_rows(report)
    view.counters = {k: v for k, v in (report.counters if report is not None else {}).items()
                     if isinstance(v, int | float) and not isinstance(v, bool)}
    opinion = second_opinion(values)
    if opinion is not None:
        view.facts.append(("real compiler", opinion.summary))
        if opinion.fidelity_finding:
            view.facts.append(("FIDELITY FINDING", opinion.fidelity_finding))
            view.facts.append(("probe candidate", str(opinion.probe_candidate)))
        for s in opinion.shapes:
            if s.get("total_cycles") is not None:
                view.facts.append((f"cycles {s['case']}", f"{s['total_cycles']} (utilisation "
                                                          f"{s.get('utilization_percent')}%)"))
    return view


def perf_view(values: dict, gate: str) -> GateView:
    """The perf stage's gates: baseline before, the table of verified variants after (orchestrator.core.perf)."""
    p = PerfSummary.model_validate(values.get("perf") or {})
    if p.baseline is None and values.get("op_dir"):  # at the start gate: the baseline as the gate scores it
        from orchestrator.core.nodes.perf_gates import baseline_row

        p.baseline, p.scorer = baseline_row(values)  # type: ignore[assignment]
    view = GateView(gate=gate, title="performance stage")
    view.facts = [("scored by", p.unit()), ("budget", f"{p.budget} variant(s)")]
    for r in p.rows():
        name = "baseline" if r.variant == 0 else f"v{r.variant}"
        score = r.score(p.scorer)
        view.facts.append((name + (" (best)" if r.variant == p.best and gate == "perf_deliver" else ""),
                           f"{r.shown()}" + ("" if score is None else f", {score:g} {p.unit()}")
                           + (f" - {r.note}" if r.note else "")))
    return view


def blocked_view(op_dir: Path, run_id: str, values: dict) -> GateView:
    b = values.get("blocked") or {}
    view = GateView(gate="blocked", module=b.get("module"))
    verdict = values.get("last_verdict")
    view.facts = [("reason", str(b.get("reason"))),
                  ("last verdict", str(verdict) if verdict else "none (no verification in this module yet)")]
    rel = values.get("last_report")
    report = read_report(op_dir / rel) if rel else None
    view.cause = list(report.reasons[:6]) if report is not None else []
    k = b.get("module")
    mods = values.get("modules", [])
    if isinstance(k, int) and 1 <= k <= len(mods):
        view.diagnosis = _latest_diagnosis(mods[k - 1])
        if not view.cause:
            view.cause = [str(x) for x in mods[k - 1].get("feedback", [])[-3:]]
            view.cause_source = "the module's last feedback"
        view.notes += identical_attempts(op_dir, run_id, k)
    view.cases = case_rows(report)
    return view


def identical_attempts(op_dir: Path, run_id: str, module: int) -> list[str]:
    """Lines naming the attempts of a module whose file was byte-identical to the attempt before it (a retry
    that changed nothing cannot fix anything; shown at the blocked gate)."""
    kept = sorted((attempts_dir(op_dir, run_id) / f"M{module}").glob("attempt*_impl.py"))
    same = [cur.name[:9] for prev, cur in zip(kept, kept[1:], strict=False) if prev.read_bytes() == cur.read_bytes()]
    if not same:
        return []
    return [f"UNCHANGED RETRIES: {', '.join(same)} of M{module} wrote the same file as the attempt before "
            f"({len(same)} of {len(kept)} attempts changed nothing)"]


def gate_view(op_dir: Path, run_id: str, values: dict, gate: str, module: int | None, seq: int) -> GateView:
    """The view of a gate from the run's state at that gate."""
    if gate == "design":
        return design_view(op_dir, run_id, values, seq)
    if gate == "module":
        return module_view(op_dir, run_id, values, int(module or values.get("active") or 1))
    if gate == "final":
        return final_view(op_dir, run_id, values)
    if gate in ("perf_start", "perf_deliver"):
        return perf_view(values, gate)
    return blocked_view(op_dir, run_id, values)


def gate_view_for(op_dir: Path | str, req: GateRequest | None = None, *, run_id: str | None = None) -> GateView:
    """What the gate a run waits at shows a reviewer, read from the run's files.

    Raises:
        ForgeError: no run, or the run waits at no gate and ``req`` is not given.
    """
    root = Path(op_dir).resolve()
    holder = lock_holder(root)
    rid = run_id or (holder.get("run_id") if holder and int(holder.get("pid", 0)) == os.getpid() else None) \
        or latest_run(root, shown_as=str(op_dir))  # the hint names the op dir as typed (UX s49)
    if req is None:  # `show --gate`: the run's copy of its checkpoint while it is the latest (no LangGraph)
        from orchestrator.readonly import run_state

        values, _, interrupts = run_state(root, rid)
    else:  # the live run's own screen: its graph is loaded, and its checkpoint moves on
        from orchestrator.core.snapshot import snapshot

        values, _, interrupts = snapshot(root, rid)
    if req is None:
        if not interrupts:  # UX audit s46: it said only that, of a delivered run too
            from orchestrator.command import cli_command, shell_path

            outcome = values.get("outcome")
            then = (f"it has finished ({outcome}); `{cli_command()} show {shell_path(op_dir)} --last` shows its last "
                    "verify report" if outcome else
                    f"`{cli_command()} status {shell_path(op_dir)}` shows where it is")
            raise ForgeError(f"run {rid} is not waiting at a gate: {then}")
        req = GateRequest.model_validate(interrupts[0])
    view = gate_view(root, rid, values, req.gate, req.module, req.seq)
    view.title = req.title
    view.seq = req.seq
    view.choices = list(req.choices)
    return view
