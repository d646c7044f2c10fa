"""Parsers for what the real pypto 0.2.0 toolchain writes: the cost-model report, its stdout summary, plogs.

Formats observed on pypto 0.2.0 (spec/pypto-api.md §0.3); each parser is tested on a recorded sample in
``tests/toolchain/data`` so that a format change shows up as a failing test, not as silent zeros.
"""

from __future__ import annotations

import re

from runtime.toolchain._models import CostFigures, PipeUsage

__all__ = ["cost_figures", "frontend_location", "plog_errors", "stdout_summary", "toolchain_code"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DOTS = re.compile(r"^\s*(?:\|--)?\s*(?P<key>[A-Za-z_ ][A-Za-z0-9_ ]*?)\.{3,}:\s*(?P<val>[-0-9.]+)(?:\s+(?P<pct>[-0-9.]+)%)?")
_PIPE_USED = re.compile(r"^Used (?P<pipe>\w+) Pipe Number$")
_PIPE_AVG = re.compile(r"^Average (?P<pipe>\w+) Usage$")
_E2E = re.compile(r"AICore End-to-End Time:\s*([-0-9.]+)")
_UTIL = re.compile(r"AICore Utilization:\s*([-0-9.]+)%")
_TASKS = re.compile(r"Total Task Count:\s*(\d+)")
_CODE = re.compile(r"\b(?:Errcode|ErrCode):\s*(F[0-9A-F]{5})!?")
_RENDERED = re.compile(r"^(?:ERROR|INTERNAL BUG)\s+(?P<file>[^\s:]+\.py):(?P<line>\d+):(?P<col>\d+):", re.M)
_PLOG_ERROR = re.compile(r"^\[ERROR\][^\[]*\[(?P<src>[^\]]+)\]\[(?P<mod>[^\]]+)\]:(?:\[[^\]]*\]:)?(?P<msg>.*)$")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)


def _num(text: str) -> float:
    return float(text)


def cost_figures(report: str, stdout: str = "") -> CostFigures | None:
    """Parse ``_simulate.stat.report.txt`` (and the stdout summary); None when the report has no cycle count.

    Only the first "Total Cycles" counts (the report repeats it in the core section with the same value).
    """
    top: dict[str, float] = {}
    pipes_used: dict[str, int] = {}
    pipes_avg: dict[str, tuple[float, float]] = {}
    for raw in report.splitlines():
        m = _DOTS.match(raw)
        if not m:
            continue
        key = m.group("key").strip()
        val = _num(m.group("val"))
        used = _PIPE_USED.match(key)
        avg = _PIPE_AVG.match(key)
        if used:
            pipes_used[used.group("pipe").lower()] = int(val)
        elif avg:
            pipes_avg[avg.group("pipe").lower()] = (val, _num(m.group("pct")) if m.group("pct") else 0.0)
        else:
            top.setdefault(key, val)
    if "Total Cycles" not in top:
        return None
    pipes = {name: PipeUsage(used=pipes_used.get(name, 0), average_cycles=avg, percent=pct)
             for name, (avg, pct) in pipes_avg.items()}
    summary = stdout_summary(stdout)
    return CostFigures(
        total_cycles=int(top["Total Cycles"]),
        e2e_time=summary.get("e2e_time"),
        utilization_percent=summary.get("utilization_percent"),
        task_count=int(summary["task_count"]) if "task_count" in summary else (
            int(top["Total Submit Tasks"]) if "Total Submit Tasks" in top else None),
        vector_tasks=int(top["Vector Tasks"]) if "Vector Tasks" in top else None,
        cube_tasks=int(top["Cube Tasks"]) if "Cube Tasks" in top else None,
        average_task_cycles=top.get("Average Task Cycles"),
        pipes=pipes,
    )


def stdout_summary(stdout: str) -> dict[str, float]:
    """The cost model's printed summary: AICore End-to-End Time, AICore Utilization, Total Task Count."""
    text = strip_ansi(stdout)
    out: dict[str, float] = {}
    for key, rx in (("e2e_time", _E2E), ("utilization_percent", _UTIL), ("task_count", _TASKS)):
        found = rx.findall(text)
        if found:
            out[key] = float(found[-1])
    return out


def toolchain_code(text: str) -> str | None:
    """The first toolchain error code (``F21004``, ``FC0000``, ``FFFFFF`` ...) in an error text."""
    m = _CODE.search(strip_ansi(text))
    return m.group(1) if m else None


def frontend_location(stdout: str, kernel_name: str) -> tuple[int, int] | None:
    """(line, col) of the rendered frontend diagnostic that names the kernel file, if any."""
    for m in _RENDERED.finditer(strip_ansi(stdout)):
        if m.group("file").rsplit("/", 1)[-1] == kernel_name:
            return int(m.group("line")), int(m.group("col"))
    return None


def plog_errors(text: str) -> list[str]:
    """The ``[ERROR]`` messages of a plog file, without the known noise (``F7A001 idx < size_``)."""
    out: list[str] = []
    for raw in text.splitlines():
        if "F7A001" in raw or "idx < size_" in raw:
            continue
        m = _PLOG_ERROR.match(raw.strip())
        if m:
            msg = m.group("msg").strip()
            if msg and msg not in out:
                out.append(msg)
    return out
