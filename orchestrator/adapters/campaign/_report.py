"""``campaign report DIR``: the figures of a campaign, from its records alone (no run is touched).

pass@1 / pass@k (unbiased estimator, :mod:`._passk`) overall and per level, the histogram of failure
categories, attempts / model calls / tokens / $ per solved task, wall time, and the cost-model cycles of
solved samples against their first verified kernel (where the toolchain ran). :func:`summarize` computes them
into a :class:`CampaignSummary`; the CLI prints it as tables, :func:`write_html` as one self-contained page.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

from pydantic import BaseModel, Field

from orchestrator.adapters.campaign._ledger import CATEGORIES, CampaignConfig, Ledger, SampleResult
from orchestrator.adapters.campaign._passk import mean_pass_at_k, pass_at_k
from orchestrator.errors import ForgeError

__all__ = ["CampaignSummary", "LevelRow", "TaskRow", "summarize", "write_html"]


class TaskRow(BaseModel):
    task: str
    level: str
    n: int
    """Finished samples."""
    c: int
    """Solved samples."""
    pass_at: dict[int, float | None] = Field(default_factory=dict)
    categories: dict[str, int] = Field(default_factory=dict)
    parked: int = 0
    infra: int = 0
    wall_s: float = 0.0
    reason: str = ""
    """The message of a failed sample (why the task failed, e.g. why it cannot be imported)."""


class LevelRow(BaseModel):
    level: str
    tasks: int
    samples: int
    solved_samples: int
    solved_tasks: int
    pass_at: dict[int, float | None] = Field(default_factory=dict)
    tasks_counted: dict[int, int] = Field(default_factory=dict)
    """For each k: how many tasks had at least k finished samples (the mean is over those)."""


class CycleRow(BaseModel):
    task: str
    sample: int
    first: float
    final: float


class CampaignSummary(BaseModel):
    directory: str
    config: CampaignConfig
    ks: list[int]
    tasks: int
    samples_planned: int
    finished: int
    solved: int
    failed: int
    parked: list[SampleResult] = Field(default_factory=list)
    infra_retries: int = 0
    overall: LevelRow
    levels: list[LevelRow] = Field(default_factory=list)
    rows: list[TaskRow] = Field(default_factory=list)
    categories: dict[str, int] = Field(default_factory=dict)
    solved_tasks: int = 0
    attempts_per_solved: float | None = None
    """Mean implementation attempts of a solved sample."""
    calls_per_solved: float | None = None
    """Mean model calls of a solved sample."""
    tokens_per_solved_task: float | None = None
    """All tokens the campaign spent (solved or not) divided by the tasks it solved."""
    cost_per_solved_task: float | None = None
    wall_s: float = 0.0
    """Worker seconds over every sample (infra attempts included)."""
    cycles: list[CycleRow] = Field(default_factory=list)
    cycles_note: str = ""


def _row(level: str, rows: list[TaskRow], ks: list[int]) -> LevelRow:
    out = LevelRow(level=level, tasks=len(rows), samples=sum(r.n for r in rows),
                   solved_samples=sum(r.c for r in rows), solved_tasks=sum(1 for r in rows if r.c > 0))
    for k in ks:
        value, counted = mean_pass_at_k([(r.n, r.c) for r in rows], k)
        out.pass_at[k], out.tasks_counted[k] = value, counted
    return out


def summarize(directory: str | Path) -> CampaignSummary:
    """The figures of the campaign in ``directory``.

    Raises:
        ForgeError: ``directory`` holds no campaign.
    """
    root = Path(directory)
    ledger = Ledger(root)
    config = ledger.config()
    if config is None:
        raise ForgeError(f"{directory}: no campaign here (campaign.json missing); run `campaign run` first")
    try:
        task_list = json.loads((root / "tasks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        task_list = []
    levels = {t["id"]: t["level"] for t in task_list}
    lines = ledger.lines()
    for r in lines:
        levels.setdefault(r.task, r.level)
    states = ledger.states()
    ks = sorted({1, config.samples})
    rows: dict[str, TaskRow] = {tid: TaskRow(task=tid, level=lvl, n=0, c=0) for tid, lvl in levels.items()}
    for r in lines:
        rows[r.task].wall_s += r.wall_s if r.status != "parked" else 0.0
    categories = dict.fromkeys(CATEGORIES, 0)
    parked: list[SampleResult] = []
    infra = 0
    solved_results: list[SampleResult] = []
    finals: list[SampleResult] = []
    for (tid, k), st in states.items():
        if k < 0 or tid not in rows:
            continue
        row = rows[tid]
        row.infra += st.infra
        infra += st.infra
        if st.final is not None:
            finals.append(st.final)
            row.n += 1
            if st.final.status == "solved":
                row.c += 1
                solved_results.append(st.final)
            else:
                cat = st.final.category or "runtime"
                categories[cat] = categories.get(cat, 0) + 1
                row.categories[cat] = row.categories.get(cat, 0) + 1
                row.reason = row.reason or st.final.message
        elif st.parked is not None:
            parked.append(st.parked)
            row.parked += 1
    for row in rows.values():
        row.pass_at = {k: pass_at_k(row.n, row.c, k) for k in ks}
    ordered = sorted(rows.values(), key=lambda row: (row.level, row.task))
    by_level: dict[str, list[TaskRow]] = {}
    for trow in ordered:
        by_level.setdefault(trow.level, []).append(trow)
    solved_tasks = sum(1 for r in ordered if r.c > 0)
    tokens = sum(f.prompt_tokens + f.completion_tokens for f in lines if f.status != "parked")
    costs = [f.cost_usd for f in lines if f.cost_usd is not None and f.status != "parked"]
    summary = CampaignSummary(
        directory=str(root), config=config, ks=ks, tasks=len(rows), samples_planned=len(rows) * config.samples,
        finished=len(finals), solved=len(solved_results), failed=len(finals) - len(solved_results),
        parked=sorted(parked, key=lambda r: (r.task, r.sample)), infra_retries=infra,
        overall=_row("all", ordered, ks), levels=[_row(lv, rs, ks) for lv, rs in sorted(by_level.items())],
        rows=ordered, categories=categories, solved_tasks=solved_tasks,
        wall_s=round(sum(r.wall_s for r in ordered), 3))
    if solved_results:
        summary.attempts_per_solved = sum(r.attempts for r in solved_results) / len(solved_results)
        summary.calls_per_solved = sum(r.model_calls for r in solved_results) / len(solved_results)
    if solved_tasks:
        summary.tokens_per_solved_task = tokens / solved_tasks
        summary.cost_per_solved_task = sum(costs) / solved_tasks if costs else None
    summary.cycles = [CycleRow(task=r.task, sample=r.sample, first=r.cycles_first, final=r.cycles_final or r.cycles_first)
                      for r in sorted(solved_results, key=lambda x: (x.task, x.sample)) if r.cycles_first is not None]
    if solved_results and not summary.cycles:
        summary.cycles_note = ("no cost-model cycles: the real toolchain did not run (not installed, or no "
                               "--pypto-python; docs/toolchain.md)")
    return summary


# ------------------------------------------------------------------------------------------------ HTML

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1500px}
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.ok{color:#1a7f37}.bad{color:#b42318}.dim{color:#777}
td.why{font-size:.8em;color:#666;min-width:28em}
.bar{display:inline-block;height:.9em;background:#b42318;vertical-align:middle}code{background:#f5f5f5;padding:0 .2em}
"""


def _short(text: str, limit: int = 90) -> str:
    """A failure message cut for a table cell (the whole text is the cell's tooltip)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def _num(v: float | None, fmt: str = "{:.1f}") -> str:
    return "n/a" if v is None else fmt.format(v)


def write_html(summary: CampaignSummary, path: str | Path) -> Path:
    """One self-contained page (inline CSS, no script, no external resource)."""
    e = html.escape
    s = summary
    ks = s.ks
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>Campaign report</title>",
           f"<style>{_CSS}</style></head><body>",
           f"<h1>Campaign report</h1><p class='dim'>{e(s.directory)} — suite <code>{e(s.config.suite)}</code>, "
           f"{s.config.samples} sample(s) per task, agents <code>{e(s.config.agents or s.config.model or 'configured model / shipped traces')}</code>, "
           f"gates {e(s.config.gates)}</p>",
           "<h2>Figures</h2><table><tr><th class='l'>level</th><th>tasks</th><th>finished samples</th>"
           "<th>solved samples</th><th>solved tasks</th>" + "".join(f"<th>pass@{k}</th>" for k in ks) + "</tr>"]
    for lv in [*s.levels, s.overall]:
        out.append(f"<tr><td class='l'>{e(lv.level)}</td><td>{lv.tasks}</td><td>{lv.samples}</td>"
                   f"<td>{lv.solved_samples}</td><td>{lv.solved_tasks}</td>"
                   + "".join(f"<td>{_pct(lv.pass_at.get(k))} <span class='dim'>({lv.tasks_counted.get(k, 0)})</span></td>"
                             for k in ks) + "</tr>")
    out.append("</table><p class='dim'>pass@k: unbiased estimator 1 − C(n−c,k)/C(n,k) per task, mean over the tasks "
               "with at least k finished samples (their number in brackets).</p>")
    out.append("<table>")
    for label, value in (("samples planned / finished / solved / failed", f"{s.samples_planned} / {s.finished} / "
                          f"{s.solved} / {s.failed}"),
                         ("parked at a gate", str(len(s.parked))), ("infrastructure failures (retried)", str(s.infra_retries)),
                         ("attempts per solved sample", _num(s.attempts_per_solved)),
                         ("model calls per solved sample", _num(s.calls_per_solved)),
                         ("tokens per solved task", _num(s.tokens_per_solved_task, "{:.0f}")),
                         ("$ per solved task", _num(s.cost_per_solved_task, "{:.4f}")),
                         ("wall time (worker seconds of the samples; preparing tasks not included)", f"{s.wall_s:.1f}")):
        out.append(f"<tr><th class='l'>{e(label)}</th><td>{e(value)}</td></tr>")
    out.append("</table><h2>Failure categories</h2><table>")
    top = max(s.categories.values(), default=0) or 1
    for cat, n in s.categories.items():
        out.append(f"<tr><td class='l'>{e(cat.replace('_', ' '))}</td><td>{n}</td><td class='l'>"
                   f"<span class='bar' style='width:{int(300 * n / top)}px'></span></td></tr>")
    out.append("</table>")
    if s.cycles or s.cycles_note:
        out.append("<h2>Cost-model cycles of solved samples</h2>")
        if s.cycles:
            out.append("<table><tr><th class='l'>task</th><th>sample</th><th>first verified</th><th>delivered</th>"
                       "<th>change</th></tr>")
            for c in s.cycles:
                ch = f"{100 * (c.final - c.first) / c.first:+.1f}%" if c.first else "n/a"
                out.append(f"<tr><td class='l'>{e(c.task)}</td><td>{c.sample}</td><td>{c.first:.0f}</td>"
                           f"<td>{c.final:.0f}</td><td>{ch}</td></tr>")
            out.append("</table>")
        else:
            out.append(f"<p class='dim'>{e(s.cycles_note)}</p>")
    if s.parked:
        out.append("<h2>Parked at a gate</h2><table><tr><th class='l'>task</th><th>sample</th><th class='l'>gate</th>"
                   "<th class='l'>decide, then re-run the campaign</th></tr>")
        for p in s.parked:
            where = Path(s.directory) / (p.op_dir or "")
            out.append(f"<tr><td class='l'>{e(p.task)}</td><td>{p.sample}</td><td class='l'>{e(p.gate or '')}</td>"
                       f"<td class='l'><code>python -m orchestrator approve {e(str(where))}</code></td></tr>")
        out.append("</table>")
    out.append("<h2>Tasks</h2><table><tr><th class='l'>task</th><th class='l'>level</th><th>n</th><th>c</th>"
               + "".join(f"<th>pass@{k}</th>" for k in ks) + "<th class='l'>failures</th><th>parked</th><th>infra</th>"
               "<th>wall s</th><th class='l'>why a sample failed</th></tr>")
    for r in s.rows:
        fails = ", ".join(f"{k.replace('_', '&nbsp;')}&nbsp;{v}" for k, v in r.categories.items())
        cls = "ok" if r.c else ("bad" if r.n else "dim")
        out.append(f"<tr><td class='l {cls}'>{e(r.task)}</td><td class='l'>{e(r.level)}</td><td>{r.n}</td>"
                   f"<td>{r.c}</td>" + "".join(f"<td>{_pct(r.pass_at.get(k))}</td>" for k in ks)
                   + f"<td class='l'>{fails}</td><td>{r.parked}</td><td>{r.infra}</td><td>{r.wall_s:.1f}</td>"
                   f"<td class='l why' title='{e(r.reason)}'>{e(_short(r.reason))}</td></tr>")
    out.append("</table></body></html>\n")
    target = Path(path)
    target.write_text("\n".join(out), encoding="utf-8")
    return target
