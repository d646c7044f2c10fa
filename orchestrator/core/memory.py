"""Render MEMORY.md from graph state (ARCHITECTURE §7).

Why rendered, never edited: agents read MEMORY.md, only tools write it, so it is a pure function of the
state and its append-only logs — deterministic (no clock reads here; timestamps come from the log rows,
which carry the injected clock's value) and rewritten after every node.
"""

from __future__ import annotations

from orchestrator.core.perf import PerfSummary
from orchestrator.core.state import ForgeState
from runtime.stages import stage_suffix
from runtime.verdicts import Verdict


def _cell(value: object) -> str:
    text = "" if value is None else str(value)
    return text.replace("|", "\\|").replace("\n", " ").strip()


def _table(header: list[str], rows: list[list[object]], empty: str) -> list[str]:
    if not rows:
        return [empty]
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return out


VERIFY_HEADER = ["When", "Module", "Staged file", "Tensors", "rtol", "atol", "all_close", "out_of_tolerance",
                 "max_diff", "Verdict / evidence"]


def verify_cells(entry: dict) -> list[object]:
    """One verification-log row: the verifier's own ``memory_row()`` cells when it gave them, else a summary."""
    row = str(entry.get("row") or "").strip()
    if row.startswith("|") and row.endswith("|"):
        cells = [c.strip() for c in row[1:-1].split(" | ")]
        if len(cells) == len(VERIFY_HEADER):
            # the run's clock, not the report's wall-clock creation time: MEMORY.md is part of every prompt,
            # so it must be reproducible for replay (orchestrator/core/logical_clock.py)
            return [entry.get("when") or cells[0], *cells[1:]]
    verdict = f"{entry.get('verdict')} {str(entry.get('evidence') or '-')[:12]}"
    return [entry.get("when"), entry.get("module"), entry.get("file"), "-", "-", "-",
            str(entry.get("verdict") == Verdict.PASS), "-", "-", f"{verdict}: {row}" if row else verdict]


def next_step(state: ForgeState) -> str:
    """The next mandatory step, derived from state (shown to agents and humans)."""
    if state.get("outcome") == "delivered":
        return "none: delivered"
    if state.get("outcome") == "aborted":
        return "none: aborted"
    if (b := state.get("blocked")) is not None:
        return f"human decision at the blocked gate (module {b.get('module')}): {b.get('reason')}"
    phase = state.get("phase", "intake")
    if phase in ("intake", "design"):
        return "design: DESIGN.md + module_interfaces.yaml must pass the design check and the design gate"
    if phase == "construction":
        k = state.get("active", 0)
        mods = state.get("modules", [])
        if 1 <= k <= len(mods):
            m = mods[k - 1]
            if m.get("status") == "verified":
                return f"M{k} verified; golden-coverage audit and module gate"
            return f"implement and verify M{k} ({m.get('stage_file')}), attempt {m.get('attempts', 0) + 1}"
    if phase == "cleanup":
        return "cleanup to the final kernel and final verification on all cases"
    if phase == "final":
        return "final gate"
    return "continue"


def render_memory(state: ForgeState) -> str:
    """MEMORY.md text for ``state`` (same state -> same bytes)."""
    op = state.get("op_name", "?")
    mods = state.get("modules", [])
    active = state.get("active", 0)
    level = state.get("level", "?")
    current = mods[active - 1].get("stage_file") if 1 <= active <= len(mods) else None
    verified = [m for m in mods if m.get("status") == "verified"]
    lines = [f"# Plan: {op}", "", "<!-- Rendered by PTO Forge from the run state; do not edit by hand. -->", ""]

    lines += ["## Agent status", "", "```yaml", f"phase: {state.get('phase', 'intake')}",
              f"decomposition_level: {level}", f"module_count: {state.get('module_count', '?')}",
              f"active_module: {'M' + str(active) if active else 'none'}",
              f"current_staged_file: {current or 'none'}"]
    if verified:
        lines.append("modules_pypto_verified:")
        for m in verified:
            lines.append(f"  - {{id: M{m['id']}, evidence: {str(m.get('evidence') or '')[:16]}, "
                         f"detailed_tensor_compare_ok: true}}")
    else:
        lines.append("modules_pypto_verified: []")
    lines.append(f"next_mandatory_step: {_cell(next_step(state))}")
    blocked = state.get("blocked")
    blockers = [blocked["reason"]] if blocked else []
    lines.append("blockers: [" + ", ".join(f'"{_cell(b)}"' for b in blockers) + "]")
    if state.get("outcome"):
        lines.append(f"outcome: {state['outcome']}")
    lines += ["```", ""]

    cx = state.get("complexity", {})
    lines += ["## Task summary", "", f"- operator: `{op}`", "- golden: `golden.py` (frozen)",
              f"- complexity: total {cx.get('total_complexity', '?')} -> module_count "
              f"{cx.get('module_count', '?')} ({cx.get('level', '?')})", ""]

    lines += ["## Module decomposition", ""]
    lines += _table(["ID", "Role", "Boundary outputs", "Status", "Attempts"],
                    [[f"M{m['id']}", m.get("name", ""), ", ".join(m.get("outputs", []) or []),
                      m.get("status"), f"{m.get('attempts', 0)}/{m.get('budget', 0)}"] for m in mods],
                    "_no decomposition yet_")
    lines.append("")

    lines += ["## Staged module files", ""]
    if level == "L0":
        lines.append("N/A — single-module L0 path: `" + f"{op}_impl.py` is written directly.")
    else:
        lines += _table(["Staged file", "Modules in one @jit", "Verified (all outputs)", "sha256"],
                        [[m.get("stage_file"), "M1..M" + str(m["id"]) if m["id"] > 1 else "M1",
                          "☑" if m.get("status") == "verified" else "☐",
                          str(m.get("verified_sha256") or m.get("file_sha256") or "")[:12]] for m in mods],
                        "_none yet_")
    lines.append("")

    cov = state.get("coverage", {})
    lines += ["## Golden function inventory", ""]
    lines += _table(["#", "Golden operation", "Shape transformation", "Module", "PyPTO implementation", "Line",
                     "Status"],
                    [[r.get("index"), r.get("operation"), r.get("shape"),
                      f"M{r['module']}" if r.get("module") else "",
                      cov.get(str(r.get("index")), {}).get("pypto_call", ""),
                      cov.get(str(r.get("index")), {}).get("line", ""),
                      cov.get(str(r.get("index")), {}).get("status", "❌")]
                     for r in state.get("inventory", [])],
                    "_golden.py has no inventory header_")
    lines.append("")

    lines += ["## Per-module verification log", ""]
    lines += _table(VERIFY_HEADER, [verify_cells(r) for r in state.get("verify_log", [])], "_no verification yet_")
    lines.append("")

    perf = state.get("perf") or {}
    if perf.get("baseline"):
        summary = PerfSummary.model_validate(perf)
        lines += ["## Performance stage", "", f"status: {summary.status}; scored by {summary.unit()}; "
                  f"budget {summary.budget} variant(s)", ""]
        lines += summary.table(rounded=True)
        lines.append("")

    lines += ["## Per-module lint history", ""]
    lines += _table(["When", "Module", "File", "Blocking rules", "Resolution"],
                    [[r.get("when"), r.get("module"), r.get("file"), r.get("rules"), r.get("resolution", "")]
                     for r in state.get("lint_log", [])],
                    "_no blocking lint findings_")
    lines.append("")

    lines += ["## Development and debug log", ""]
    lines += _table(["When", "Node", "Action", "Result", "Next"],
                    [[r.get("when"), r.get("node"), r.get("action"), r.get("result"), r.get("next", "")]
                     for r in state.get("dev_log", [])],
                    "_empty_")
    lines.append("")

    lines += ["## Rejected approaches", ""]
    lines += _table(["Approach", "Evidence", "When"],
                    [[r.get("approach"), r.get("evidence"), r.get("when")] for r in state.get("rejected", [])],
                    "_none_")
    lines.append("")
    return "\n".join(lines)


def stage_label(k: int) -> str:
    return f"module{stage_suffix(k)}"
