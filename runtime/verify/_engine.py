"""``verify(op_dir, target)``: the seven steps of spec/verification.md, in order.

1 hashes -> 2 lint + frozen modules (S0/S1 -> FAIL_LINT, nothing runs) -> 3 cases from SPEC.md ->
4 golden in its own process (boundary tensors from its captured intermediates) -> 5 candidate in the
sandbox -> 6 compare every leaf + anti-gaming -> 7 verdict and report.

Verdict precedence (first that applies): ERROR (infrastructure, or a required sandbox layer missing) >
FAIL_LINT > FAIL_CHEAT > FAIL_RUNTIME > FAIL_NUMERIC > ERROR (lint not available: never PASS) > PASS.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runtime.compare import LeafResult, compare_outputs
from runtime.sandbox import CandidateRun, RunOutput, SandboxError, SandboxPolicy, run_candidate
from runtime.verify._report import CaseReport, ErrorInfo, LintSection, SandboxSection, VerifyReport
from runtime.verify._target import TargetError, TargetPlan, frozen_violations, plan_target

__all__ = ["VerifySettings", "VerifyUsageError", "verify"]

log = logging.getLogger(__name__)

_RUNTIME_DIR = Path(__file__).resolve().parents[1]
_VERIFIER_SOURCES = ("verify", "sandbox", "compare.py", "dtypes.py")


class VerifyUsageError(ValueError):
    """The caller pointed verify at something that does not exist or cannot be a target (exit code 2)."""


@dataclass(frozen=True)
class VerifySettings:
    """Knobs of one verification (defaults are the production ones).

    Attributes:
        sandbox: limits of the candidate process.
        golden_timeout_s: wall-clock seconds per case for golden.py.
        emulator: module (or ``.py`` path) installed as ``pypto`` in the sandbox.
        lint: replacement for ``runtime.lint.lint_paths`` (a test seam); None = the lint package.
        max_outliers: outliers kept per leaf in the report.
    """

    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    golden_timeout_s: float = 60.0
    emulator: str = "runtime.emulator"
    lint: Callable[..., list[Any]] | None = None
    max_outliers: int = 20


# ---------------------------------------------------------------------------------------------- helpers


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tree_hash(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(str(p.relative_to(_RUNTIME_DIR)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _sources(*names: str) -> list[Path]:
    out: list[Path] = []
    for name in names:
        p = _RUNTIME_DIR / name
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else ([p] if p.exists() else []))
    return out


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def _input_files(op_dir: Path, target: Path, previous: Path | None, plan_interfaces: Path | None) -> dict[str, Path]:
    files = {"SPEC.md": op_dir / "SPEC.md", "golden.py": op_dir / "golden.py"}
    if plan_interfaces is not None:
        files[_rel(plan_interfaces, op_dir)] = plan_interfaces
    files[_rel(target, op_dir)] = target
    if previous is not None:
        files[_rel(previous, op_dir)] = previous
    return {k: v for k, v in files.items() if v.is_file()}


def _hashes(files: dict[str, Path], emulator: str) -> dict[str, str]:
    hashes = {k: _sha256(v) for k, v in sorted(files.items())}
    hashes["verifier"] = _tree_hash(_sources(*_VERIFIER_SOURCES))
    if emulator == "runtime.emulator":
        hashes["emulator"] = _tree_hash(_sources("emulator"))
    else:
        hashes["emulator"] = _sha256(Path(emulator)) if Path(emulator).is_file() else "unavailable"
    lint_src = _sources("lint")
    if lint_src:
        hashes["lint"] = _tree_hash(lint_src)
    return hashes


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _finish(report: VerifyReport, t0: float, reports_dir: Path | None) -> VerifyReport:
    report.durations["total_s"] = round(time.perf_counter() - t0, 4)
    report.created_at = _now()
    report.report_hash = report.compute_hash()
    if reports_dir is not None:
        reports_dir = Path(reports_dir)
        reports_dir.mkdir(parents=True, exist_ok=True)
        (reports_dir / f"{report.report_hash}.json").write_text(report.to_json(), encoding="utf-8")
    log.info("verify %s: %s (%s)", report.target, report.verdict, report.report_hash[:12])
    return report


# ---------------------------------------------------------------------------------------------- lint


def _run_lint(settings: VerifySettings, target: Path, stage: str, op_dir: Path,
              previous: Path | None) -> LintSection:
    lint_fn = settings.lint
    blocking_fn: Callable[[list[Any]], list[Any]] | None = None
    if lint_fn is None:
        try:
            lint_mod = importlib.import_module("runtime.lint")
            lint_fn = lint_mod.lint_paths
            blocking_fn = getattr(lint_mod, "blocking", None)
        except (ImportError, AttributeError):
            return LintSection(available=False, stage=stage, message="lint: not available (runtime.lint has no "
                                                                      "lint_paths yet); the verdict cannot be PASS")
    try:
        findings = list(lint_fn([target], stage=stage, op_dir=op_dir, previous_stage=previous))
    except Exception as exc:  # noqa: BLE001 - a crashing linter must not crash the authority
        return LintSection(available=False, stage=stage, message=f"lint failed: {type(exc).__name__}: {exc}")
    dumped = [_finding_dict(f, op_dir) for f in findings]
    if blocking_fn is not None:
        block = [_finding_dict(f, op_dir) for f in blocking_fn(findings)]
    else:
        block = [d for d in dumped if d.get("severity") in ("S0", "S1") and d.get("status") == "FAIL"]
    return LintSection(available=True, stage=stage, findings=dumped, blocking=block)


def _finding_dict(f: Any, op_dir: Path) -> dict[str, Any]:
    d = f.model_dump(mode="json") if hasattr(f, "model_dump") else dict(f)
    if isinstance(d.get("file"), str) and d["file"].startswith("/"):
        d["file"] = _rel(Path(d["file"]), op_dir)
    return d


# ---------------------------------------------------------------------------------------------- main


def verify(
    op_dir: str | Path,
    target: str | Path,
    *,
    previous_stage: str | Path | None = None,
    case: str | None = None,
    require_sandbox: bool = False,
    reports_dir: str | Path | None = None,
    settings: VerifySettings | None = None,
) -> VerifyReport:
    """Verify ``target`` (a stage file or ``<op>_impl.py``) of the operator directory ``op_dir``.

    Returns:
        The :class:`VerifyReport`; every failure of the candidate or of the infrastructure is a verdict.

    Raises:
        VerifyUsageError: ``op_dir``/``target``/``previous_stage`` do not exist, the target is outside the
            op directory, or ``case`` names no case.
    """
    t0 = time.perf_counter()
    settings = settings or VerifySettings()
    op_path = Path(op_dir)
    if not op_path.is_dir():
        raise VerifyUsageError(f"operator directory {op_dir} does not exist")
    tgt = Path(target)
    if not tgt.is_file() and (op_path / tgt).is_file():
        tgt = op_path / tgt
    if not tgt.is_file():
        raise VerifyUsageError(f"target {target} does not exist (give a path inside {op_dir})")
    try:
        tgt.resolve().relative_to(op_path.resolve())
    except ValueError:
        raise VerifyUsageError(f"target {target} is not inside the operator directory {op_dir}") from None
    prev: Path | None = None
    if previous_stage is not None:
        prev = Path(previous_stage)
        if not prev.is_file() and (op_path / prev).is_file():
            prev = op_path / prev
        if not prev.is_file():
            raise VerifyUsageError(f"previous stage file {previous_stage} does not exist")
    rel_target = _rel(tgt, op_path)
    report = VerifyReport(target=rel_target, verdict="ERROR")
    report.sandbox.required = require_sandbox

    # -- load the op dir (a broken op dir is an ERROR report, not a crash)
    try:
        from runtime.opdir import GoldenError, OpDirError, load_op_dir, run_golden_cases
    except ImportError as exc:
        report.reasons.append(f"opdir package not available: {exc}")
        report.hashes = _hashes(_input_files(op_path, tgt, prev, None), settings.emulator)
        return _finish(report, t0, reports_dir)
    try:
        op = load_op_dir(op_path)
    except OpDirError as exc:
        report.reasons.append(f"operator directory invalid: {exc}")
        report.hashes = _hashes(_input_files(op_path, tgt, prev, None), settings.emulator)
        return _finish(report, t0, reports_dir)
    spec = op.spec
    report.op_name = spec.op_name
    input_names = [t.name for t in spec.inputs]
    output_names = [t.name for t in spec.outputs]

    # -- step 3 (validated first: an unknown --case is a usage error whatever the file holds)
    try:
        cases = op.cases(case=case) if case is not None else op.cases()
    except (OpDirError, KeyError, ValueError) as exc:
        raise VerifyUsageError(f"--case {case}: {exc}") from None
    if not cases:
        raise VerifyUsageError(f"no verification case{' named ' + case if case else ''} in {op_path / 'SPEC.md'}")

    # -- step 1: hashes
    try:
        plan: TargetPlan | None = plan_target(op_path, tgt, spec.op_name, input_names, output_names)
        plan_error = ""
    except TargetError as exc:
        plan, plan_error = None, str(exc)
    files = _input_files(op_path, tgt, prev, plan.interfaces_path if plan else None)
    report.hashes = _hashes(files, settings.emulator)
    if plan is None:
        report.verdict = "FAIL_LINT"
        report.reasons.append(plan_error)
        return _finish(report, t0, reports_dir)
    report.kind, report.module, report.wrapper = plan.kind, plan.module, plan.wrapper  # type: ignore[assignment]
    report.expected_leaves = list(plan.expected)

    # -- step 2: lint + frozen modules
    t = time.perf_counter()
    report.lint = _run_lint(settings, tgt, plan.kind, op_path, prev)
    already_reported = any(b.get("rule_id") == "PF05" for b in report.lint.blocking)
    if prev is not None and not already_reported:  # lint PF05 reports the same regions when lint ran
        upto = (plan.module - 1) if plan.module is not None else 10_000
        report.lint.frozen = frozen_violations(prev.read_text(encoding="utf-8"), tgt.read_text(encoding="utf-8"),
                                               upto)
    report.durations["lint_s"] = round(time.perf_counter() - t, 4)
    if report.lint.blocking or report.lint.frozen:
        report.verdict = "FAIL_LINT"
        report.reasons += [f"lint {b.get('rule_id')} {b.get('file')}:{b.get('line')}: {b.get('message')}"
                           for b in report.lint.blocking] + report.lint.frozen
        return _finish(report, t0, reports_dir)


    # -- steps 4 + 5: golden (own process) and candidate (sandbox). When the inputs do not come from the
    # golden's make_inputs and no STUB tensor is golden-fed, the two processes run concurrently: the
    # candidate never sees golden data either way, and the input bytes are cross-checked afterwards.
    emu_problem = _emulator_problem(settings.emulator)
    if emu_problem:
        report.reasons.append(emu_problem)
        return _finish(report, t0, reports_dir)
    parallel = not getattr(op, "has_make_inputs", True) and not plan.stub_params
    golden_box: dict[str, Any] = {}

    def golden_job() -> None:
        tg = time.perf_counter()
        try:
            golden_box["runs"] = run_golden_cases(op, list(cases), timeout=settings.golden_timeout_s)
        except GoldenError as exc:
            golden_box["error"] = f"golden.py failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - infrastructure failure becomes ERROR, never a crash
            golden_box["error"] = f"golden run failed: {type(exc).__name__}: {exc}"
        golden_box["s"] = round(time.perf_counter() - tg, 4)

    run: CandidateRun | None = None
    candidate_inputs: list[tuple[str, list[np.ndarray]]] = []
    t = time.perf_counter()
    if parallel:
        pre = {c.name: [np.asarray(a) for a in op.make_inputs(c)] for c in cases}
        for c in cases:
            by_name = dict(zip(input_names, pre[c.name], strict=False))
            candidate_inputs.append((c.name, [np.array(by_name[p], copy=True) for p in plan.params]))
        worker = threading.Thread(target=golden_job, name="golden", daemon=True)
        worker.start()
        try:
            run = run_candidate(tgt, plan.wrapper, candidate_inputs, policy=settings.sandbox,
                                emulator=settings.emulator, repeat_first=True)
        except SandboxError as exc:
            report.reasons.append(f"sandbox: {exc}")
        worker.join()
    else:
        golden_job()
    if "error" in golden_box:
        report.reasons.append(golden_box["error"])
        return _finish(report, t0, reports_dir)
    if run is None and report.reasons:
        return _finish(report, t0, reports_dir)
    goldens = golden_box["runs"]
    report.durations["golden_s"] = golden_box["s"]
    expected: dict[str, list[np.ndarray]] = {}
    for i, c in enumerate(cases):
        g = goldens[c.name]
        by_name = dict(zip(input_names, g.inputs, strict=False))
        leaves: list[np.ndarray] = []
        for name in plan.expected:
            arr = g.intermediates.get(name) if plan.kind == "module" else None
            if arr is None:
                arr = g.outputs.get(name)
            if arr is None:
                report.reasons.append(
                    f"boundary tensor {name!r} was not captured from golden.py (named locals: "
                    f"{', '.join(sorted(g.intermediates)) or 'none'}); name it in golden() or fix "
                    f"module_interfaces.yaml")
                return _finish(report, t0, reports_dir)
            leaves.append(np.asarray(arr))
        expected[c.name] = leaves
        args: list[np.ndarray] = []
        for p in plan.params:
            src = by_name.get(p)
            if src is None:
                src = g.intermediates.get(p)
            if src is None:
                report.reasons.append(f"STUB parameter {p!r} is not a golden intermediate")
                return _finish(report, t0, reports_dir)
            args.append(np.array(src, copy=True))
        if parallel:
            if not all(_same_bytes(np.asarray(a), b) for a, b in zip(args, candidate_inputs[i][1], strict=True)):
                report.reasons.append(f"case {c.name}: golden and candidate inputs differ (make_inputs is not "
                                      f"deterministic)")
                return _finish(report, t0, reports_dir)
        else:
            candidate_inputs.append((c.name, args))
    if run is None:
        t = time.perf_counter()
        try:
            run = run_candidate(tgt, plan.wrapper, candidate_inputs, policy=settings.sandbox,
                                emulator=settings.emulator, repeat_first=True)
        except SandboxError as exc:
            report.reasons.append(f"sandbox: {exc}")
            return _finish(report, t0, reports_dir)
    report.durations["candidate_s"] = round(time.perf_counter() - t, 4)
    report.sandbox = SandboxSection(layers=run.layers, required=require_sandbox, status=run.status,
                                    reason=run.reason, denied=run.denied, stderr_tail=_clean_tail(run),
                                    pid=run.pid)

    # -- step 6: compare + anti-gaming
    _judge(report, run, cases, goldens, expected, candidate_inputs, plan, spec, settings)
    for cr in report.cases:  # the child names the candidate by its file name; report it by its op-dir path
        if cr.error is not None and cr.error.file == tgt.name:
            cr.error.file = rel_target
        for d in cr.diagnostics:
            if d.get("file") == tgt.name:
                d["file"] = rel_target
    report.reasons = [r.replace(f" at {tgt.name}:", f" at {rel_target}:") for r in report.reasons]
    after = {k: _sha256(v) for k, v in files.items() if v.is_file()}
    for k in files:
        if after.get(k) != report.hashes.get(k):
            report.cheats.append(f"{k} changed while the candidate ran")

    # -- step 7: verdict
    _decide(report, require_sandbox)
    return _finish(report, t0, reports_dir)


def _clean_tail(run: CandidateRun) -> str:
    lines = [ln for ln in run.stderr_tail.splitlines() if ln.strip()]
    return "\n".join(lines[-15:])[-3000:]


def _emulator_problem(emulator: str) -> str:
    if emulator.endswith(".py"):
        return "" if Path(emulator).is_file() else f"emulator file {emulator} does not exist"
    try:
        mod = importlib.import_module(emulator)
    except ImportError as exc:
        return f"emulator: not available ({exc})"
    missing = [n for n in ("install", "session") if not hasattr(mod, n)]
    if missing:
        return f"emulator: not available ({emulator} has no {', '.join(missing)} yet)"
    return ""


def _error_info(d: dict[str, Any] | None) -> ErrorInfo | None:
    if not d:
        return None
    line = d.get("line")
    return ErrorInfo(type=str(d.get("type", "Error")), message=str(d.get("message", ""))[:2000],
                     code=d.get("code") if isinstance(d.get("code"), str) else None,
                     file=d.get("file") if isinstance(d.get("file"), str) else None,
                     line=line if isinstance(line, int) else None,
                     op=d.get("op") if isinstance(d.get("op"), str) else None)


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _equal_values(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape:
        return False
    try:
        return bool(np.array_equal(a.astype(np.float64), b.astype(np.float64), equal_nan=True))
    except (TypeError, ValueError):
        return False


def _is_constant(a: np.ndarray) -> bool:
    if a.size < 2:
        return False
    flat = a.reshape(-1).astype(np.float64)
    return bool(np.all(flat == flat[0]) or np.all(np.isnan(flat)))


def _judge(report: VerifyReport, run: CandidateRun, cases: list[Any], goldens: dict[str, Any],
           expected: dict[str, list[np.ndarray]], inputs: list[tuple[str, list[np.ndarray]]],
           plan: TargetPlan, spec: Any, settings: VerifySettings) -> None:
    runs: list[RunOutput] = list(run.runs)
    by_case = {name: arrays for name, arrays in inputs}
    if run.denied:
        report.cheats.append("the sandbox denied: " + "; ".join(sorted(set(run.denied))[:10]))
    if run.status in ("timeout", "killed", "crashed"):
        report.reasons.append(f"candidate process: {run.reason}")
    elif run.status == "import_error":
        report.reasons.append(run.reason)
    elif run.status == "sandbox_error":
        report.reasons.append(f"sandbox: {run.reason}")
    counters: dict[str, Any] = {}
    diags: dict[tuple, dict[str, Any]] = {}
    primary = runs[: len(cases)]
    for i, c in enumerate(cases):
        tol = spec.tolerance.get(c.dtype)
        atol, rtol = (tol.atol, tol.rtol) if tol is not None else (1e-3, 1e-3)
        cr = CaseReport(name=c.name, dims=dict(c.dims), dtype=c.dtype, seed=c.seed, band=c.band, tail=c.tail,
                        status="not_run", atol=atol, rtol=rtol,
                        golden_duration_s=round(float(goldens[c.name].duration_s), 4))
        report.cases.append(cr)
        if i >= len(primary):
            if run.status == "ok":
                report.reasons.append(f"case {c.name}: no result from the sandbox")
            if run.status == "import_error":
                cr.status = "fail_runtime"
                cr.error = _error_info(run.import_error)
            continue
        r = primary[i]
        rec = r.record
        cr.duration_s = round(float(rec.get("duration_s", 0.0)), 4)
        cr.kernel_calls = int(rec.get("kernel_calls", 0))
        cr.counters = rec.get("counters")
        cr.diagnostics = list(rec.get("diagnostics") or [])
        _merge_counters(counters, cr.counters or {})
        for d in cr.diagnostics:
            diags.setdefault((d.get("code"), d.get("message"), d.get("file"), d.get("line")), d)
        if rec.get("error"):
            cr.status = "fail_runtime"
            cr.error = _error_info(rec["error"])
            where = f" at {cr.error.file}:{cr.error.line}" if cr.error and cr.error.file else ""
            code = f" {cr.error.code}" if cr.error and cr.error.code else ""
            report.reasons.append(f"case {c.name}: {cr.error.type if cr.error else 'error'}{code}{where}: "
                                  f"{(cr.error.message if cr.error else '')[:300]}")
            continue
        _check_case(report, cr, r, expected[c.name], by_case[c.name], plan, settings)
    if len(runs) == len(cases) + 1 and primary and not primary[0].record.get("error"):
        again = runs[-1]
        first = primary[0]
        if again.record.get("error") or len(again.outputs) != len(first.outputs) or not all(
            a is not None and b is not None and _same_bytes(a, b)
            for a, b in zip(first.outputs, again.outputs, strict=True)
        ):
            report.cheats.append(f"case {cases[0].name} run twice gave different outputs (non-deterministic "
                                 f"or state kept across calls)")
    report.counters = counters
    report.diagnostics = [diags[k] for k in sorted(diags, key=lambda t: tuple(str(x) for x in t))]


def _check_case(report: VerifyReport, cr: CaseReport, r: RunOutput, golden: list[np.ndarray],
                given: list[np.ndarray], plan: TargetPlan, settings: VerifySettings) -> None:
    rec = r.record
    name = cr.name
    calls = int(rec.get("kernel_calls", 0))
    counted = (rec.get("counters") or {}).get("runs")  # the emulator session's own count, when it keeps one
    if calls != 1 or (isinstance(counted, int) and counted != 1):
        shown = calls if calls != 1 else counted
        report.cheats.append(f"case {name}: the wrapper called the jit kernel {shown} time(s); exactly once "
                             f"per call is required")
    if rec.get("kernel_errors"):
        err = rec["kernel_errors"][0]
        report.cheats.append(f"case {name}: the kernel raised {err.get('type')} ({str(err.get('message'))[:160]}) "
                             f"but the wrapper swallowed it and returned outputs")
    for j, (before, after) in enumerate(zip(given, r.args_after, strict=False)):
        if not _same_bytes(before, after):
            report.cheats.append(f"case {name}: the wrapper modified its input {plan.params[j]!r}")
    kinds = rec.get("output_kinds") or []
    outs = r.outputs
    bad_kind = [f"output[{j}] is a {k}" for j, k in enumerate(kinds) if k != "ndarray"]
    if bad_kind:
        cr.leaves = [LeafResult(path="output", all_close=False,
                                error="wrapper must return numpy arrays: " + ", ".join(bad_kind))]
    elif len(outs) != len(golden):
        cr.leaves = [LeafResult(path="output", all_close=False,
                                error=f"wrapper returned {len(outs)} output(s), expected {len(golden)} "
                                      f"({', '.join(plan.expected)})")]
    else:
        leaves: list[LeafResult] = []
        for j, (a, b) in enumerate(zip(outs, golden, strict=True)):
            res = compare_outputs(a, b, atol=cr.atol, rtol=cr.rtol, prefix=f"output[{j}]",
                                  max_outliers=settings.max_outliers)[0]
            if plan.kind == "final" and res.shape_match and a is not None and a.dtype != b.dtype:
                res = res.model_copy(update={"all_close": False,
                                             "error": f"dtype {res.actual_dtype}, expected {res.expected_dtype}"})
            leaves.append(res)
            if a is None:
                continue
            from_kernel = (rec.get("from_kernel") or [True] * len(outs))[j]
            if not from_kernel:
                report.cheats.append(f"case {name}: output[{j}] ({plan.expected[j]}) was not written by the jit "
                                     f"kernel (computed on the host in the wrapper)")
            for k, inp in enumerate(given):
                if _equal_values(a, inp) and not _equal_values(b, inp):
                    report.cheats.append(f"case {name}: output[{j}] ({plan.expected[j]}) is a copy of input "
                                         f"{plan.params[k]!r}")
            if _is_constant(a) and not _is_constant(b):
                report.cheats.append(f"case {name}: output[{j}] ({plan.expected[j]}) is constant but the golden "
                                     f"is not")
        cr.leaves = leaves
    if all(leaf.all_close for leaf in cr.leaves):
        cr.status = "pass"
    else:
        cr.status = "fail_numeric"
        for leaf in cr.leaves:
            if not leaf.all_close:
                j = leaf.path[len("output["):-1] if leaf.path.startswith("output[") else ""
                label = plan.expected[int(j)] if j.isdigit() and int(j) < len(plan.expected) else leaf.path
                detail = leaf.error or (f"{leaf.out_of_tolerance_count}/{leaf.total_elements} out of tolerance, "
                                        f"max_diff {leaf.max_diff:.4g}")
                report.reasons.append(f"case {name}: leaf {leaf.path} ({label}): {detail}")


def _merge_counters(total: dict[str, Any], part: dict[str, Any]) -> None:
    for k, v in part.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            total[k] = total.get(k, 0) + v
        elif isinstance(v, dict):
            sub = total.setdefault(k, {})
            for kk, vv in v.items():
                if isinstance(vv, int | float) and not isinstance(vv, bool):
                    sub[kk] = sub.get(kk, 0) + vv


def _decide(report: VerifyReport, require_sandbox: bool) -> None:
    missing = sorted(k for k, v in report.sandbox.layers.items() if not v)
    cheats = list(dict.fromkeys(report.cheats))
    report.cheats = cheats
    runtime_failed = report.sandbox.status in ("timeout", "killed", "crashed", "import_error") or any(
        c.status == "fail_runtime" for c in report.cases)
    numeric_failed = any(c.status == "fail_numeric" for c in report.cases)
    not_run = any(c.status == "not_run" for c in report.cases)
    if report.sandbox.status == "sandbox_error":
        report.verdict = "ERROR"
    elif require_sandbox and missing:
        report.verdict = "ERROR"
        report.reasons.insert(0, f"require_sandbox: layer(s) {', '.join(missing)} not active; failing closed")
    elif cheats:
        report.verdict = "FAIL_CHEAT"
        report.reasons = cheats + report.reasons
    elif runtime_failed:
        report.verdict = "FAIL_RUNTIME"
    elif numeric_failed:
        report.verdict = "FAIL_NUMERIC"
    elif not_run:
        report.verdict = "ERROR"
        report.reasons.append("not every case produced a result")
    elif report.lint is None or not report.lint.available:
        report.verdict = "ERROR"
        report.reasons.append(report.lint.message if report.lint else "lint did not run; the verdict cannot be PASS")
    else:
        report.verdict = "PASS"
