"""Parent side of the second opinion: pick the interpreter, prepare inputs, run the child, map and parse.

``compile_kernel(op_dir, kernel)`` compiles one kernel file of an operator directory with the real pypto in
SIM mode, once per distinct (shape, dtype) of the SPEC's cases, and returns a :class:`ToolchainResult`.
``run_scripts(paths)`` compiles standalone kernel scripts (each defines ``run()``) for differential testing,
restarting the child after every failure that poisons its process.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from runtime import pyast
from runtime.toolchain._launch import Limits, run_child
from runtime.toolchain._models import CompileError, CostFigures, ShapeResult, ToolchainResult
from runtime.toolchain._parse import cost_figures, frontend_location, plog_errors, strip_ansi, toolchain_code

__all__ = ["ENV_VAR", "ScriptOutcome", "ToolchainUsageError", "compile_kernel", "find_pypto_python", "run_scripts"]

log = logging.getLogger(__name__)

ENV_VAR = "PTO_FORGE_PYPTO_PYTHON"
"""Environment variable naming the interpreter of a venv with the real pypto (+ torch, sympy)."""

OFF_VAR = "PTO_FORGE_TOOLCHAIN"
"""``PTO_FORGE_TOOLCHAIN=off`` disables every implicit use (an explicit ``python=`` still works); the test
suite sets it outside tests/toolchain so that installing the extra does not slow every scripted run."""

_CHILD = Path(__file__).with_name("_child.py")
_REPO_ROOT = Path(__file__).resolve().parents[2]


class ToolchainUsageError(ValueError):
    """The caller pointed the toolchain at something that does not exist (one clear line)."""


def find_pypto_python(explicit: str | None = None) -> str | None:
    """The interpreter that has the real ``pypto``: ``explicit`` > ``$PTO_FORGE_PYPTO_PYTHON`` > this one.

    ``$PTO_FORGE_TOOLCHAIN=off`` turns the implicit choices off.

    The current interpreter counts only when ``pypto`` is importable here without the emulator installed
    (``importlib.util.find_spec`` does not import it). Returns None when none is configured: the second
    opinion is then *unavailable*, never an error.
    """
    if explicit is None and os.environ.get(OFF_VAR, "").lower() in ("off", "0", "no"):
        return None
    for candidate in (explicit, os.environ.get(ENV_VAR)):
        if candidate:
            path = shutil.which(candidate) or candidate
            if not (os.path.isfile(path) and os.access(path, os.X_OK)):
                raise ToolchainUsageError(f"pypto interpreter {candidate} is not an executable file")
            return path
    try:
        if _real_pypto_on_path() and importlib.util.find_spec("torch") is not None:
            return sys.executable
    except (ImportError, ValueError):
        return None
    return None


def _real_pypto_on_path() -> bool:
    """Is the vendor's ``pypto`` installed for this interpreter? Searched on ``sys.path`` itself: once the
    emulator has been loaded as ``pypto`` in this process (a gym script, a test), ``sys.modules`` and
    ``find_spec`` name the emulator and hid an installed toolchain (CI's toolchain tests skipped that way)."""
    for entry in sys.path:
        spec = importlib.machinery.PathFinder.find_spec("pypto", [entry or os.getcwd()])
        if spec is not None and spec.origin and not Path(spec.origin).resolve().is_relative_to(_REPO_ROOT / "runtime"):
            return True
    return False


# ---------------------------------------------------------------------------------------------- mapping

_OPCODE_CALLS: dict[str, tuple[str, ...]] = {
    "ADD": ("add", "+"), "ADDS": ("add", "+"), "SUB": ("sub", "-"), "SUBS": ("sub", "-"),
    "MUL": ("mul", "*"), "MULS": ("mul", "*"), "DIV": ("div", "/"), "DIVS": ("div", "/"),
    "EXP": ("exp",), "LOG": ("log",), "SQRT": ("sqrt",), "RSQRT": ("rsqrt",), "ABS": ("abs",),
    "MAX": ("maximum", "max"), "MIN": ("minimum", "min"), "CAST": ("cast",), "RECIPROCAL": ("reciprocal",),
    "MATMUL": ("matmul",), "A_MUL_B": ("matmul",), "REDUCE_SUM": ("sum",), "ROWSUM": ("sum",),
    "ROWMAX": ("amax", "max"), "ROWSUMLINE": ("sum",), "ROWMAXLINE": ("amax",), "VIEW": ("view",),
    "ASSEMBLE": ("assemble",), "RESHAPE": ("reshape",), "TRANSPOSE": ("transpose",), "SIGMOID": ("sigmoid",),
    "EXPAND": ("expand",), "CONCAT": ("concat",), "WHERE": ("where",), "PROD": ("prod",),
}
_OP_IN_MSG = re.compile(r"\b([A-Z][A-Z0-9_]+)\[\d+\]")
_TILE_MSG = re.compile(r"tile ?shape|TileShape|tileShape", re.I)


def _kernel_lines(source: str) -> list[tuple[int, str]]:
    return [(i, ln) for i, ln in enumerate(source.splitlines(), 1)]


def _infer_line(source: str, messages: list[str]) -> int | None:
    """Best kernel line for a pass failure whose plog names an op (``ADD[10004] ...``) or the tile shape."""
    lines = _kernel_lines(source)
    text = " ".join(messages)
    if _TILE_MSG.search(text):
        for i, ln in lines:
            if re.search(r"set_(vec|cube)_tile_shapes\s*\(", ln):
                return i
    for m in _OP_IN_MSG.finditer(text):
        for name in _OPCODE_CALLS.get(m.group(1), (m.group(1).lower(),)):
            rx = re.compile(rf"\bpypto\.{re.escape(name)}\s*\(" if name.isidentifier()
                            else rf"[\w\)\]]\s*{re.escape(name)}\s*[\w\(\-]")
            for i, ln in lines:
                code = ln.split("#", 1)[0]
                if rx.search(code) and "def " not in code:
                    return i
    for i, ln in lines:
        if "@pypto.frontend.jit" in ln or "@pypto.jit" in ln:
            return i + 1
    return None


def _map_error(entry: dict[str, Any], log_text: str, kernel_name: str, source: str) -> CompileError:
    err = entry.get("error") or {}
    message = strip_ansi(str(err.get("message", "")))
    text = strip_ansi(log_text) + "\n" + message
    code = toolchain_code(text)
    first = next((ln.strip() for ln in message.splitlines() if ln.strip() and not ln.startswith("lib")), "")
    plog = plog_errors(entry.get("plog", ""))
    loc = frontend_location(log_text, kernel_name)
    if code == "FFFFFF" or "Run pass failed" in message:
        line = _infer_line(source, plog)
        reason = next((m for m in plog if not m.startswith("Run pass")), first)
        return CompileError(stage="pass", code=code, type=str(err.get("type", "")), message=reason,
                            file=kernel_name, line=line, line_exact=False, detail=plog[:12])
    if re.search(r"simulat|CostModel", message, re.I):
        stage = "cost_model"
    elif entry.get("output_dirs") and not err.get("node_line"):
        stage = "compile"  # raised after tracing, while the graph was being compiled (no pass-manager failure)
    else:
        stage = "frontend"
    line, exact = None, True
    if loc is not None and loc[0] > 1:
        line = loc[0]
    elif err.get("tb_line"):
        line = int(err["tb_line"])
        if err.get("type") not in ("RenderedParserError", "ParserError") and stage == "frontend":
            stage = "wrapper" if _is_host_line(source, line) else stage
    elif isinstance(err.get("node_line"), int) and err["node_line"] > 1:
        line = int(err["node_line"])
    if line is None and plog:
        line, exact = _infer_line(source, plog), False
    detail = plog[:12] if plog else [ln for ln in message.splitlines()[1:8] if ln.strip()]
    return CompileError(stage=stage, code=code, type=str(err.get("type", "")), message=first[:500],
                        file=kernel_name, line=line, line_exact=exact, detail=detail)


def _is_host_line(source: str, line: int) -> bool:
    """True when ``line`` is outside every jit function (host code of the wrapper); True if unparsable."""
    try:
        tree = pyast.parse(source)
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in node.decorator_list):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                return False
    return True


# ---------------------------------------------------------------------------------------------- kernel


def _write_request(work: Path, request: dict[str, Any]) -> Path:
    path = work / "request.json"
    path.write_text(json.dumps(request))
    return path


def _read_result(work: Path) -> dict[str, Any] | None:
    try:
        return json.loads((work / "result.json").read_text())
    except (OSError, ValueError):
        return None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _shapes(op: Any, case: str | None) -> list[Any]:
    """One case per distinct (dims, dtype), in case order: the cost does not depend on seeds or bands."""
    seen: set[tuple[Any, ...]] = set()
    chosen = []
    for c in op.cases(case=case) if case else op.cases():
        key = (tuple(sorted(c.dims.items())), c.dtype)
        if key not in seen:
            seen.add(key)
            chosen.append(c)
    return chosen


def compile_kernel(
    op_dir: str | Path,
    kernel: str | Path,
    *,
    python: str | None = None,
    case: str | None = None,
    max_shapes: int | None = None,
    keep_dir: str | Path | None = None,
    limits: Limits | None = None,
) -> ToolchainResult:
    """Compile ``kernel`` (a stage file or ``<op>_impl.py`` of ``op_dir``) with the real pypto, SIM mode.

    The wrapper is called once per distinct (shape, dtype) of the SPEC cases (``case`` selects one,
    ``max_shapes`` keeps the first n), with the inputs the verifier would use; the first rejection stops.

    Args:
        python: interpreter with the real pypto (see :func:`find_pypto_python`).
        keep_dir: copy the cost-model output (stat report, Perfetto trace) and logs here.

    Raises:
        ToolchainUsageError: op_dir/kernel do not exist or the kernel is not a target of the op dir.
    """
    t0 = time.perf_counter()
    op_path = Path(op_dir)
    kpath = Path(kernel)
    if not kpath.is_file() and (op_path / kpath).is_file():
        kpath = op_path / kpath
    if not op_path.is_dir():
        raise ToolchainUsageError(f"operator directory {op_dir} does not exist")
    if not kpath.is_file():
        raise ToolchainUsageError(f"kernel {kernel} does not exist (give a path inside {op_dir})")
    from runtime.opdir import OpDirError, load_op_dir
    from runtime.verify._target import TargetError, plan_target

    try:
        op = load_op_dir(op_path)
    except OpDirError as exc:
        raise ToolchainUsageError(f"operator directory {op_dir} is invalid: {exc}") from None
    spec = op.spec
    try:
        plan = plan_target(op_path, kpath, spec.op_name, [t.name for t in spec.inputs],
                           [t.name for t in spec.outputs])
    except TargetError as exc:
        raise ToolchainUsageError(str(exc)) from None
    try:
        shapes = _shapes(op, case)
    except OpDirError as exc:
        raise ToolchainUsageError(str(exc)) from None
    if max_shapes is not None:
        shapes = shapes[:max_shapes]
    name = kpath.name
    result = ToolchainResult(kernel=name, status="unavailable")
    exe = find_pypto_python(python)
    if exe is None:
        result.reason = (f"no interpreter with the real pypto: pass --pypto-python or set {ENV_VAR} "
                         f"(pip install -e '.[toolchain]')")
        return result
    result.python = exe
    from runtime.arrays import save_arrays

    input_names = [t.name for t in spec.inputs]
    work = Path(tempfile.mkdtemp(prefix="pto-toolchain-"))
    try:
        shutil.copyfile(kpath, work / name)
        entries = []
        for i, c in enumerate(shapes):
            by_name = dict(zip(input_names, op.make_inputs(c), strict=False))
            missing = [p for p in plan.params if p not in by_name]
            if missing:
                result.status, result.reason = "error", f"wrapper parameter(s) {missing} are golden-fed STUBs; " \
                                                        f"compile the final file or a stage without stubs"
                return result
            save_arrays(work / f"in_{i:03d}.npz", {f"in_{j}": by_name[p] for j, p in enumerate(plan.params)})
            entries.append({"name": c.name, "inputs": f"in_{i:03d}.npz"})
        request = {"mode": "kernel", "repo_root": str(_REPO_ROOT), "candidate": name, "wrapper": plan.wrapper,
                   "cases": entries, "result": "result.json"}
        run = run_child(exe, _CHILD, _write_request(work, request), work, limits or Limits())
        result.layers = run.layers
        result.child_s = round(run.duration_s, 3)
        data = _read_result(work)
        source = kpath.read_text(encoding="utf-8", errors="replace")
        _fill(result, data, run, shapes, work, name, source)
        if keep_dir is not None:
            _keep(work, Path(keep_dir), data)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        result.duration_s = round(time.perf_counter() - t0, 3)
    return result


def _fill(result: ToolchainResult, data: dict[str, Any] | None, run: Any, shapes: list[Any], work: Path,
          name: str, source: str) -> None:
    if run.timed_out:
        result.status = "rejected"
        result.error = CompileError(stage="timeout", message=f"no answer within {run.duration_s:.0f} s")
        return
    if data is None:
        result.status = "error"
        result.reason = f"the toolchain process exited with code {run.returncode} without a result: " \
                        f"{run.stderr_tail.strip().splitlines()[-1:] or ''}"
        return
    result.pypto_version = data.get("pypto_version")
    result.import_s = data.get("import_s")
    if data.get("import_error"):
        result.status = "unavailable"
        result.reason = f"{result.python} cannot import the toolchain: {data['import_error']}"[:400]
        return
    if data.get("candidate_error"):
        err = data["candidate_error"]
        line = err.get("node_line") or err.get("tb_line")
        log_text = _read(work / err.get("log", ""))
        loc = frontend_location(log_text, name)
        result.status = "rejected"
        result.error = CompileError(stage="frontend", code=toolchain_code(log_text + str(err.get("message"))),
                                    type=str(err.get("type", "")),
                                    message=strip_ansi(str(err.get("message", ""))).strip().splitlines()[0][:500]
                                    if err.get("message") else "", file=name,
                                    line=loc[0] if loc else line if isinstance(line, int) else None)
        return
    calls = data.get("calls", [])
    compile_s = 0.0
    for i, c in enumerate(shapes):
        sr = ShapeResult(case=c.name, dims=dict(c.dims), dtype=c.dtype, status="not_run")
        result.shapes.append(sr)
        if i >= len(calls):
            continue
        entry = calls[i]
        sr.duration_s = float(entry.get("duration_s", 0.0))
        compile_s += sr.duration_s
        sr.kernel_calls = int(entry.get("kernel_calls", 0))
        log_text = _read(work / entry["log"])
        if entry.get("error"):
            sr.status = "rejected"
            sr.error = _map_error(entry, log_text, name, source)
            continue
        cost = cost_figures(entry.get("report", ""), log_text)
        if cost is None:
            sr.status = "rejected"
            sr.error = CompileError(stage="cost_model", message="the call returned but the cost model wrote no "
                                    "report" + ("" if sr.kernel_calls else " (the wrapper never called the kernel)"),
                                    file=name)
            continue
        sr.status, sr.cost = "accepted", cost
    result.compile_s = round(compile_s, 3)
    if run.returncode not in (0, None) and len(calls) < len(shapes):
        idx = len(calls)
        result.shapes[idx].status = "rejected"
        result.shapes[idx].error = CompileError(stage="crash", message=f"the toolchain process died (exit code "
                                                f"{run.returncode}) while compiling this shape", file=name)
    rejected = next((s for s in result.shapes if s.status == "rejected"), None)
    if rejected is not None:
        result.status, result.error = "rejected", rejected.error
    elif result.shapes and all(s.status == "accepted" for s in result.shapes):
        result.status = "accepted"
        result.cost = result.shapes[0].cost
    else:
        result.status, result.reason = "error", "not every shape produced a result"


def _keep(work: Path, dest: Path, data: dict[str, Any] | None) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for entry in (data or {}).get("calls", []):
        label = re.sub(r"[^\w.-]", "_", str(entry.get("label", entry.get("index"))))
        for rel in entry.get("output_dirs", []):
            src = work / rel / "CostModelSimulationOutput"
            for fname in ("_simulate.stat.report.txt", "_simulate.pefetto.trace.json", "bubble_analysis.log"):
                if (src / fname).is_file():
                    shutil.copyfile(src / fname, dest / f"{label}{fname}")
        if (work / entry.get("log", "-")).is_file():
            shutil.copyfile(work / entry["log"], dest / f"{label}.log")
        if entry.get("plog"):
            (dest / f"{label}.plog").write_text(entry["plog"])


# ---------------------------------------------------------------------------------------------- scripts


class ScriptOutcome(BaseModel):
    """Outcome of one standalone kernel script under the real toolchain."""

    script: str
    status: str  # "accepted" | "rejected"
    code: str | None = None
    kind: str = ""  # error class for grouping: toolchain code, else Python type, else stage
    message: str = ""
    stage: str | None = None
    line: int | None = None
    cost: CostFigures | None = None
    duration_s: float = 0.0


def run_scripts(paths: list[Path], *, python: str | None = None, limits: Limits | None = None) -> list[ScriptOutcome]:
    """Compile standalone kernel scripts (each defines ``run()``) in as few child processes as possible.

    A child is restarted after each failure that leaves the toolchain poisoned and after a native crash;
    every script gets an outcome.
    """
    exe = find_pypto_python(python)
    if exe is None:
        raise ToolchainUsageError(f"no interpreter with the real pypto (set {ENV_VAR} or pass --pypto-python)")
    outcomes: dict[int, ScriptOutcome] = {}
    start = 0
    while start < len(paths):
        work = Path(tempfile.mkdtemp(prefix="pto-toolchain-diff-"))
        try:
            names = []
            for i, p in enumerate(paths):
                target = work / f"k{i:04d}_{Path(p).name}"
                shutil.copyfile(p, target)
                names.append(target.name)
            request = {"mode": "scripts", "repo_root": str(_REPO_ROOT), "scripts": names, "start": start,
                       "result": "result.json", "discard_outputs": True}
            run = run_child(exe, _CHILD, _write_request(work, request), work, limits or Limits())
            data = _read_result(work) or {"calls": []}
            if data.get("import_error"):
                raise ToolchainUsageError(f"{exe} cannot import the toolchain: {data['import_error']}")
            last = start - 1
            for entry in data.get("calls", []):
                i = int(entry["index"])
                last = i
                src = Path(paths[i]).read_text(encoding="utf-8", errors="replace")
                log_text = _read(work / entry["log"])
                outcomes[i] = _script_outcome(Path(paths[i]).name, entry, log_text, names[i], src)
            nxt = data.get("resume_at")
            if nxt is None and last + 1 < len(paths):
                crashed = last + 1  # the child died inside this script
                outcomes[crashed] = ScriptOutcome(script=Path(paths[crashed]).name, status="rejected",
                                                  kind="crash", stage="crash",
                                                  message=f"process died (exit code {run.returncode})")
                nxt = crashed + 1
            start = len(paths) if nxt is None else int(nxt)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return [outcomes[i] for i in range(len(paths))]


def _script_outcome(script: str, entry: dict[str, Any], log_text: str, kernel_name: str,
                    source: str) -> ScriptOutcome:
    if not entry.get("error"):
        cost = cost_figures(entry.get("report", ""), log_text)
        return ScriptOutcome(script=script, status="accepted", cost=cost, duration_s=entry.get("duration_s", 0.0))
    err = _map_error(entry, log_text, kernel_name, source)
    etype = str((entry.get("error") or {}).get("type", ""))
    kind = err.code or _python_type(str((entry.get("error") or {}).get("message", ""))) or etype
    return ScriptOutcome(script=script, status="rejected", code=err.code, kind=kind, message=err.message,
                         stage=err.stage, line=err.line, duration_s=entry.get("duration_s", 0.0))


_PYERR = re.compile(r"\b([A-Z]\w*(?:Error|Exception))\b")


def _python_type(message: str) -> str | None:
    found = [t for t in _PYERR.findall(message) if t not in ("RenderedParserError", "ParserError")]
    return found[0] if found else None
