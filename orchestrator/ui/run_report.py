"""``python -m orchestrator report <op_dir>``: one self-contained HTML file that shows a run.

Everything is inline (CSS, and plots as base64 PNG made with matplotlib's Agg backend): no server, no CDN,
no script. Sections: summary, timeline (nodes from LangGraph's checkpoint history, gates and decisions from
the trace), per module the attempts with verdicts, code diffs between attempts, the debugger's diagnoses and
the bisect findings, per report the case statistics with plots (attempts vs max diff, a histogram of the
listed outliers' errors, a heat map of where they sit), and the model calls with tokens and cost.

For humans only: nothing here is read by an agent.
"""

from __future__ import annotations

import base64
import datetime as _dt
import difflib
import html
import io
import logging
import math
import time
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from orchestrator.errors import ForgeError, no_op_dir
from orchestrator.readonly import run_history, run_state
from orchestrator.store.artifacts import attempts_dir
from orchestrator.store.paths import run_dir
from orchestrator.store.reports import load_report
from orchestrator.store.results import run_status, trace_events
from orchestrator.store.runs import latest_run, read_meta
from orchestrator.ui.progress import calls_line
from orchestrator.ui.views import case_rows
from runtime.verdicts import Verdict

if TYPE_CHECKING:
    from runtime.verify import VerifyReport

log = logging.getLogger(__name__)

MAX_PLOTS = 24
"""Upper bound on embedded figures (each costs ~0.1 s and ~30 KB)."""


class ReportResult(BaseModel):
    path: str
    run_id: str
    seconds: float
    plots: int
    size_bytes: int



def budget_text(initial: int, values: dict) -> str:
    """The run's attempt budget as it is now: ``10``, or ``2 (raised: M1 7)`` after a blocked gate raised it."""
    raised = [f"M{m.get('id')} {m.get('budget')}" for m in values.get("modules", []) or []
              if m.get("budget") is not None and int(m["budget"]) != int(initial)]
    return f"{initial} (raised: {', '.join(raised)})" if raised else str(initial)

def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _num(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, int | float):
        return float(x)
    return {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}.get(str(x))


def _fmt(x: Any) -> str:
    v = _num(x)
    if v is None:
        return "-" if x is None else _e(x)
    if math.isinf(v) or math.isnan(v):
        return str(v)
    return f"{v:.4g}"


# --------------------------------------------------------------------------------------------- data

# -------------------------------------------------------------------------------------------- plots

class _Plots:
    """The report's plots; matplotlib is loaded at the first plot (a run with nothing to plot - stopped at the
    design gate, no failing case - was 0.6 s of CPU slower for an import it never used, UX audit s46)."""

    def __init__(self) -> None:
        self.count = 0
        self._plt = None
        self._loaded = False
        self.missing = ""

    def _load(self) -> None:
        self._loaded = True
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            self._plt = plt
        except ImportError as exc:  # the report still renders, with a note instead of pictures
            self.missing = f"plots need matplotlib ({exc}); install it with pip install matplotlib"

    def _img(self, fig, alt: str) -> str:
        buf = io.BytesIO()
        with warnings.catch_warnings():  # matplotlib's layout notes on stderr are not the user's business
            warnings.simplefilter("ignore")
            fig.savefig(buf, format="png", dpi=96, bbox_inches="tight")
        self._plt.close(fig)
        self.count += 1
        data = base64.b64encode(buf.getvalue()).decode("ascii")
        return f'<img class="plot" alt="{_e(alt)}" src="data:image/png;base64,{data}">'

    def available(self) -> bool:
        if not self._loaded and self.count < MAX_PLOTS:
            self._load()
        return self._plt is not None and self.count < MAX_PLOTS

    def attempts(self, series: dict[str, list[tuple[int, float | None, str]]]) -> str:
        """Attempts vs worst max diff per module (log scale; an exact match sits on the bottom line, marked 0;
        attempts without a comparison, e.g. a lint or runtime failure, are dotted verticals)."""
        if not series or not self.available():
            return ""
        if not any(d is not None and math.isfinite(d) for pts in series.values() for _, d, _ in pts):
            # UX audit s48: attempts that compared nothing (lint, runtime failures) made an empty plot, and
            # matplotlib's warnings about it ("No artists with labels", "identical low and high ylims") on stderr
            return ""
        plt = self._plt
        positive = [d for pts in series.values() for _, d, _ in pts if d is not None and math.isfinite(d) and d > 0]
        floor = min(positive) / 10 if positive else 1e-9
        fig, ax = plt.subplots(figsize=(7, 3.2))
        for name, pts in series.items():
            shown = [(a, max(d, floor), v) for a, d, v in pts if d is not None and math.isfinite(d)]
            if shown:
                line, = ax.plot([a for a, _, _ in shown], [d for _, d, _ in shown], marker="o", label=name)
                for a, d, v in shown:
                    ax.plot([a], [d], marker="o", color="#1e7e34" if v == Verdict.PASS else "#b02a37", zorder=3)
            for a, d, _ in pts:
                if d is None or not math.isfinite(d):
                    ax.axvline(a, color="grey", alpha=0.4, linestyle=":")
        ax.set_yscale("log")
        ax.axhline(floor, color="#1e7e34", alpha=0.3)
        ax.annotate("0 (exact)", (0.01, floor), xycoords=("axes fraction", "data"), fontsize=7, color="#1e7e34",
                    va="bottom")
        ax.set_xlabel("attempt")
        ax.set_ylabel("max |diff| (worst case)")
        ax.set_title("attempts vs max diff (green: PASS, red: failing; dotted: no comparison)", fontsize=9)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        return self._img(fig, "attempts vs max diff")

    def histogram(self, diffs: list[float], atol: float | None, title: str) -> str:
        if not diffs or not self.available():
            return ""
        plt = self._plt
        fig, ax = plt.subplots(figsize=(5, 2.8))
        finite = [d for d in diffs if math.isfinite(d) and d > 0]
        if finite:
            lo, hi = min(finite), max(finite)
            bins = [lo * (hi / lo) ** (i / 20) for i in range(21)] if hi > lo else 10
            ax.hist(finite, bins=bins, color="#c0392b", alpha=0.8)
            if hi > lo:
                ax.set_xscale("log")
        if atol:
            ax.axvline(atol, color="black", linestyle="--", label=f"atol {atol:g}")
            ax.legend(fontsize=8)
        ax.set_xlabel("|actual - expected| of the listed outliers")
        ax.set_ylabel("elements")
        ax.set_title(title, fontsize=9)
        return self._img(fig, title)

    def heatmap(self, shape: list[int], indices: list[list[int]], title: str) -> str:
        """Where the listed out-of-tolerance elements sit (last two axes, earlier axes folded)."""
        if not indices or not shape or not self.available():
            return ""
        import numpy as np

        plt = self._plt
        rows = shape[-2] if len(shape) >= 2 else 1
        cols = shape[-1]
        rb, cb = max(1, math.ceil(rows / 64)), max(1, math.ceil(cols / 64))
        grid = np.zeros((math.ceil(rows / rb), math.ceil(cols / cb)))
        for idx in indices:
            r = idx[-2] if len(idx) >= 2 else 0
            c = idx[-1] if idx else 0
            if 0 <= r < rows and 0 <= c < cols:
                grid[r // rb, c // cb] += 1
        fig, ax = plt.subplots(figsize=(5, 3))
        im = ax.imshow(grid, aspect="auto", cmap="Reds", interpolation="nearest",
                       extent=(0, cols, rows, 0))
        fig.colorbar(im, ax=ax, label="listed outliers")
        ax.set_xlabel(f"axis -1 (size {cols})")
        ax.set_ylabel(f"axis -2 (size {rows})" if len(shape) >= 2 else "")
        ax.set_title(title, fontsize=9)
        return self._img(fig, title)


# ----------------------------------------------------------------------------------------- sections

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1200px;color:#222;
background:#fff;line-height:1.4}
h1{font-size:1.6em;margin-bottom:4px}h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:32px}
h3{margin-top:20px}table{border-collapse:collapse;margin:8px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.PASS{color:#1e7e34;font-weight:600}.FAIL_NUMERIC,.FAIL_LINT,.FAIL_RUNTIME,.FAIL_CHEAT,.ERROR{color:#b02a37;
font-weight:600}.cards{display:flex;flex-wrap:wrap;gap:12px;margin:12px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:120px;background:#fafafa}
.card b{display:block;font-size:1.3em}pre{background:#f7f7f7;border:1px solid #e3e3e3;padding:8px;
overflow-x:auto;font-size:12px}pre.diff span.a{background:#e6ffec;display:block}
pre.diff span.d{background:#ffebe9;display:block}pre.diff span.h{color:#6f42c1;display:block}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}.plot{max-width:100%;margin:6px 8px 6px 0;
border:1px solid #eee}.note{color:#666;font-size:12px}.toc a{margin-right:14px}
"""


def _diff_html(old: str, new: str, a: str, b: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), a, b, lineterm="", n=3))
    if not lines:
        return '<p class="note">no change</p>'
    out = []
    for ln in lines:
        cls = "h" if ln.startswith("@@") else "a" if ln.startswith("+") else "d" if ln.startswith("-") else ""
        out.append(f'<span class="{cls}">{_e(ln)}</span>' if cls else _e(ln))
    return '<pre class="diff">' + "\n".join(out) + "</pre>"


def _table(headers: list[str], rows: list[list[str]], numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for r in rows:
        cells = "".join(f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _verdict(v: Any) -> str:
    return f'<span class="{_e(v)}">{_e(v)}</span>' if v else "-"


def _worst(report: VerifyReport | None) -> float | None:
    diffs = [r.max_diff for r in case_rows(report) if r.max_diff is not None]
    return max(diffs) if diffs else None


def build_report(op_dir: Path | str, *, run_id: str | None = None, out: Path | str | None = None) -> ReportResult:
    """Write the HTML run report; returns where it went and how long it took.

    Raises:
        ForgeError: no such op dir or no run in it.
    """
    t0 = time.perf_counter()
    root = Path(op_dir).resolve()
    if not root.is_dir():
        raise ForgeError(no_op_dir(op_dir))
    rid = run_id or latest_run(root, shown_as=str(op_dir))  # the hint names the op dir as typed (UX s49)
    if not run_dir(root, rid).is_dir():
        raise ForgeError(f"no run {rid} in {root / '.forge'}")
    meta = read_meta(root, rid)
    values, nxt, interrupts = run_state(root, rid)  # copies of the checkpoints while they are current: no LangGraph
    events = trace_events(root, rid)
    history = run_history(root, rid)
    plots = _Plots()
    st = run_status(root, rid, values, nxt, interrupts)
    parts: list[str] = []
    op = values.get("op_name") or root.name

    # -- summary
    llm = [e for e in events if e.get("kind") == "llm_call"]
    tokens_in = sum(int((e.get("usage") or {}).get("prompt_tokens", 0) or 0) for e in llm)
    tokens_out = sum(int((e.get("usage") or {}).get("completion_tokens", 0) or 0) for e in llm)
    costs = [float(e["cost_usd"]) for e in llm if e.get("cost_usd") is not None]
    attempts_total = sum(int(m.get("attempts", 0)) for m in values.get("modules", []))
    cards = [("status", st.status), ("modules", len(values.get("modules", []))), ("attempts", attempts_total),
             ("final verdict", (values.get("final") or {}).get("verdict") or "-"), ("model calls", len(llm)),
             ("tokens in / out", f"{tokens_in:,} / {tokens_out:,}"),
             ("model cost", f"${sum(costs):.4f}" if costs else "n/a")]
    parts.append(f"<h1>PTO Forge run report: {_e(op)}</h1>")
    parts.append(f'<p class="note">run {_e(rid)} · op dir {_e(root)} · agents {_e(meta.agents)} · approval '
                 f"{_e(meta.approve)} · budget {_e(budget_text(meta.budget, values))} · created {_e(meta.created)} · report written "
                 f"{_e(_dt.datetime.now(_dt.UTC).isoformat(timespec='seconds'))}</p>")
    parts.append('<div class="cards">' + "".join(f'<div class="card">{_e(k)}<b>{_e(v)}</b></div>' for k, v in cards)
                 + "</div>")
    parts.append(f'<p class="note">dispatches per role (model calls): {_e(calls_line(st))}</p>')
    if st.cause:
        parts.append(f'<p><b>cause:</b> {_e(st.cause)}</p>')
    if st.message:
        parts.append(f'<p class="note">{_e(st.message)}</p>')
    parts.append('<p class="toc"><a href="#timeline">timeline</a><a href="#gates">gates</a>'
                 '<a href="#modules">modules</a><a href="#final">final</a><a href="#calls">model calls</a></p>')

    # -- timeline
    rows = []
    start = history[0]["when"] if history else None
    for i, h in enumerate(history, 1):
        try:
            rel = (_dt.datetime.fromisoformat(h["when"]) - _dt.datetime.fromisoformat(start)).total_seconds()
            when = f"+{rel:.1f} s"
        except (TypeError, ValueError):
            when = _e(h["when"])
        rows.append([str(i), when, _e(h["node"]), f"M{h['module']}" if h["module"] else "-",
                     _e(h["attempt"] if h["attempt"] is not None else "-"), _verdict(h["verdict"])])
    parts.append('<h2 id="timeline">Timeline</h2><p class="note">every node that completed, from the run\'s '
                 "LangGraph checkpoints (times are since the first node)</p>")
    parts.append(_table(["#", "time", "node", "module", "attempt", "verdict"], rows, {0}) if rows
                 else '<p class="note">no checkpoints</p>')

    # -- gates and decisions
    grows = []
    for e in events:
        if e.get("kind") == "interrupt":
            grows.append([_e(e.get("seq")), "opened", _e(e.get("gate")), f"M{e['module']}" if e.get("module") else "-",
                          _e((e.get("payload") or {}).get("title", "")), "", ""])
        elif e.get("kind") == "resume":
            grows.append([_e(e.get("seq")), "decided", _e(e.get("gate")),
                          f"M{e['module']}" if e.get("module") else "-", "", f"<b>{_e(e.get('decision'))}</b>",
                          _e(f"{e.get('source', '')}: {e.get('note') or ''}".strip(": "))])
        elif e.get("kind") == "error" and e.get("cause"):
            grows.append([_e(e.get("seq")), "stopped", "-", "-", _e(e.get("message")), "", _e(e.get("cause"))])
    parts.append('<h2 id="gates">Gates and decisions</h2>')
    parts.append(_table(["trace seq", "event", "gate", "module", "title", "decision", "source / note"], grows)
                 if grows else '<p class="note">no gate was opened or decided</p>')

    # -- modules
    parts.append('<h2 id="modules">Modules</h2>')
    log_rows = values.get("verify_log", [])
    series: dict[str, list[tuple[int, float | None, str]]] = {}
    module_html = []
    for m in values.get("modules", []):
        k = m["id"]
        mine = [r for r in log_rows if r.get("module") == f"M{k}"]
        arows, pts = [], []
        for n, r in enumerate(mine, 1):
            rep = load_report(root, rid, r.get("report_hash"))
            worst = _worst(rep)
            ratios = [c.oot_ratio for c in case_rows(rep) if c.oot_ratio is not None]
            pts.append((n, worst, str(r.get("verdict"))))
            arows.append([str(n), _e(r.get("when")), _e(r.get("file")), _verdict(r.get("verdict")), _fmt(worst),
                          _fmt(max(ratios) if ratios else None), _e(str(r.get("report_hash") or "-")[:16]),
                          _e(rep.reasons[0] if rep is not None and rep.reasons else "")])
        series[f"M{k} {m.get('name', '')}"] = pts
        sec = [f"<h3>M{k}: {_e(m.get('name', ''))} <small>({_e(m.get('status'))}, {m.get('attempts')}/"
               f"{m.get('budget')} attempts, {_e(m.get('stage_file'))})</small></h3>"]
        tried = [r for r in values.get("attempt_log", []) if r.get("module") == k]
        if tried:
            sec.append("<h4>attempts</h4>" + _table(
                ["attempt", "outcome", "model calls", "error"],
                [[_e(r.get("attempt")), _verdict(r.get("verdict")), _e(r.get("model_calls") or 0),
                  _e(r.get("reason") or "")] for r in tried], {0, 2}))
        sec.append(_table(["#", "when", "file", "verdict", "max diff", "out-of-tol", "report", "first reason"],
                          arows, {0, 4, 5}) if arows else '<p class="note">not verified yet</p>')
        kept = sorted((attempts_dir(root, rid) / f"M{k}").glob("attempt*.py"))
        for prev, cur in zip(kept, kept[1:]):
            sec.append(f"<details><summary>code diff: {_e(prev.name)} → {_e(cur.name)}</summary>"
                       + _diff_html(prev.read_text(encoding="utf-8"), cur.read_text(encoding="utf-8"), prev.name,
                                    cur.name) + "</details>")
        if kept:
            sec.append(f"<details><summary>code of the last attempt ({_e(kept[-1].name)})</summary><pre>"
                       + _e(kept[-1].read_text(encoding="utf-8")) + "</pre></details>")
        diag = [d for d in values.get("dev_log", []) if d.get("node") == "debug" and d.get("action") == f"debug M{k}"]
        if diag:
            sec.append("<h4>debugger's diagnoses</h4><ol>" + "".join(f"<li>{_e(d.get('result'))}</li>" for d in diag)
                       + "</ol>")
        for b in sorted((attempts_dir(root, rid) / f"M{k}").glob("attempt*-bisect.json")):
            sec.append(f"<details><summary>bisect findings given to the debugger ({_e(b.name)})</summary><pre>"
                       + _e(b.read_text(encoding="utf-8")[:20000]) + "</pre></details>")
        for n, r in enumerate(mine, 1):
            rep = load_report(root, rid, r.get("report_hash"))
            if rep is not None:
                sec.append(_cases_html(rep, f"M{k} attempt {n}", plots,
                                       open_=n == len(mine) or rep.verdict == Verdict.FAIL_NUMERIC))
        module_html.append("".join(sec))
    if any(series.values()):
        img = plots.attempts(series)
        if img:
            parts.append(img)
    parts.extend(module_html)
    if not values.get("modules"):  # UX audit s48: an empty section under its heading (the terminal says this)
        parts.append('<p class="note">no modules yet: no design has passed its check</p>')
    if plots.missing:
        parts.append(f'<p class="note">{_e(plots.missing)}</p>')

    # -- final
    f = values.get("final") or {}
    parts.append('<h2 id="final">Final kernel</h2>')
    if f:
        rep = load_report(root, rid, f.get("report_hash"))
        kernel = root / f"{op}_impl.py"
        size = f"{len(kernel.read_text(encoding='utf-8').splitlines())} lines" if kernel.is_file() else "not on disk"
        parts.append(_table(["file", "verdict", "report", "size"], [[_e(f.get("file") or kernel.name),
                                                                    _verdict(f.get("verdict")),
                                                                    _e(str(f.get("report_hash"))[:16]), _e(size)]]))
        if rep:
            counters = {k: v for k, v in rep.counters.items()
                        if isinstance(v, int | float) and not isinstance(v, bool)}
            if counters:
                parts.append("<h4>cost counters (emulator, all cases)</h4>" + _table(
                    ["counter", "value"], [[_e(k), f"{v:,}" if isinstance(v, int) else f"{v:.4g}"]
                                           for k, v in sorted(counters.items())], {1}))
            parts.append(_cases_html(rep, "final", plots, open_=True))
    else:
        parts.append('<p class="note">no final verification in this run</p>')

    # -- model calls
    parts.append('<h2 id="calls">Model calls</h2>')
    crow = []
    rejected = {e.get("rejected_call"): str(e.get("message") or "") for e in events
                if e.get("kind") == "error" and e.get("rejected_call")}
    for e in llm:
        u = e.get("usage") or {}
        crow.append([_e(e.get("seq")), _e(e.get("agent")), f"M{e['module']}" if e.get("module") else "-",
                     _e(e.get("attempt") or "-"), _e(e.get("model")), f"{int(u.get('prompt_tokens', 0) or 0):,}",
                     f"{int(u.get('completion_tokens', 0) or 0):,}",
                     f"${float(e['cost_usd']):.4f}" if e.get("cost_usd") is not None else "-",
                     f"{float(e.get('latency_s') or 0):.1f} s", _e(e.get("cache")),
                     _e(e.get("error") or rejected.get(e.get("seq")) or "")])
    if crow:
        crow.append(["", "<b>total</b>", "", "", "", f"<b>{tokens_in:,}</b>", f"<b>{tokens_out:,}</b>",
                     f"<b>${sum(costs):.4f}</b>" if costs else "-", "", "", ""])
    parts.append(_table(["seq", "agent", "module", "attempt", "model", "prompt tokens", "completion tokens", "cost",
                         "latency", "cache", "error"], crow, {0, 5, 6, 7, 8}) if crow
                 else '<p class="note">no model calls (scripted agents)</p>')
    tools = [e for e in events if e.get("kind") == "tool_call"]
    if tools:
        parts.append(f'<p class="note">{len(tools)} tool call(s) by the agents: '
                     + ", ".join(f"{_e(k)} ×{v}" for k, v in sorted(_count(t.get("tool") for t in tools).items()))
                     + "</p>")

    doc = ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>PTO Forge run "
           f"{_e(rid)}: {_e(op)}</title><style>{CSS}</style></head><body>" + "\n".join(parts) + "</body></html>\n")
    dest = Path(out) if out else run_dir(root, rid) / "report.html"
    if out and dest.is_dir():  # `--out reports/` as `cp` takes a folder (UX audit s46: "Is a directory")
        dest = dest / f"{op}-run-{rid}.html"
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(doc, encoding="utf-8")
    except OSError as exc:  # UX audit s45: a read-only op dir (a mounted result) ended in an OSError traceback
        where = "" if out else " (give another file with --out FILE)"
        raise ForgeError(f"cannot write the report to {dest}: {exc.strerror or exc}{where}") from None
    return ReportResult(path=str(dest), run_id=rid, seconds=round(time.perf_counter() - t0, 3), plots=plots.count,
                        size_bytes=len(doc.encode()))


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[str(i)] = out.get(str(i), 0) + 1
    return out


def _cases_html(rep: VerifyReport, label: str, plots: _Plots, *, open_: bool) -> str:
    """Per-case comparison statistics of one report, plus its plots when it has out-of-tolerance elements."""
    rows = []
    diffs: list[float] = []
    shape: list[int] = []
    indices: list[list[int]] = []
    atol = None
    for c in rep.cases:
        case_error = c.error.message if c.error is not None else ""
        if not c.leaves:  # the case produced no output to compare (a runtime failure, not run)
            rows.append([_e(c.name), "-", _e(c.status), "-", "-", "-", "-", "-/-", "-", "-", _e(case_error)[:300]])
        for leaf in c.leaves:
            rows.append([_e(c.name), _e(leaf.path), _e(c.status), _fmt(leaf.max_diff), _fmt(leaf.mean_diff),
                         _fmt(leaf.std_diff), _fmt(leaf.max_rel_diff),
                         f"{leaf.out_of_tolerance_count}/{leaf.total_elements}", _fmt(leaf.out_of_tolerance_ratio),
                         _e(leaf.nan_count), _e(leaf.error or case_error)[:300]])
            for o in leaf.outliers:
                diffs.append(o.abs_diff)
                if not shape or list(leaf.expected_shape) == shape:
                    shape = list(leaf.expected_shape)
                    indices.append(list(o.index))
            atol = atol or c.atol
    table = _table(["case", "leaf", "status", "max diff", "mean diff", "std diff", "max rel diff", "out of tol",
                    "ratio", "NaN", "error"], rows, {3, 4, 5, 6, 8})
    imgs = ""
    if diffs:
        imgs += plots.histogram(diffs, atol, f"{label}: errors of the listed outliers")
        imgs += plots.heatmap(shape, indices, f"{label}: where the listed outliers sit")
    reasons = rep.reasons
    why = ("<ul>" + "".join(f"<li>{_e(r)}</li>" for r in reasons[:10]) + "</ul>") if reasons else ""
    return (f"<details{' open' if open_ else ''}><summary>{_e(label)}: {_verdict(rep.verdict)} · "
            f"{sum(1 for c in rep.cases if c.status == 'pass')}/{len(rep.cases)} cases pass"
            f" · report {_e(rep.report_hash[:16])}</summary>{why}{table}"
            + (f"<div>{imgs}</div>" if imgs else "") + "</details>")


def report_path_for(op_dir: Path, run_id: str) -> Path:
    return run_dir(op_dir, run_id) / "report.html"


__all__ = ["ReportResult", "build_report", "report_path_for"]
