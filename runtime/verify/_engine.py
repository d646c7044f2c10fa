"""``verify(op_dir, target)``: the steps of spec/verification.md, each a named function, in order.

``_step_paths`` (usage errors) -> ``_step_load`` (op dir; broken -> ERROR) -> ``_step_cases`` -> ``_step_hashes``
-> ``_step_lint`` (S0/S1 or frozen-module edits -> FAIL_LINT, nothing runs) -> ``_step_isolation``
(``require_sandbox`` refuses ``process-only``) -> ``_step_execute`` (golden in its own process, candidate in the OS
sandbox) -> ``_step_compare`` (every leaf of every case) -> ``_step_anti_gaming`` (the named checks of
``_checks``) -> ``_step_verdict``.

Verdict precedence (first that applies): ERROR (infrastructure, or the sandbox refused) > FAIL_LINT >
FAIL_CHEAT > FAIL_RUNTIME > FAIL_NUMERIC (a case out of tolerance, or else a device-divergence warning,
:func:`device_divergence`) > ERROR (lint not available: never PASS) > PASS.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import importlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np

from runtime.agent_view import coarse, coarse_share
from runtime.compare import LeafResult, compare_outputs
from runtime.dtypes import DTypeError, is_float, is_float_dtype, name_of
from runtime.sandbox import (
    CandidateRun,
    RunOutput,
    SandboxError,
    SandboxPolicy,
    isolation_level,
    run_candidate,
)
from runtime.sandbox.env_policy import candidate_hash_seed
from runtime.targets import DEFAULT_NPUARCH, op_dir_target, parse_target
from runtime.targets import TargetError as ToolchainTargetError
from runtime.verify._calling import draw_layouts, draw_scalar_types, draw_torch_modes, draw_weight_states
from runtime.verify._checks import Evidence, run_checks, unrepeatable_failures
from runtime.verify._report import CaseReport, ErrorInfo, LintSection, SandboxSection, Verdict, VerifyReport
from runtime.verify._target import TargetError, TargetPlan, frozen_violations, plan_target

__all__ = ["VerifySettings", "VerifyUsageError", "verify"]

log = logging.getLogger(__name__)

_RUNTIME_DIR = Path(__file__).resolve().parents[1]
_VERIFIER_SOURCES = ("verify", "sandbox", "compare.py", "dtypes.py", "pyast.py")


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
        pypto_target: the PyPTO version to follow (``head`` / ``0.2.0``); None = the op dir's (SPEC.md
            ``pypto_target``, else forge.toml ``[toolchain]``, else the default, ``runtime.targets``).
        lint_stage: the lint stage of a final target (``performance`` for a variant of the performance stage,
            where tuning constructs such as several ``unroll_list`` values are allowed); None = the target's kind.
    """

    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    golden_timeout_s: float = 60.0
    emulator: str = "runtime.emulator"
    lint: Callable[..., list[Any]] | None = None
    max_outliers: int = 20
    device: bool = True
    """Execute kernels in the device process (:mod:`runtime.sandbox._device`; only ``runtime.emulator`` has
    one). The production setting: False runs them in the candidate's process (tests of the old path only)."""
    pypto_target: str | None = None
    lint_stage: str | None = None


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
    report.evidence = report.compute_evidence()
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


# ---------------------------------------------------------------------------------------------- steps


class _Stop(Exception):  # noqa: N818 - control flow: a step decided the report is final
    """Raised by a step after it filled in the report: skip the remaining steps."""


@dataclass
class _Run:
    """What the steps hand to each other."""

    report: VerifyReport
    settings: VerifySettings
    op_path: Path
    target: Path
    previous: Path | None
    rel_target: str
    require_sandbox: bool
    op: Any = None
    spec: Any = None
    cases: list[Any] = field(default_factory=list)
    plan: TargetPlan | None = None
    files: dict[str, Path] = field(default_factory=dict)
    goldens: dict[str, Any] = field(default_factory=dict)
    expected: dict[str, list[np.ndarray]] = field(default_factory=dict)
    candidate_inputs: list[tuple[str, list[np.ndarray]]] = field(default_factory=list)
    call_plan: list[str] = field(default_factory=list)
    seed: int = 0
    """The verification's secret seed (the run's seed x the verified file): unseen cases, call order, hash seed."""
    version: int = 1
    """The unseen drawing of this run (`runtime.opdir._unseen.unseen_version` of its run seed)."""
    refused: list[dict[str, Any]] = field(default_factory=list)
    """Diagnostics of attribute values golden.py refused (`_drop_refused_attributes`), for the report."""
    per_shape: set[str] = field(default_factory=set)
    """(version 19) Attributes whose sets are checked on each shape they run on (`_attrs_key`)."""
    run: CandidateRun | None = None

    def fail(self, reason: str, verdict: Verdict = Verdict.ERROR) -> _Stop:
        self.report.verdict = verdict
        self.report.reasons.append(reason)
        return _Stop()


def _resolve(op_path: Path, path: str | Path) -> Path:
    """``path`` as given, or inside the op dir: relative paths name the op dir's file when it has one and the
    working directory's file of that name is not in the op dir (session 49: ``verify silu silu_impl.py`` next to a
    stray ``silu_impl.py`` refused it as outside the operator directory instead of verifying ``silu/silu_impl.py``)."""
    p = Path(path)
    inside = op_path / p
    if p.is_absolute() or not inside.is_file():
        return p
    if not p.is_file():
        return inside
    try:
        p.resolve().relative_to(op_path.resolve())
    except ValueError:
        return inside
    return p


def _step_paths(op_dir: str | Path, target: str | Path, previous_stage: str | Path | None) -> tuple[Path, Path, Path | None]:
    """Usage errors (missing op dir / target / previous stage, target outside the op dir) raise, nothing else."""
    op_path = Path(op_dir)
    if not op_path.is_dir():
        raise VerifyUsageError(f"operator directory {op_dir} is a file, not a directory" if op_path.is_file() else
                               f"operator directory {op_dir} does not exist")
    tgt = _resolve(op_path, target)
    if tgt.is_dir():
        raise VerifyUsageError(f"target {target} is a directory: give the kernel's .py file (a stage file or "
                               f"<op>_impl.py inside {op_dir})")
    if not tgt.is_file():
        raise VerifyUsageError(f"target {target} does not exist (give a path inside {op_dir})")
    if tgt.suffix != ".py":  # UX audit s33: `verify op op/SPEC.md` ran a whole verification of a YAML file
        raise VerifyUsageError(f"target {target} is not a Python file: give the kernel's .py file (a stage file or "
                               f"<op>_impl.py inside {op_dir})")
    try:
        tgt.resolve().relative_to(op_path.resolve())
    except ValueError:
        raise VerifyUsageError(f"target {target} is not inside the operator directory {op_dir}") from None
    prev: Path | None = None
    if previous_stage is not None:
        prev = _resolve(op_path, previous_stage)
        if not prev.is_file():
            raise VerifyUsageError(f"previous stage file {previous_stage} does not exist")
    return op_path, tgt, prev


def _step_load(r: _Run) -> None:
    """Load SPEC.md + golden.py; a broken op dir is an ERROR report (with the file hashes), not a crash."""
    try:
        from runtime.opdir import OpDirError, load_op_dir
    except ImportError as exc:
        r.report.hashes = _hashes(_input_files(r.op_path, r.target, r.previous, None), r.settings.emulator)
        raise r.fail(f"opdir package not available: {exc}") from None
    try:
        r.op = load_op_dir(r.op_path)
    except OpDirError as exc:
        r.report.hashes = _hashes(_input_files(r.op_path, r.target, r.previous, None), r.settings.emulator)
        raise r.fail(f"operator directory invalid: {exc}") from None
    r.spec = r.op.spec
    r.report.op_name = r.spec.op_name
    try:
        r.report.pypto_target, r.report.pypto_target_source = _resolve_target(r.settings, r.op_path, r.spec)
        r.report.npuarch = getattr(r.spec, "npuarch", None) or DEFAULT_NPUARCH
    except ToolchainTargetError as exc:
        raise r.fail(f"toolchain target: {exc}") from None


def _resolve_target(settings: VerifySettings, op_path: Path, spec: Any) -> tuple[str, str]:
    """(target, where it came from): the caller's setting, SPEC.md, forge.toml, or the default."""
    if settings.pypto_target is not None:
        return parse_target(settings.pypto_target, "pypto_target"), "settings"
    return op_dir_target(op_path, spec)


def _step_cases(r: _Run, case: str | None) -> None:
    """The cases of SPEC.md (an unknown ``--case`` is a usage error whatever the target holds), then the unseen
    cases drawn from the run's seed (:mod:`runtime.opdir._unseen`)."""
    from runtime.opdir import OpDirError
    from runtime.opdir._unseen import unseen_cases, unseen_version, verification_seed
    from runtime.verify._hints import source_hints

    try:
        spec_cases = r.op.cases(case=case) if case is not None else r.op.cases()
    except (OpDirError, KeyError, ValueError) as exc:
        raise VerifyUsageError(f"--case {case}: {exc}") from None
    if not spec_cases:
        raise VerifyUsageError(f"no verification case{' named ' + case if case else ''} in {r.op_path / 'SPEC.md'}")
    assert r.report.unseen_seed is not None
    seed = r.seed = verification_seed(r.report.unseen_seed, r.target.read_bytes())  # the run's seed x the file
    r.version = unseen_version(r.report.unseen_seed)  # the shipped traces' seeds keep the drawing they recorded
    # (version 23) the sizes the verified file names itself: its bounds, compared residues and blocks (version 24:
    # in every spelling of the arithmetic, runtime.verify._hints)
    hints = (source_hints(r.target.read_text(encoding="utf-8", errors="replace"), r.version)
             if r.version >= 23 else None)
    r.cases = list(spec_cases) + unseen_cases(r.spec, list(spec_cases), seed, r.version, hints=hints)


def _golden_keywords(op: Any) -> list[str]:
    """The parameters ``golden()`` takes by name after its inputs (what the golden child passes SPEC attributes to);
    none when golden is not a plain function."""
    fdef = op.golden_def
    if fdef is None:
        return []
    a = fdef.args
    positional = [x.arg for x in [*a.posonlyargs, *a.args]]
    return positional[len(op.spec.inputs):] + [x.arg for x in a.kwonlyargs]


def _step_attribute_cases(r: _Run) -> None:
    """(unseen drawing version 10) The SPEC's float attributes that both the wrapper and the golden take, at other
    values, on a SPEC shape (:func:`runtime.opdir._unseen.attribute_cases`); (version 14) and the int attributes
    golden() uses as a count, an exponent, a bound or a scale (:func:`runtime.opdir._unseen.int_attribute_cases`)."""
    from runtime.opdir._unseen import (
        attribute_cases,
        flipped_bools,
        int_attribute_cases,
        string_attribute_cases,
        varied_attributes,
        varied_ints,
        varied_strings,
        vary_unseen_attributes,
    )

    if r.plan is None or not r.plan.attrs:
        return
    keywords = _golden_keywords(r.op)
    names = varied_attributes(r.spec, r.plan.attrs, keywords, r.version)
    ints = varied_ints(r.spec, r.plan.attrs, keywords, r.op.golden_tree, r.version)
    # (v19) a reshape's int runs in the int cases only: on an unseen shape the reshape may not divide (an ERROR)
    unseen_ints = {k: v for k, v in ints.items() if v != "shape"}
    r.cases = vary_unseen_attributes(r.spec, r.cases, names, r.seed, r.version, ints=unseen_ints)  # (v11) before
    spec_cases = [c for c in r.cases if not c.unseen]
    flips = flipped_bools(r.spec, r.plan.attrs, keywords, r.version)  # (v18) bools flipped
    r.cases += attribute_cases(r.spec, spec_cases, names, r.seed, sum(c.unseen for c in r.cases) + 1, r.version,
                               flips=flips)
    r.cases += int_attribute_cases(r.spec, spec_cases, ints, r.seed, sum(c.unseen for c in r.cases) + 1, r.version)
    strings = varied_strings(r.spec, r.plan.attrs, keywords, r.op.golden_tree, r.version)  # (v19) str attributes
    r.cases += string_attribute_cases(r.spec, spec_cases, strings, r.seed, sum(c.unseen for c in r.cases) + 1,
                                      r.version)
    r.per_shape = {k for k, v in ints.items() if v == "shape"} | set(strings)
    if r.version >= 11:
        _drop_refused_attributes(r)


def _attrs_key(c: Any, per_shape: set[str] | frozenset[str] = frozenset()) -> str:
    """The attribute set of case ``c``; (version 19) with its dims when it moves an attribute of ``per_shape`` (a
    reshape's int, a str attribute): such a set may be refused on one shape and run on another."""
    key = json.dumps(c.attrs, sort_keys=True)
    if c.attrs and set(c.attrs) & per_shape:
        key += " on " + json.dumps(c.dims, sort_keys=True)
    return key


def _drop_refused_attributes(r: _Run) -> None:
    """(version 11) Attribute values golden.py refuses are not run: a drawn value can leave the op's domain (a zero
    point that must be an int, a probability the golden checks), and one refusal made the whole verification an ERROR
    that no kernel could pass (red team s36c). Golden runs each set of values once, on its smallest case - one
    process for all of them; only when that fails, one per set - and the cases of a refused set are dropped, each
    with a diagnostic. A golden that fails otherwise (a timeout, a crash) is left to the run itself to report.
    (version 19) A set that moves a reshape's int or a str attribute is checked on each shape it runs on, and beside
    each such set golden runs once at the SPEC's values on the same case: a set whose outputs differ from those in
    dtype is not run either (a str attribute may name an output dtype)."""
    from runtime.opdir import GoldenError, run_golden_cases
    from runtime.opdir._memory import case_bytes

    per_shape = r.per_shape if r.version >= 19 else set()
    firsts: dict[str, Any] = {}
    for c in r.cases:
        if c.attrs and ((k := _attrs_key(c, per_shape)) not in firsts
                        or case_bytes(r.spec, c) < case_bytes(r.spec, firsts[k])):
            firsts[k] = c
    if not firsts:
        return
    twins = {k: c.model_copy(update={"name": c.name + "-spec-attrs", "attrs": {}}) for k, c in firsts.items()
             if set(c.attrs) & per_shape}
    try:
        runs = run_golden_cases(r.op, [*firsts.values(), *twins.values()], timeout=r.settings.golden_timeout_s)
        if r.version >= 18:
            _drop_reshaped_attributes(r, firsts, runs, twins)
        return
    except GoldenError as exc:
        if exc.kind != "exception":
            return
    refused: dict[str, str] = {}
    one_by_one: dict[str, Any] = {}
    keyed: list[tuple[str | None, Any]] = [*firsts.items(), *((None, t) for t in twins.values())]
    for key, case in keyed:
        try:
            one_by_one.update(run_golden_cases(r.op, [case], timeout=r.settings.golden_timeout_s))
        except GoldenError as exc:
            if exc.kind == "exception" and key is not None:
                refused[key] = str(exc)
    if r.version >= 18:
        _drop_reshaped_attributes(r, {k: c for k, c in firsts.items() if k not in refused}, one_by_one, twins)
    _not_run(r, {k: f"golden.py refused them ({why[:300]})" for k, why in refused.items()})


def _not_run(r: _Run, why: dict[str, str]) -> None:
    """Drop the cases of the attribute sets in ``why`` (set key -> reason), each with a ``VERIFY_ATTRIBUTES_REFUSED``
    diagnostic saying why it was not run."""
    if not why:
        return
    per_shape = r.per_shape if r.version >= 19 else set()
    r.cases = [c for c in r.cases if not c.attrs or _attrs_key(c, per_shape) not in why]
    for k, reason in why.items():
        r.refused.append({"code": "VERIFY_ATTRIBUTES_REFUSED", "severity": "info",
                          "message": f"attribute values {k} were not run: {reason}"})


def _drop_reshaped_attributes(r: _Run, firsts: dict[str, Any], runs: dict[str, Any],
                              twins: dict[str, Any] | None = None) -> None:
    """(version 18) Attribute values whose golden outputs are not of the SPEC's output shapes are not run: a flipped
    bool may be a ``keepdim`` (the case would judge every kernel against another shape). Each dropped set gets a
    ``VERIFY_ATTRIBUTES_REFUSED`` diagnostic, as a set golden.py refuses does. (version 19) Nor those whose outputs
    differ in dtype from golden's at the SPEC's values on the same case (``twins``)."""
    reshaped: dict[str, str] = {}
    for k, c in firsts.items():
        run = runs.get(c.name)
        if run is None:
            continue
        twin = runs.get(twins[k].name) if twins and k in twins else None
        for t in r.spec.outputs:
            got = run.outputs.get(t.name)
            want = tuple(t.concrete_shape(c.dims))
            if got is not None and tuple(np.shape(got)) != want and r.version < 19:
                reshaped[k] = f"golden's {t.name} is {tuple(np.shape(got))}, the SPEC's {want}"
                break
            spec_out = None if twin is None else twin.outputs.get(t.name)
            if got is not None and spec_out is not None and np.asarray(got).dtype != np.asarray(spec_out).dtype:
                reshaped[k] = f"golden's {t.name} is {np.asarray(got).dtype}, at the SPEC's values " \
                              f"{np.asarray(spec_out).dtype}"
                break
    _not_run(r, reshaped)


def _step_call_plan(r: _Run) -> None:
    """The seeded order of wrapper calls over every case, with seeded repeats (the report lists SPEC cases first)."""
    from runtime.opdir._memory import case_bytes
    from runtime.opdir._unseen import attribute_repeat, call_plan, case_cap

    cap = case_cap(r.spec, [c for c in r.cases if not c.unseen], r.version)
    repeatable = [c.name for c in r.cases if case_bytes(r.spec, c) <= cap]
    r.call_plan = call_plan([c.name for c in r.cases], r.seed, repeats=2, repeatable=repeatable)
    if r.version >= 15:  # (red team s39) one attribute case called twice: state kept across calls with its values
        r.call_plan = attribute_repeat(r.call_plan, [c.name for c in r.cases if c.attrs and c.name in repeatable],
                                       r.seed)


def _step_hashes(r: _Run) -> None:
    """Plan the target (kind, module, wrapper, expected leaves) and hash every input file and tool."""
    input_names = [t.name for t in r.spec.inputs]
    output_names = [t.name for t in r.spec.outputs]
    try:
        r.plan = plan_target(r.op_path, r.target, r.spec.op_name, input_names, output_names, dict(r.spec.attrs))
        plan_error = ""
    except TargetError as exc:
        r.plan, plan_error = None, str(exc)
    r.files = _input_files(r.op_path, r.target, r.previous, r.plan.interfaces_path if r.plan else None)
    r.report.hashes = _hashes(r.files, r.settings.emulator)
    if r.plan is None:
        raise r.fail(plan_error, Verdict.FAIL_LINT)
    rep = r.report
    rep.kind, rep.module, rep.wrapper = r.plan.kind, r.plan.module, r.plan.wrapper  # type: ignore[assignment]
    rep.expected_leaves = list(r.plan.expected)


def _step_lint(r: _Run) -> None:
    """Lint + frozen modules; any blocking finding is FAIL_LINT and nothing runs."""
    assert r.plan is not None
    t = time.perf_counter()
    rep = r.report
    stage = r.settings.lint_stage if r.settings.lint_stage and r.plan.kind == "final" else r.plan.kind
    rep.lint = _run_lint(r.settings, r.target, stage, r.op_path, r.previous)
    already_reported = any(b.get("rule_id") == "PF05" for b in rep.lint.blocking)
    if r.previous is not None and not already_reported:  # lint PF05 reports the same regions when lint ran
        upto = (r.plan.module - 1) if r.plan.module is not None else 10_000
        rep.lint.frozen = frozen_violations(r.previous.read_text(encoding="utf-8"),
                                            r.target.read_text(encoding="utf-8"), upto)
    rep.durations["lint_s"] = round(time.perf_counter() - t, 4)
    if rep.lint.blocking or rep.lint.frozen:
        rep.verdict = Verdict.FAIL_LINT
        rep.reasons += [f"lint {b.get('rule_id')} {b.get('file')}:{b.get('line')}: {b.get('message')}"
                        for b in rep.lint.blocking] + rep.lint.frozen
        raise _Stop()


def _step_isolation(r: _Run) -> None:
    """Name the isolation level; ``require_sandbox`` refuses ``process-only`` before any candidate code runs."""
    level, note = isolation_level(r.settings.sandbox.isolation)
    r.report.sandbox.isolation = level
    r.report.sandbox.isolation_note = note
    if level == "process-only":
        log.info("verify: candidate isolation is process-only (%s)", note)
        if r.require_sandbox:
            r.report.sandbox.status = "refused"
            raise r.fail(f"require_sandbox: the OS sandbox is not available ({note}); refusing to run the candidate "
                         f"with process-only isolation")
    problem = _emulator_problem(r.settings.emulator)
    if problem:
        raise r.fail(problem)


def _per_call(r: _Run, by_name: dict[str, Any], empty: Any) -> list[Any]:
    """Per call of the plan, its case's entry of ``by_name`` (``empty`` for the others); [] when no case has one."""
    return [by_name.get(name, empty) for name in r.call_plan] if by_name else []


def _call_attrs(r: _Run) -> list[dict[str, Any]]:
    """Per call of the plan, the attributes its case passes at other values (`Case.attrs`); empty when none does."""
    return _per_call(r, {c.name: dict(c.attrs) for c in r.cases if c.attrs}, {})


def _call_alias(r: _Run) -> list[list[int]]:
    """Per call of the plan, ``[a, b, ...]``: the wrapper's inputs ``b, ...`` are its input ``a`` (`Case.alias`,
    positions among the wrapper's inputs); empty when no case passes one tensor for several inputs."""
    assert r.plan is not None
    params = list(r.plan.params)
    return _per_call(r, {c.name: [params.index(n) for n in c.alias] for c in r.cases
                         if c.alias and all(n in params for n in c.alias)}, [])


def _step_execute(r: _Run) -> None:
    """Golden in its own (trusted) process, candidate in the OS sandbox.

    When the inputs do not come from the golden's make_inputs and no STUB tensor is golden-fed, the two run
    concurrently: the candidate never sees golden data either way, and the input bytes are cross-checked.
    """
    from runtime.opdir import GoldenError, run_golden_cases

    assert r.plan is not None
    plan, settings, rep = r.plan, r.settings, r.report
    input_names = [t.name for t in r.spec.inputs]
    parallel = not getattr(r.op, "has_make_inputs", True) and not plan.stub_params
    box: dict[str, Any] = {}

    def golden_job() -> None:
        tg = time.perf_counter()
        try:
            box["runs"] = run_golden_cases(r.op, list(r.cases), timeout=settings.golden_timeout_s)
        except GoldenError as exc:
            box["error"] = f"golden.py failed: {exc}"
        except Exception as exc:  # noqa: BLE001 - infrastructure failure becomes ERROR, never a crash
            box["error"] = f"golden run failed: {type(exc).__name__}: {exc}"
        box["s"] = round(time.perf_counter() - tg, 4)

    modes = draw_torch_modes(r.seed, len(r.call_plan)) if plan.torch_io else []

    def candidate_job() -> None:
        try:
            r.run = run_candidate(r.target, plan.wrapper, r.candidate_inputs, policy=settings.sandbox,
                                  calling={"kwargs": {k: r.spec.attrs[k] for k in plan.attrs}, "torch": plan.torch_io,
                                           "emulator_options": {"compat": rep.pypto_target,
                                                                "npuarch": rep.npuarch},
                                           "layouts": draw_layouts(r.seed, len(r.call_plan)),
                                           "modes": modes,
                                           "weights": draw_weight_states(r.seed, modes),
                                           "scalars": draw_scalar_types(r.seed, len(r.call_plan)),
                                           "attrs": _call_attrs(r), "alias": _call_alias(r)},
                                  emulator=settings.emulator, plan=r.call_plan or None,
                                  device=settings.device and settings.emulator == "runtime.emulator",
                                  hash_seed=candidate_hash_seed(r.seed))
        except SandboxError as exc:
            box["sandbox"] = f"sandbox: {exc}"

    t = time.perf_counter()
    if parallel:
        pre = {c.name: [np.asarray(a) for a in r.op.make_inputs(c)] for c in r.cases}
        for c in r.cases:
            by_name = dict(zip(input_names, pre[c.name], strict=False))
            r.candidate_inputs.append((c.name, [np.asarray(by_name[p]) for p in plan.params]))
        worker = threading.Thread(target=golden_job, name="golden", daemon=True)
        worker.start()
        candidate_job()
        worker.join()
    else:
        golden_job()
    if "error" in box:
        raise r.fail(box["error"])
    if "sandbox" in box:
        raise r.fail(box["sandbox"])
    r.goldens = box["runs"]
    rep.durations["golden_s"] = box["s"]
    for i, c in enumerate(r.cases):
        g = r.goldens[c.name]
        by_name = dict(zip(input_names, g.inputs, strict=False))
        leaves: list[np.ndarray] = []
        for name in plan.expected:
            arr = g.intermediates.get(name) if plan.kind == "module" else None
            if arr is None:
                arr = g.outputs.get(name)
            if arr is None:
                raise r.fail(f"boundary tensor {name!r} was not captured from golden.py (named locals: "
                             f"{', '.join(sorted(g.intermediates)) or 'none'}); name it in golden() or fix "
                             f"module_interfaces.yaml")
            leaves.append(np.asarray(arr))
        r.expected[c.name] = leaves
        args: list[np.ndarray] = []
        for p in plan.params:
            src = by_name.get(p)
            if src is None:
                src = g.intermediates.get(p)
            if src is None:
                raise r.fail(f"STUB parameter {p!r} is not a golden intermediate")
            args.append(np.asarray(src))  # no copy: the sandbox seals its own copy into shared memory
        if parallel:
            if not all(_same_bytes(np.asarray(a), b) for a, b in zip(args, r.candidate_inputs[i][1], strict=True)):
                raise r.fail(f"case {c.name}: golden and candidate inputs differ (make_inputs is not deterministic)")
        else:
            r.candidate_inputs.append((c.name, args))
    for g in r.goldens.values():
        # nothing reads the golden's locals after this point (the leaves and STUB inputs above hold their own
        # references); they are every array-valued local of golden(), often as large as its inputs and outputs
        g.intermediates.clear()
    if r.run is None:
        t = time.perf_counter()
        candidate_job()
        if "sandbox" in box:
            raise r.fail(box["sandbox"])
    assert r.run is not None
    rep.durations["candidate_s"] = round(time.perf_counter() - t, 4)
    run = r.run
    rep.sandbox = SandboxSection(layers=run.layers, required=r.require_sandbox, status=run.status,
                                 reason=run.reason, denied=run.denied, stderr_tail=_clean_tail(run), pid=run.pid,
                                 isolation=run.isolation, isolation_note=run.isolation_note)
    if run.device_error:  # the device failed on its own (infrastructure): no verdict can rest on it
        raise r.fail(f"verifier could not run: the device process failed: {run.device_error[:500]}")


def _step_compare(r: _Run) -> None:
    """Compare every output leaf of every case with the golden (numbers only; cheats are the next step's)."""
    assert r.run is not None and r.plan is not None
    run, rep = r.run, r.report
    runs: list[RunOutput] = list(run.runs)
    if run.status in ("timeout", "killed", "crashed"):
        rep.reasons.append(f"candidate process: {run.reason}")
    elif run.status == "import_error":
        rep.reasons.append(run.reason)
    elif run.status == "sandbox_error":
        rep.reasons.append(f"sandbox: {run.reason}")
    counters: dict[str, Any] = {}
    diags: dict[tuple, dict[str, Any]] = {}
    primary: dict[str, RunOutput] = {}
    for one in runs:
        primary.setdefault(one.case, one)
    for c in r.cases:
        tol = r.spec.tolerance.get(c.dtype)
        atol, rtol = (tol.atol, tol.rtol) if tol is not None else (1e-3, 1e-3)
        cr = CaseReport(name=c.name, dims=dict(c.dims), dtype=c.dtype, seed=c.seed, band=c.band, tail=c.tail,
                        unseen=c.unseen, status="not_run", atol=atol, rtol=rtol,
                        golden_duration_s=round(float(r.goldens[c.name].duration_s), 4))
        rep.cases.append(cr)
        if c.name not in primary:
            if run.status == "ok":
                rep.reasons.append(f"case {c.name}: no result from the sandbox")
            if run.status == "import_error":
                cr.status = "fail_runtime"
                cr.error = _error_info(run.import_error)
            continue
        rec = primary[c.name].record
        cr.duration_s = round(float(rec.get("duration_s", 0.0)), 4)
        dev = rec.get("device")
        cr.kernel_calls = int((dev or {}).get("kernel_calls", 0) if "device" in rec else rec.get("kernel_calls", 0))
        cr.counters = rec.get("counters")
        cr.diagnostics = with_device_warnings(list(rec.get("diagnostics") or []), dev)
        _merge_counters(counters, cr.counters or {})
        for d in cr.diagnostics:
            diags.setdefault((d.get("code"), d.get("message"), d.get("file"), d.get("line")), d)
        if rec.get("error"):
            cr.status = "fail_runtime"
            cr.error = _error_info(rec["error"])
            where = f" at {cr.error.file}:{cr.error.line}" if cr.error and cr.error.file else ""
            code = f" {cr.error.code}" if cr.error and cr.error.code else ""
            rep.reasons.append(f"case {c.name}: {cr.error.type if cr.error else 'error'}{code}{where}: "
                               f"{(cr.error.message if cr.error else '')[:300]}")
            continue
        _compare_case(rep, cr, primary[c.name], r.expected[c.name], r.plan, r.settings, special=c.special,
                      ties_unspecified=r.spec.ties == "unspecified", tolerance=r.spec.tolerance)
    rep.counters = counters
    rep.diagnostics = [diags[k] for k in sorted(diags, key=lambda t: tuple(str(x) for x in t))] + r.refused
    for cr in rep.cases:  # the child names the candidate by its file name; report it by its op-dir path
        if cr.error is not None and cr.error.file == r.target.name:
            cr.error.file = r.rel_target
        for d in cr.diagnostics:
            if d.get("file") == r.target.name:
                d["file"] = r.rel_target
    rep.reasons = [x.replace(f" at {r.target.name}:", f" at {r.rel_target}:") for x in rep.reasons]


def _floating(arr: np.ndarray) -> bool:
    try:
        return arr.dtype.kind == "f" or is_float(name_of(arr.dtype))
    except ValueError:  # DTypeError: a dtype with no PTO Forge name is not a float leaf
        return False


def _judged(a: np.ndarray | None, b: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """For a case with special values (``Case.special``): the elements where the golden is NaN are not judged (both
    sides set to 0). A zero or constant row can leave the golden without an answer (``x / sum(x)``, a variance
    without ``eps``); that is the golden's limit, not the kernel's fault. An infinite golden is an answer and is
    judged (same-signed infinities compare equal). Ordinary cases compare every element (NaN anywhere fails)."""
    b = np.asarray(b)
    if a is None or not _floating(b) or not _floating(np.asarray(a)) or np.asarray(a).shape != b.shape:
        return a, b
    bad = np.isnan(b)  # NaN only: a golden +-inf is an answer (red team s31d: sqrt(x)/x's NaN at 0 passed for 1/sqrt)
    if not bad.any():
        return a, b
    a, b = np.array(a, copy=True), np.array(b, copy=True)
    a[bad], b[bad] = 0, 0
    return a, b


def tie_equivalent(leaves: list[LeafResult], golden: list[np.ndarray], outs: list[Any] | None = None, *,
                   rtol: float = 0.0) -> list[LeafResult]:
    """``leaves`` with a failing integer (index) leaf judged close where its ids differ only among tied values: for a
    SPEC with ``ties: unspecified`` (a top-k's ids and the values it picked), ids that differ where the picked values
    agree are a different choice among equal values, not an error (the gym's llada2_gate_select: its scores tie in
    the golden's bf16 and not in the kernel's fp32, and one id in 1,000 departs).

    An id leaf is forgiven only when a float leaf of its shape is close (the values picked are right) and every id
    that departs sits where the golden's value ties - with another value of its row (two tied values in other order)
    or with the row's last kept value (a tie at the cut, with a value left out) - and the kernel's ids of a row are
    distinct where the golden's are. Red team s31d: forgiving any id leaf beside a close value leaf let ids from an
    ascending argsort (every id wrong, the values right) pass. The counts stay in the leaf."""
    out = list(leaves)
    for j, (leaf, b) in enumerate(zip(leaves, golden, strict=False)):
        if leaf.all_close or leaf.error or not isinstance(b, np.ndarray) or b.dtype.kind not in "iu":
            continue
        a = outs[j] if outs is not None and j < len(outs) else None
        if not isinstance(a, np.ndarray) or a.shape != b.shape or b.ndim == 0 or b.shape[-1] == 0:
            continue
        for k, (other, g) in enumerate(zip(leaves, golden, strict=False)):
            if k == j or not other.all_close or not isinstance(g, np.ndarray) or not is_float_dtype(g.dtype) \
                    or g.shape != b.shape:
                continue
            if _ties_explain(np.asarray(a), b, np.asarray(g, dtype=np.float64), _spacing(g.dtype), rtol):
                out[j] = leaf.model_copy(update={"all_close": True})
                break
    return out


def _spacing(dtype: np.dtype) -> float:
    """Two units of relative rounding of a float dtype (ml_dtypes' bf16/fp8 included): how far apart two golden
    values may be and still be one value rounded twice (the gym's llada2_gate_select: its scores tie in bf16)."""
    return 2.0 * float(ml_dtypes.finfo(dtype).eps)


def _ties_explain(ids: np.ndarray, want: np.ndarray, values: np.ndarray, spacing: float, rtol: float) -> bool:
    """Every id of ``ids`` that departs from ``want`` is one of the golden's ids whose value ties with the value at
    its position - two tied values in another order - or, at a position whose value ties with the row's last
    value, an id the golden left out (a tie at the cut); and each row of ``ids`` is distinct where ``want``'s is.
    Tied = within ``rtol + spacing`` of each other, relatively, directly or through a chain of such values (the
    golden's values may drift along a run of near-equal probabilities) - never the absolute tolerance (red team
    s35: with a bf16 case's atol of 1e-2, every probability of a 256-expert softmax sat "tied" with its neighbours,
    and ids that were candidate positions, not experts, passed every ordinary row).

    Red team s39 (``fixture_s39/moe_tied_foreign_ids``): the departing id itself was not looked at, only the golden's
    value where it departed - a top-8 that sent back an expert that does not exist (the id negated) wherever two
    picked probabilities were within 0.2% passed every seed, about one id in six wrong. An id the golden left out
    is now a choice at the cut only.

    A tie at the cut cannot be seen (the value left out is not an output), and the last kept value always "ties"
    with itself: rows with an id the golden left out may be at most :data:`CUT_TIES` of the rows (at least one).
    Red team s35b: the 8th id taken one column off passed every row; a real tie at the cut is rare (the gym's
    llada2_gate_select: about one id in a thousand departs)."""
    n = want.shape[-1]
    ids2, want2, vals = ids.reshape(-1, n), want.reshape(-1, n), values.reshape(-1, n)
    at_cut = 0
    for r in np.flatnonzero((ids2 != want2).any(axis=1)):
        row = vals[r]
        if len(np.unique(want2[r])) == n and len(np.unique(ids2[r])) != n:
            return False  # the same id twice where the golden picks n different ones
        tol = (rtol + spacing) * np.abs(row)
        close = np.abs(row[:, None] - row[None, :]) <= tol[None, :]
        group = _tie_groups(close | close.T)
        where = {int(g): q for q, g in enumerate(want2[r])}
        cut = False
        for p in np.flatnonzero(ids2[r] != want2[r]):
            q = where.get(int(ids2[r, p]))
            if q is not None:
                if group[q] != group[p]:
                    return False  # one of the golden's ids, at a position whose value it does not tie with
            elif group[p] == group[n - 1]:
                cut = True  # an id the golden left out, where the value ties with the last kept one
            else:
                return False  # an id the golden left out, inside the row: not a tie at the cut
        at_cut += int(cut)
    return at_cut <= max(1, int(CUT_TIES * len(ids2)))


def _tie_groups(tied: np.ndarray) -> list[int]:
    """The connected component of each position of a symmetric "tied" matrix (positions of one row: a few)."""
    n = tied.shape[0]
    group = list(range(n))
    for p in range(n):
        for q in np.flatnonzero(tied[p]):
            a, b = group[p], group[int(q)]
            if a != b:
                group = [a if g == b else g for g in group]
    return group


CUT_TIES = 0.05
"""The share of rows `_ties_explain` lets a tie at the cut explain."""


def _leaf_tolerance(b: Any, cr: CaseReport, tolerance: Mapping[str, Any]) -> tuple[float, float]:
    """(atol, rtol) of one golden leaf: the case's, but for an integer or boolean leaf (ids, counts, masks) its own
    dtype's entry in the SPEC's tolerance table if it has one, else exact. Red team s35: an int32 leaf took the
    case's float tolerance, rtol 1e-5 of an id near 1e9 forgiving 10,000 (and rtol 1e-2 forgave id 201 for 200)."""
    if not isinstance(b, np.ndarray) or b.dtype.kind not in "iub":
        return cr.atol, cr.rtol
    try:
        tol = tolerance.get(name_of(b.dtype))
    except DTypeError:
        tol = None
    return (float(tol.atol), float(tol.rtol)) if tol is not None else (0.0, 0.0)


def _compare_case(report: VerifyReport, cr: CaseReport, r: RunOutput, golden: list[np.ndarray], plan: TargetPlan,
                  settings: VerifySettings, *, special: bool = False, ties_unspecified: bool = False,
                  tolerance: Mapping[str, Any] | None = None) -> None:
    rec = r.record
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
            atol, rtol = _leaf_tolerance(b, cr, tolerance or {})
            if special:
                a, b = _judged(a, b)
            res = compare_outputs(a, b, atol=atol, rtol=rtol, prefix=f"output[{j}]",
                                  max_outliers=settings.max_outliers)[0]
            if plan.kind == "final" and res.shape_match and a is not None and a.dtype != b.dtype:
                res = res.model_copy(update={"all_close": False,
                                             "error": f"dtype {res.actual_dtype}, expected {res.expected_dtype}"})
            leaves.append(res)
        cr.leaves = tie_equivalent(leaves, golden, outs, rtol=cr.rtol) if ties_unspecified \
            else leaves
    if all(leaf.all_close for leaf in cr.leaves):
        cr.status = "pass"
        return
    cr.status = "fail_numeric"
    for leaf in cr.leaves:
        if not leaf.all_close:
            j = leaf.path[len("output["):-1] if leaf.path.startswith("output[") else ""
            label = plan.expected[int(j)] if j.isdigit() and int(j) < len(plan.expected) else leaf.path
            # reasons reach agents (feedback, MEMORY.md): coarse, so CPU last-bit differences cannot move
            # them; the exact counts are in the leaf for the audit
            detail = leaf.error or (f"{coarse_share(leaf.out_of_tolerance_ratio)} of {leaf.total_elements} "
                                    f"elements out of tolerance, max_diff {coarse(leaf.max_diff)}")
            report.reasons.append(f"case {cr.name}: leaf {leaf.path} ({label}): {detail}")


def _step_anti_gaming(r: _Run) -> None:
    """Run every named anti-gaming check (``_checks.ANTI_GAMING_CHECKS``); each finding is a cheat."""
    assert r.run is not None and r.plan is not None
    ev = Evidence(run=r.run, case_names=[c.name for c in r.cases], given=dict(r.candidate_inputs),
                  device=any("device" in one.record for one in r.run.runs),
                  shapes={c.name: (tuple(sorted(c.dims.items())), c.dtype, tuple(c.alias), *sorted(
                      (k, tuple(v) if isinstance(v, list) else v) for k, v in c.attrs.items())) for c in r.cases},
                  expected=r.expected, params=list(r.plan.params), leaves=list(r.plan.expected), files=r.files,
                  unseen=frozenset(c.name for c in r.cases if c.unseen),
                  file_hashes=r.report.hashes, hash_file=_sha256,
                  failed=frozenset(c.name for c in r.report.cases if c.status == "fail_numeric"))
    r.report.cheats.extend(run_checks(ev))
    r.report.reasons.extend(unrepeatable_failures(ev))


def verify(
    op_dir: str | Path,
    target: str | Path,
    *,
    previous_stage: str | Path | None = None,
    case: str | None = None,
    require_sandbox: bool = False,
    reports_dir: str | Path | None = None,
    settings: VerifySettings | None = None,
    unseen_seed: int | None = None,
) -> VerifyReport:
    """Verify ``target`` (a stage file or ``<op>_impl.py``) of the operator directory ``op_dir``.

    Args:
        require_sandbox: refuse (ERROR, nothing runs) when this machine offers only ``process-only`` isolation.
        unseen_seed: seed of the unseen cases and of the call order (``runtime.opdir._unseen``); None draws a
            fresh one (recorded in the report). A pipeline run passes the seed it keeps in its state, so that a
            replay verifies on the same cases.

    Returns:
        The :class:`VerifyReport`; every failure of the candidate or of the infrastructure is a verdict.

    Raises:
        VerifyUsageError: ``op_dir``/``target``/``previous_stage`` do not exist, the target is outside the
            op directory, or ``case`` names no case.
    """
    t0 = time.perf_counter()
    settings = settings or VerifySettings()
    op_path, tgt, prev = _step_paths(op_dir, target, previous_stage)
    rel_target = _rel(tgt, op_path)
    if unseen_seed is None:
        from runtime.opdir._unseen import draw_seed

        unseen_seed = draw_seed()
    if isinstance(unseen_seed, bool) or not isinstance(unseen_seed, int) or not 0 <= unseen_seed < 1 << 63:
        raise VerifyUsageError(f"unseen seed must be an integer in [0, 2**63), got {unseen_seed!r}")
    r = _Run(report=VerifyReport(target=rel_target, verdict=Verdict.ERROR, unseen_seed=unseen_seed), settings=settings,
             op_path=op_path, target=tgt, previous=prev, rel_target=rel_target, require_sandbox=require_sandbox)
    r.report.sandbox.required = require_sandbox
    try:
        _step_load(r)
        _step_cases(r, case)
        _step_hashes(r)
        _step_attribute_cases(r)
        _step_call_plan(r)
        _step_lint(r)
        _step_isolation(r)
        _step_execute(r)
        _step_compare(r)
        _step_anti_gaming(r)
        _step_verdict(r.report)
    except _Stop:
        pass
    except VerifyUsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - the authority never crashes: an internal error is an ERROR report
        log.exception("verify %s: internal error", rel_target)
        r.report.verdict = Verdict.ERROR
        r.report.reasons.append(f"verifier could not run: internal error {type(exc).__name__}: {str(exc)[:300]}")
    try:
        return _finish(r.report, t0, reports_dir)
    except Exception as exc:  # noqa: BLE001 - writing the report failed: a minimal ERROR report, never a traceback
        if isinstance(exc, OSError):  # a full disk, a read-only dir: the user's to fix, not a bug to trace back
            log.error("verify %s: the report could not be written: %s", rel_target, exc)
        else:
            log.exception("verify %s: the report could not be written", rel_target)
        last = VerifyReport(target=rel_target, verdict=Verdict.ERROR, unseen_seed=unseen_seed,
                            reasons=[f"verifier could not run: the report could not be written "
                                     f"({type(exc).__name__}: {str(exc).encode('ascii', 'replace').decode()[:300]})"])
        try:
            return _finish(last, t0, reports_dir)
        except OSError:
            return _finish(last, t0, None)


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
    def text(key: str, cap: int) -> str | None:  # every field is the candidate's text: bounded (attack A8)
        val = d.get(key)
        return val[:cap] if isinstance(val, str) else None

    return ErrorInfo(type=str(d.get("type", "Error"))[:200], message=str(d.get("message", ""))[:2000],
                     code=text("code", 80), file=text("file", 500), line=line if isinstance(line, int) else None,
                     op=text("op", 200))


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


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


def _divergent_codes(target: str | None) -> dict[str, str]:
    """Warning code -> what the device does, for the warnings that say the device's result differs from the
    emulator's under ``target`` (``runtime.emulator._errors``: every version's list, plus 0.2.0's own when the kernel
    targets 0.2.0; docs/emulator-fidelity.md)."""
    from runtime.emulator import _errors

    codes = dict(_errors.DEVICE_DIVERGENT)
    if target == "0.2.0":
        codes.update(_errors.DEVICE_DIVERGENT_020)
    return codes


def with_device_warnings(diagnostics: list[dict[str, Any]], device: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The candidate child's diagnostics plus the warnings the device itself recorded for the case's kernels.

    Why: the child's diagnostics come from the candidate's process (its tracer); the device's come from the trusted
    device process, which derives the divergence codes it can see from the executed program alone
    (`runtime.emulator.device._divergence`). A candidate that removed a warning from its own session still has
    the device's; one the child reported too is listed once (same code, message, file and line)."""
    seen = {(d.get("code"), d.get("message"), d.get("file"), d.get("line")) for d in diagnostics}
    for k in (device or {}).get("kernels") or []:
        for w in k.get("warnings") or []:
            # the program names the kernel file by its path in the sandbox's random work directory, where the
            # candidate's files lie side by side; the child reports them by file name (`_runner._local_name`)
            file = os.path.basename(w["file"]) if isinstance(w.get("file"), str) else w.get("file")
            key = (w.get("code"), w.get("message"), file, w.get("line"))
            if key not in seen:
                seen.add(key)
                diagnostics.append({"severity": "warning", "code": w.get("code"), "message": w.get("message"),
                                    "file": file, "line": w.get("line"), "op": w.get("op")})
    return diagnostics


def device_divergence(report: VerifyReport) -> list[str]:
    """One reason per (code, file, line, op) of a device-divergence warning among the report's diagnostics.

    Why (red team s17, c11): on a sum over a BF16 tile (``EMU_SUM_FP32``) the emulator warns that the device
    computes something else, then computes the mathematically right answer; the comparison passed on numbers no
    device would produce. ``pypto.sigmoid`` of a partial tile (``EMU_SIGMOID_VALID``, c16) counts only for a kernel
    targeting 0.2.0: it is that toolchain's bug, and the gym's vendor-run sigmoid kernel does it.
    """
    codes = _divergent_codes(report.pypto_target)
    out: list[str] = []
    for d in report.diagnostics:
        code = d.get("code")
        if code not in codes:
            continue
        where = f"{d.get('file')}:{d.get('line')}" if d.get("file") else "an unknown line"
        op = f"pypto.{d.get('op')}" if d.get("op") else "a kernel construct"
        out.append(f"device divergence {code}: {op} at {where}: {codes[code]}; the emulator computed the "
                   f"mathematically right result, so the numbers compared here are not the device's")
    return list(dict.fromkeys(out))


def _step_verdict(report: VerifyReport) -> None:
    """The verdict by precedence (module docstring); cheats first among the candidate's failures."""
    cheats = list(dict.fromkeys(report.cheats))
    report.cheats = cheats
    runtime_failed = report.sandbox.status in ("timeout", "killed", "crashed", "import_error") or any(
        c.status == "fail_runtime" for c in report.cases)
    numeric_failed = any(c.status == "fail_numeric" for c in report.cases)
    not_run = any(c.status == "not_run" for c in report.cases)
    if report.sandbox.status == "sandbox_error":
        report.verdict = Verdict.ERROR
    elif cheats:
        report.verdict = Verdict.FAIL_CHEAT
        report.reasons = cheats + report.reasons
    elif runtime_failed:
        report.verdict = Verdict.FAIL_RUNTIME
    elif numeric_failed:
        report.verdict = Verdict.FAIL_NUMERIC
    elif diverged := device_divergence(report):
        # only here: a kernel failing already keeps its report as it was (the diagnostics are listed in it), so
        # the shipped traces' reports of failing attempts replay unchanged
        report.verdict = Verdict.FAIL_NUMERIC
        report.reasons.extend(diverged)
    elif not_run:
        report.verdict = Verdict.ERROR
        report.reasons.append("not every case produced a result")
    elif report.lint is None or not report.lint.available:
        report.verdict = Verdict.ERROR
        report.reasons.append(report.lint.message if report.lint else "lint did not run; the verdict cannot be PASS")
    else:
        report.verdict = Verdict.PASS
