"""``python -m orchestrator campaign run|report``: many operators x k samples on Ray; pass@k and cost out.

``run SUITE --samples k --out DIR`` runs (or continues) a campaign with a live progress line; ``report DIR``
prints its figures and writes ``DIR/report.html``. See docs/campaign.md.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from orchestrator.adapters.script_check import script_problem
from orchestrator.cli._common import bad_base_url, bad_endpoint, console, fail
from orchestrator.command import cli_command, shell_path


def register(sub) -> None:
    p = sub.add_parser("campaign", help="run a suite of operators k times each (Ray) and report pass@k and cost",
                       description="Many operators at once: every (task, sample) is one pipeline run in its own op "
                                   "dir copy, run as Ray tasks; results are recorded as they finish.")
    csub = p.add_subparsers(dest="campaign_command", metavar="ACTION")
    csub.required = True
    r = csub.add_parser("run", help="run or continue a campaign (re-running the same command continues it)")
    r.add_argument("suite", help="a folder of op dirs and/or KernelBench task files, or a suite .yaml")
    r.add_argument("--out", required=True, help="campaign directory (results.jsonl, runs/, tasks/, report.html)")
    r.add_argument("--samples", "-k", type=int, default=1, help="samples per task (default 1)")
    r.add_argument("--agents", default=None,
                   help="scripted:<script.yaml> for every task (default: the configured model, else each op "
                        "dir's shipped trace)")
    r.add_argument("--model", default=None, help="model for every role (default: FORGE_MODEL or forge.toml)")
    r.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    r.add_argument("--workers", type=int, default=None,
                   help="samples running at once (default: the CPU count, at most 4); on an embedded Ray also "
                        "its CPU count")
    r.add_argument("--address", default=None,
                   help="Ray cluster address (ray://host:10001 or host:6379); default: an embedded Ray")
    r.add_argument("--sequential", action="store_true",
                   help="no Ray: run the samples one after another in this process")
    r.add_argument("--gates", choices=["auto", "stop"], default="auto",
                   help="auto: approve every gate; stop: park runs at their gates (listed by `campaign report`; "
                        "approve them, then re-run) (default auto)")
    r.add_argument("--budget", type=int, default=10, help="attempts per module (default 10)")
    r.add_argument("--module-gate", action="store_true", help="also stop at the gate after each module")
    r.add_argument("--perf", action="store_true", help="performance stage after the final gate (cost-model cycles)")
    r.add_argument("--retries", type=int, default=2,
                   help="infrastructure failures retried per sample before it counts as failed (default 2)")
    r.set_defaults(func=_run)
    rep = csub.add_parser("report", help="print a campaign's figures and write DIR/report.html")
    rep.add_argument("dir", help="campaign directory")
    rep.add_argument("--html", default=None, help="where to write the page (default DIR/report.html)")
    rep.add_argument("--json", action="store_true", help="print the summary as JSON instead of tables")
    rep.set_defaults(func=_report)


class _Stop(KeyboardInterrupt):
    """SIGTERM / SIGHUP: stop like Ctrl-C."""


def _on_signal(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise _Stop(signum)


def _fmt_eta(seconds: float | None) -> str:
    if seconds is None:
        return "ETA ?"
    s = int(round(seconds))
    return f"ETA {s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"ETA {s // 60}m{s % 60:02d}s"


def _run(args: argparse.Namespace) -> int:
    from rich.live import Live

    from orchestrator.adapters.campaign import (
        CampaignConfig,
        CampaignProgress,
        CampaignStopped,
        LocalExecutor,
        RayExecutor,
        run_campaign,
        summarize,
        write_html,
    )
    from orchestrator.errors import ForgeError

    if args.samples < 1:
        return fail("--samples must be at least 1", 2)
    if args.budget < 1:
        return fail("--budget must be at least 1", 2)
    if args.retries < 0:
        return fail("--retries must be 0 or more", 2)
    workers = args.workers if args.workers is not None else max(1, min(os.cpu_count() or 1, 4))
    if workers < 1:
        return fail("--workers must be at least 1", 2)
    if args.sequential and args.address:
        return fail("--sequential runs without Ray; it cannot take --address", 2)
    if args.base_url is not None and (problem := bad_base_url(args.base_url)):
        return fail(problem, 2)
    if not args.agents and (problem := bad_endpoint(None)):  # OPENAI_BASE_URL, checked like --base-url
        return fail(problem, 2)
    if args.agents and (problem := script_problem(args.agents)):
        return fail(problem, 2)
    agents = args.agents
    if agents and agents.startswith("scripted:"):
        agents = "scripted:" + str(Path(agents[len("scripted:"):]).resolve())
        if not Path(agents[len("scripted:"):]).is_file():  # else every sample failed `no_agent`, one by one
            return fail(f"agent script not found: {args.agents[len('scripted:'):]}")
    config = CampaignConfig(suite=str(Path(args.suite).resolve()), samples=args.samples, agents=agents,
                            model=args.model, base_url=args.base_url, gates=args.gates, budget=args.budget,
                            module_gate=args.module_gate, perf=args.perf, retries=args.retries)
    out = Path(args.out)

    def factory():
        if args.sequential:
            return LocalExecutor()
        return RayExecutor(workers=workers, address=args.address, record=out.resolve() / "driver.json")

    def line(p: CampaignProgress) -> str:
        return (f"[bold]campaign[/] {p.done}/{p.total} done ([green]{p.solved} solved[/], [red]{p.failed} failed[/]) "
                f"· {p.running} running · {p.parked} parked · {p.infra} infra retries · {_fmt_eta(p.eta_s)}"
                + (f" · [dim]{escape(p.last)}[/]" if p.last else ""))

    saved = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            saved[sig] = signal.signal(sig, _on_signal)
        except (ValueError, OSError):
            pass
    live = Live("", console=console, refresh_per_second=4, transient=True) if console.is_terminal else None
    last_printed = [""]

    def progress(p: CampaignProgress) -> None:
        text = line(p)
        if live is not None:
            live.update(text)
        elif p.last and p.last != last_printed[0]:
            last_printed[0] = p.last
            console.print(text, soft_wrap=True)

    try:
        if live is not None:
            live.start()
        run_campaign(args.suite, out, config, factory, workers=workers, progress=progress)
    except ForgeError as exc:
        if live is not None:  # the live line first: the error printed under it ran into it (UX audit s40)
            live.stop()
        return fail(exc.message, exc.code)
    except (CampaignStopped, KeyboardInterrupt) as exc:
        if live is not None:
            live.stop()
        code = 128 + int(exc.args[0]) if isinstance(exc, _Stop) else 130
        return fail(f"campaign stopped; finished samples are recorded in {out}/results.jsonl: re-run the same "
                    "command to continue", code)
    finally:
        if live is not None:
            live.stop()
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    summary = summarize(out)
    _print_summary(summary)
    page = write_html(summary, out / "report.html")
    console.print(f"report: {escape(str(page))}  (again with `{cli_command()} campaign report {escape(str(out))}`)", soft_wrap=True)
    if summary.finished and summary.categories.get("no_agent") == summary.finished:
        console.print(f"[yellow]no sample could run[/]: {escape(_first_message(out, 'no_agent'))}; give the agents "
                      f"(`--model M`, FORGE_MODEL or forge.toml, or `--agents scripted:<file>`) and a new --out "
                      f"({escape(str(out))} keeps the options it was started with)", soft_wrap=True)
        return 1  # nothing was measured: a script checking the exit status must not take it for a campaign result
    return 0


def _first_message(out: Path, category: str) -> str:
    """The message of the first sample that failed with ``category`` (what to fix, in the sample's words).

    Why: a campaign started with no model configured ended with ``failures: no agent 1`` and exit 0; the reason
    was only in results.jsonl, and re-running the command into the same --out cannot change its agents (UX audit
    s44)."""
    try:
        for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("category") == category and row.get("message"):
                return str(row["message"])
    except (OSError, ValueError, AttributeError):
        pass
    return "no model configured and no shipped trace"


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:.1f}%"


def _print_summary(s) -> None:
    table = Table(title=f"campaign {s.directory}: {s.finished}/{s.samples_planned} samples finished, "
                        f"{s.solved} solved", title_justify="left")
    table.add_column("level")
    for col in ("tasks", "samples", "solved samples", "solved tasks"):
        table.add_column(col, justify="right")
    for k in s.ks:
        table.add_column(f"pass@{k}", justify="right")
    for lv in [*s.levels, s.overall]:
        table.add_row(lv.level, str(lv.tasks), str(lv.samples), str(lv.solved_samples), str(lv.solved_tasks),
                      *(f"{_pct(lv.pass_at.get(k))} ({lv.tasks_counted.get(k, 0)})" for k in s.ks))
    console.print(table)
    cats = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in s.categories.items() if v) or "none"
    console.print(f"failures: {cats}; infrastructure failures retried: {s.infra_retries}")

    def num(v: float | None, fmt: str = "{:.1f}") -> str:
        return "n/a" if v is None else fmt.format(v)

    console.print(f"per solved sample: {num(s.attempts_per_solved)} attempts, {num(s.calls_per_solved)} model calls; "
                  f"per solved task: {num(s.tokens_per_solved_task, '{:.0f}')} tokens, "
                  f"${num(s.cost_per_solved_task, '{:.4f}')}; wall {s.wall_s:.1f} worker-s")
    if s.cycles:
        console.print("cost-model cycles (first verified -> delivered): " + "; ".join(
            f"{c.task} s{c.sample} {c.first:.0f} -> {c.final:.0f}" for c in s.cycles))
    elif s.cycles_note:
        console.print(f"[dim]{escape(s.cycles_note)}[/]")
    for p in s.parked:
        console.print(f"[yellow]parked[/] {escape(p.task)} s{p.sample} at gate {escape(p.gate or '?')}: "
                      f"{cli_command()} approve {escape(shell_path(str(Path(s.directory) / (p.op_dir or ''))))}", soft_wrap=True)


def _report(args: argparse.Namespace) -> int:
    from orchestrator.adapters.campaign import summarize, write_html
    from orchestrator.errors import ForgeError

    try:
        summary = summarize(args.dir)
    except ForgeError as exc:
        return fail(exc.message, exc.code, json_out=args.json)
    if args.json:
        console.print_json(summary.model_dump_json())
        return 0
    _print_summary(summary)
    page = write_html(summary, args.html or Path(args.dir) / "report.html")
    console.print(f"report: {escape(str(page))}")
    return 0
