"""``bisect(op_dir, stage_file, case=None)``: one recorded run, then the automatic + checkpoint methods.

Flow: load the op directory (runtime.opdir) -> pick the case -> golden.py in its own process (inputs,
intermediates, outputs) -> the candidate in the verify sandbox with recording on (``_run``) -> compare the
wrapper outputs -> localize (``_auto``) and compare checkpoints (``_checkpoint``) -> sanitized report.
Without ``case``, cases are tried in verification order (one per shape and dtype) until one diverges.
"""

from __future__ import annotations

import hashlib
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from runtime.bisect._auto import AutoResult, Golden, analyze, name_from_source
from runtime.bisect._checkpoint import checkpoint_names, compare_checkpoints
from runtime.bisect._records import Rec
from runtime.bisect._rules import static_missing_cast
from runtime.bisect._run import DEFAULT_EMULATOR, RecordedRun, run_recorded, run_recorded_cases
from runtime.bisect.report import BisectReport, OpFinding, OutputResult, Suspect, UnmappedOp, stats_of
from runtime.stages import parse_stage_name, wrapper_for
from runtime.yamlio import load_yaml

__all__ = ["BisectError", "bisect", "order_cases"]

log = logging.getLogger(__name__)
_MAX_AUTO_CASES = 6


class BisectError(ValueError):
    """A user mistake (bad op directory, missing stage file, unknown case): one clear message."""


def _expected_names(op: Any, stage: Path, output_names: list[str]) -> list[str]:
    name = parse_stage_name(stage.name, op.spec.op_name)
    if name.kind != "stage" or name.op != op.spec.op_name or name.module is None:
        return list(output_names)
    path = op.root / "module_interfaces.yaml"
    try:
        data = load_yaml(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise BisectError(f"{stage.name} is a stage file but {path} cannot be read: {exc}") from None
    k = name.module
    names: list[str] = []
    for mod in data.get("modules") or []:
        if int(mod.get("id", 0)) <= k:
            names.extend(str(o["name"]) for o in mod.get("outputs") or [])
    return names


def _golden(op: Any, grun: Any, case: Any) -> Golden:
    arrays: dict[str, np.ndarray] = {}
    kinds: dict[str, str] = {}
    for t, a in zip(op.spec.inputs, grun.inputs, strict=False):
        arrays[t.name], kinds[t.name] = np.asarray(a), "input"
    for n, a in grun.intermediates.items():  # binding order = golden data-flow order
        if n in grun.outputs and n not in arrays:  # an output computed early (AdamW's m_new) keeps its place
            arrays[n], kinds[n] = np.asarray(grun.outputs[n]), "output"
        elif n not in arrays and isinstance(a, np.ndarray) and a.dtype.kind in "fiub":
            arrays[n], kinds[n] = a, "intermediate"
    for n, a in grun.outputs.items():
        if n not in arrays:
            arrays[n], kinds[n] = np.asarray(a), "output"
    tol = op.spec.tolerance.get(case.dtype) or next(iter(op.spec.tolerance.values()))
    return Golden(arrays, kinds, float(tol.atol), float(tol.rtol))


def _finding(r: Rec | None, res: AutoResult, golden: Golden, lines: list[str]) -> OpFinding | None:
    if r is None:
        return None
    status = res.status.get(r.seq, "unknown")
    gname, region = None, None
    if r.seq in res.matched and not (status in ("mismatch", "nan", "misplaced") and r.seq in res.expected):
        gname, reg = res.matched[r.seq]
        region = list(reg)
    elif r.seq in res.expected:
        gname, reg = res.expected[r.seq]
        region = list(reg)
    elif r.is_write and r.target in res.param_map:
        gname = res.param_map[r.target]
        region = list(r.offsets) if r.offsets is not None else None
    elif r.name in golden.arrays:
        gname = r.name
        off = res.offsets.get(r.seq)
        region = list(off) if off is not None else None
    st = None
    box = r.box()
    if box is not None and gname is not None and region is not None:
        g = golden.shaped(gname, box.ndim)
        if g is not None and g.ndim == box.ndim == len(region):
            sl = g[tuple(slice(o, o + n) for o, n in zip(region, box.shape, strict=True))]
            if sl.shape == box.shape:
                st = stats_of(box, sl, golden.atol, golden.rtol, offset=region)
    code = lines[r.line - 1].strip() if r.line and 0 < r.line <= len(lines) else ""
    off = res.offsets.get(r.seq)
    return OpFinding(file=Path(r.file).name if r.file else None, line=r.line, code=code, op=r.op, name=r.name,
                     iteration=dict(r.iteration), offsets=list(off) if off is not None else r.offsets,
                     valid_shape=r.valid_shape, status=status, golden=gname, golden_region=region, stats=st,
                     call_site=res.call_sites.get(r.seq))


def _code(lines: list[str], line: int | None) -> str:
    return lines[line - 1].strip() if line and 0 < line <= len(lines) else ""


def _output_results(out_names: list[str], run: RecordedRun, golden: Golden) -> tuple[list[OutputResult], dict]:
    results, got = [], {}
    for i, name in enumerate(out_names):
        exp = golden.f64.get(name)
        act = run.outputs[i] if i < len(run.outputs) else None
        if exp is None:
            continue
        if act is None or np.asarray(act).shape != exp.shape:
            results.append(OutputResult(name=name, all_close=False))
            continue
        got[name] = np.asarray(act)
        st = stats_of(np.asarray(act, dtype=np.float64), exp, golden.atol, golden.rtol)
        results.append(OutputResult(name=name, all_close=st.out_of_tolerance == 0, stats=st))
    return results, got


def _error_info(err: dict[str, Any] | None, stage: Path) -> dict[str, Any] | None:
    if not err:
        return None
    out = {k: err[k] for k in ("type", "code", "message", "line", "op") if k in err and err[k] is not None}
    if err.get("file"):
        out["file"] = Path(str(err["file"])).name
    if "message" in out:
        out["message"] = str(out["message"])[:500]
    return out


def _golden_run(op: Any, case: Any, timeout: float, cache: dict | None) -> Any:
    from runtime.opdir import run_golden

    if cache is None:
        return run_golden(op, case, timeout=timeout)
    key = _golden_key(op, case)
    if key not in cache:
        cache[key] = _frozen(run_golden(op, case, timeout=timeout))
    return cache[key]


def _golden_key(op: Any, case: Any) -> tuple[str, str]:
    root = Path(op.root)
    return (hashlib.sha256((root / "golden.py").read_bytes() + (root / "SPEC.md").read_bytes()).hexdigest(),
            case.name)


def _frozen(run: Any) -> Any:
    """The cache is shared (across calls, and across threads in callers that run bisects concurrently): its
    arrays are frozen so an in-place change anywhere raises instead of corrupting another bisect."""
    for arr in [*run.inputs, *run.outputs.values(), *run.intermediates.values()]:
        if isinstance(arr, np.ndarray):
            arr.flags.writeable = False
    return run


_BATCH_BYTES = 4 * 1024**2
"""Inputs up to this size: the first two cases are recorded in one sandbox process. Larger kernels spend
their time emulating, so a second case would cost more than the process start it saves."""


def _prefetch_goldens(op: Any, cases: list[Any], timeout: float, cache: dict) -> None:
    """Golden runs of ``cases`` not yet cached, in one golden process (one process start, not one per case)."""
    from runtime.opdir import run_golden_cases

    todo = [c for c in cases if _golden_key(op, c) not in cache]
    if len(todo) < 2:
        return
    runs = run_golden_cases(op, todo, timeout=timeout)
    for c in todo:
        cache[_golden_key(op, c)] = _frozen(runs[c.name])


def _input_bytes(op: Any, case: Any, timeout: float, cache: dict | None) -> int:
    return sum(int(np.asarray(a).nbytes) for a in _golden_run(op, case, timeout, cache).inputs)


def _checkpoints_for(op: Any, stage: Path, golden: Golden) -> list[str]:
    inter = [n for n, k in golden.kinds.items() if k == "intermediate"]
    return checkpoint_names(stage, inter, wrapper_for(stage))


def _record_together(op: Any, stage: Path, cases: list[Any], *, emulator: str, timeout: float,
                     golden_cache: dict | None) -> dict[str, RecordedRun]:
    """Record several cases in one sandbox process (see ``run_recorded_cases``)."""
    from runtime.sandbox import SandboxError

    gruns = [_golden_run(op, c, timeout, golden_cache) for c in cases]
    cps = _checkpoints_for(op, stage, _golden(op, gruns[0], cases[0]))
    try:
        runs = run_recorded_cases(stage, wrapper_for(stage), [(c.name, list(g.inputs)) for c, g in
                                                              zip(cases, gruns, strict=True)],
                                  emulator=emulator, record=True, checkpoints=cps, timeout=timeout)
    except SandboxError as exc:
        runs = [RecordedRun(status="sandbox_error", reason=str(exc)) for _ in cases]
    return {c.name: r for c, r in zip(cases, runs, strict=True)}


def _one_case(op: Any, stage: Path, case: Any, *, emulator: str, timeout: float, lines: list[str],
              started: float, golden_cache: dict | None = None, case_reason: str = "",
              run: RecordedRun | None = None) -> BisectReport:
    grun = _golden_run(op, case, timeout, golden_cache)
    golden = _golden(op, grun, case)
    out_names = _expected_names(op, stage, list(grun.output_names))
    missing = [n for n in out_names if n not in golden.arrays]
    if missing:
        raise BisectError(f"golden.py produces no tensor named {', '.join(missing)} (needed by {stage.name})")
    cps = _checkpoints_for(op, stage, golden)
    from runtime.sandbox import SandboxError

    if run is None:
        try:
            run = run_recorded(stage, wrapper_for(stage), list(grun.inputs), case=case.name, emulator=emulator,
                               record=True, checkpoints=cps, timeout=timeout)
        except SandboxError as exc:
            run = RecordedRun(status="sandbox_error", reason=str(exc))
    method = "auto+checkpoint" if cps else "auto"
    base: dict[str, Any] = dict(op_name=op.spec.op_name, stage_file=stage.name, case=case.name, method=method,
                                case_reason=case_reason,
                                records=len(run.records), recording=run.recording, emulator=emulator,
                                isolation=sorted(k for k, v in run.layers.items() if v))
    if run.status not in ("ok", "error"):
        return BisectReport(**base, status="RUNTIME_ERROR" if run.status != "sandbox_error" else "ERROR",
                            summary=f"the candidate did not run: {run.status}: {run.reason}",
                            runtime_error=_error_info(run.error, stage), duration_s=time.perf_counter() - started)
    outputs, got = _output_results(out_names, run, golden)
    try:
        if not any(r.name for r in run.records):
            name_from_source(run.records, stage.name, "\n".join(lines))
        res = analyze(run.records, golden, run.kernel_args, got, source="\n".join(lines), stage_name=stage.name)
        cp_results = compare_checkpoints(run.checkpoints, golden, run.records, cps) if cps else []
    except Exception as exc:  # noqa: BLE001 - records of an unusual kernel must not crash the debugger's tool
        log.exception("bisect analysis failed")
        return BisectReport(**base, status="ERROR", summary=f"the analysis of the recording failed: "
                            f"{type(exc).__name__}: {exc}", outputs=outputs,
                            runtime_error=_error_info(run.error, stage), duration_s=time.perf_counter() - started)
    first_cp = next((c.name for c in cp_results if c.status != "match"), None)
    culprit = _finding(res.culprit, res, golden, lines)
    observed = _finding(res.observed, res, golden, lines)
    window = [f for r in res.window if (f := _finding(r, res, golden, lines)) is not None][:20]
    suspects = [Suspect(rank=x.rank, line=x.rec.line, code=_code(lines, x.rec.line), op=x.rec.op,
                        iteration=dict(x.rec.iteration), call_site=res.call_sites.get(x.rec.seq),
                        status=res.status.get(x.rec.seq, "unknown"), reason=x.reason) for x in res.suspects]
    unmapped = [UnmappedOp(line=r.line, op=r.op, reason=why) for r, why in res.unmapped]
    dedup: dict[tuple, UnmappedOp] = {}
    for u in unmapped:
        dedup.setdefault((u.line, u.op, u.reason), u)
    evidence = list(res.evidence)
    if run.truncated:
        evidence.append("the recording exceeded its size budget: some values were dropped (metadata kept)")
    if run.sampled:
        evidence.append("large run: values were kept for each op's first executions, every power-of-two "
                        "execution and its last; the others were compared by their geometry only")
    if not run.recording and run.status == "ok":
        evidence.append("the emulator did not record ops (no record mode): only outputs and checkpoints compared")
    if cps and first_cp:
        c = next(c for c in cp_results if c.name == first_cp)
        evidence.append(f"first diverging checkpoint in data-flow order: {first_cp!r}"
                        + (f", drift onset at iteration {c.drift_onset}" if c.drift_onset else ""))
    err = _error_info(run.error, stage) if run.status == "error" else None
    if err:
        status = "RUNTIME_ERROR"
        where = f" at line {err['line']}" if err.get("line") else ""
        summary = f"the kernel raised{where}: {err.get('message', '')[:200]}"
        in_stage = err.get("file") in (None, stage.name)
        if culprit is not None and culprit.line != err.get("line"):
            evidence.append(f"before the error, values already depart from the golden at line {culprit.line} "
                            f"({culprit.op}): {culprit.code}")
        if err.get("line") and in_stage:
            code = lines[err["line"] - 1].strip() if 0 < err["line"] <= len(lines) else ""
            culprit = OpFinding(file=stage.name, line=err["line"], code=code, op=str(err.get("op") or "?"),
                                status="error")
            cast_line = static_missing_cast("\n".join(lines), err["line"]) \
                if "dtype" in str(err.get("message", "")).lower() and not run.records else None
            if cast_line is not None:
                evidence.append(f"line {err['line']} was rejected for mixed dtypes before any op ran; line "
                                f"{cast_line} feeds it a value the kernel casts elsewhere but uses un-cast here "
                                "(missing cast?)")
                culprit = OpFinding(file=stage.name, line=cast_line, code=lines[cast_line - 1].strip(),
                                    op="missing_cast", status="error")
    elif all(o.all_close for o in outputs) and not first_cp:
        status, summary = "NO_DIVERGENCE", f"all outputs match the golden for case {case.name}"
        if observed is not None:
            evidence.append(f"note: an intermediate value departs at line {observed.line} ({observed.op}) "
                            "but the outputs are within tolerance")
        culprit = None
    elif culprit is not None:
        status = "DIVERGENCE_FOUND"
        site = f", called from line {culprit.call_site}" if culprit.call_site is not None else ""
        summary = (f"divergence at line {culprit.line} ({culprit.op}{site}"
                   + (f", iteration {culprit.iteration}" if culprit.iteration else "") + f"): {culprit.code}")
    else:
        status = "NOT_LOCALIZED"
        where = f"first departing value at line {observed.line} ({observed.op})" if observed is not None else \
            "no recorded op could be mapped to the divergence"
        summary = f"not localized: {where}"
        if suspects:
            summary += f"; {len(suspects)} suspect line(s), first line {suspects[0].line}"
        if first_cp:
            summary += f"; first diverging checkpoint: {first_cp}"
    return BisectReport(**base, status=status, summary=summary, first_divergence=culprit, observed_at=observed,
                        candidates=window, suspects=suspects if culprit is None else [],
                        evidence=evidence, outputs=outputs, checkpoints=cp_results,
                        first_checkpoint=first_cp, unmapped=list(dedup.values())[:50], runtime_error=err,
                        duration_s=time.perf_counter() - started)


def order_cases(cases: list[Any]) -> list[Any]:
    """The order bisect tries cases in when none is given: one per (shape, dtype) first, cases without a tail
    before cases with one (a tail case may be padded by the wrapper, so the kernel's tensors no longer line
    up with the golden's), smallest first; then the other seeds and value bands in the same order."""
    def size(c: Any) -> int:
        return int(np.prod([int(v) for v in c.dims.values()])) if c.dims else 0

    seen: set[tuple] = set()
    first, rest = [], []
    for c in sorted(cases, key=lambda c: (bool(c.tail), size(c))):
        key = (tuple(sorted(c.dims.items())), c.dtype)
        (rest if key in seen else first).append(c)
        seen.add(key)
    return first + rest


def bisect(op_dir: str | Path, stage_file: str | Path, *, case: str | None = None,
           emulator: str = DEFAULT_EMULATOR, timeout: float = 120.0,
           golden_cache: dict | None = None) -> BisectReport:
    """Localize the first op (or checkpoint) where ``stage_file`` departs from the golden.

    Args:
        op_dir: the operator directory (SPEC.md + golden.py).
        stage_file: ``<op>_impl.py`` or ``modules/<op>_module<sfx>_impl.py`` (relative to ``op_dir`` or absolute).
        case: a case name from the verification case list; default: try up to six cases in the order of
            :func:`order_cases` (without a tail first, smallest first) until one diverges; the report's
            ``case_reason`` says which and why.
        emulator: emulator module (default: ``runtime.emulator``; a ``.py`` path loads another).
        timeout: wall-clock budget per candidate run and per golden run.
        golden_cache: a dict the caller keeps to reuse golden runs across calls (keyed by the sha256 of
            golden.py + SPEC.md and the case name); None runs golden.py every time.

    Raises:
        BisectError: the op directory, stage file or case is wrong (one clear message).
    """
    from runtime.opdir import GoldenError, OpDirError, load_op_dir

    started = time.perf_counter()
    if golden_cache is None:
        golden_cache = {}  # within this call at least: the batched first cases and their reports share runs
    try:
        op = load_op_dir(op_dir)
    except OpDirError as exc:
        raise BisectError(f"invalid op directory {op_dir}: {exc}") from None
    stage = Path(stage_file)
    if not stage.is_absolute() and not stage.exists():
        stage = Path(op.root) / stage
    if not stage.is_file():
        raise BisectError(f"stage file not found: {stage_file}")
    try:
        lines = stage.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BisectError(f"cannot read {stage}: {exc}") from None
    try:
        cases = op.cases(case=case)
    except OpDirError as exc:
        raise BisectError(str(exc)) from None
    if case is None:
        cases = order_cases(cases)[:_MAX_AUTO_CASES]
    report: BisectReport | None = None
    clean: list[str] = []
    pre: dict[str, RecordedRun] = {}
    if case is None and len(cases) > 1 and _input_bytes(op, cases[0], timeout, golden_cache) <= _BATCH_BYTES:
        # the likeliest cases in one sandbox process (small kernels: the process start dominates): the first
        # two, and the first tail case when it is not among them (a tail-only bug then costs no third process)
        batch = cases[:2]
        tail = next((c for c in cases if c.tail), None)
        if tail is not None and tail not in batch and _input_bytes(op, cases[0], timeout, golden_cache) \
                <= _BATCH_BYTES // 4:
            batch.append(tail)
        try:
            _prefetch_goldens(op, batch, timeout, golden_cache)
            pre = _record_together(op, stage, batch, emulator=emulator, timeout=timeout,
                                   golden_cache=golden_cache)
        except GoldenError as exc:
            raise BisectError(f"golden.py failed: {exc}") from None
    for c in cases:
        if case is not None:
            why = f"case {c.name} as asked"
        else:
            kind = "with a tail" if c.tail else "without a tail (its tensors line up with the golden's tile by tile)"
            why = (f"case {c.name}: the smallest {kind}" if not clean else
                   f"case {c.name} ({'with' if c.tail else 'without'} a tail): the first that diverges; "
                   f"{', '.join(clean)} match the golden")
        try:
            rep = _one_case(op, stage, c, emulator=emulator, timeout=timeout, lines=lines, started=started,
                            golden_cache=golden_cache, case_reason=why, run=pre.get(c.name))
        except GoldenError as exc:
            raise BisectError(f"golden.py failed for case {c.name}: {exc}") from None
        if report is None or rep.status != "NO_DIVERGENCE":
            report = rep
        if rep.status != "NO_DIVERGENCE":
            break
        clean.append(c.name)
    assert report is not None
    report.duration_s = time.perf_counter() - started
    return report
