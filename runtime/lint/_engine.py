"""The engine: classify each file, parse it once, run the checks that apply to the stage, collect findings.

The linted file is only read and parsed (``ast``), never imported or executed. A check that crashes on a
weird input fails closed: the rule reports FAIL ("could not be checked") rather than silently passing.
"""

from __future__ import annotations

import ctypes
import logging
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from runtime.lint import (  # noqa: F401  (import registers the checks)
    _rules_api,
    _rules_body,
    _rules_crossfile,
    _rules_design,
    _rules_entry,
    _rules_frozen,
    _rules_host,
    _rules_loops,
    _rules_memory,
    _rules_security,
    _rules_state,
    _rules_text,
    _rules_tiling,
    _rules_writeback,
)
from runtime.lint._encoding import bytes_problem, nul_problem
from runtime.lint._model import STAGES, Finding, LintUsageError
from runtime.lint._opdir import OpContext, parse_stage_name
from runtime.lint._registry import CHECKS, FileKind, Hit, LintContext, Skip
from runtime.lint._rules_loops import declared_tuned
from runtime.lint._source import parse_file
from runtime.lint._table import RULES

__all__ = ["BUDGET_S", "LintTimeout", "classify", "encoding_problem", "infer_stage", "lint_paths", "lint_source"]

log = logging.getLogger(__name__)

MAX_BYTES = 4_000_000
BUDGET_S = 30.0
"""Wall-clock seconds one file may take to lint; past it the file gets a PF00 FAIL ("did not finish")."""
WORKFLOW_STYLE = frozenset({"OL02", "OL05", "OL06", "OL23", "OL25", "OL29", "OL45", "OL46", "OL47", "OL48", "OL49",
                            "OL51", "OL57", "OL61", "OL62"})
"""The workflow's style rules: how PTO Forge's agents must write a kernel (structure, annotations, host code),
not whether it is legal PyPTO (OL55, the emulator), safe (PFxx) or right (the verifier). Imported code declared
tuned (SPEC.md ``imported: {tuned: true}``, written by the gym import) was not written that way: there they warn."""
_DEFAULT_STATUS = {"S0": "FAIL", "S1": "FAIL", "S2": "WARN", "S3": "INFO"}
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
"""PEP 263: the coding declaration Python honours on line 1 or 2 of a source file."""
_UTF8 = {"utf-8", "utf8", "utf_8", "u8", "utf", "cp65001", "utf-8-sig"}
_T = TypeVar("_T")


class LintTimeout(BaseException):  # noqa: N818 - BaseException: no `except Exception` in a rule can swallow it
    """Raised inside the lint worker thread when the time budget is spent."""


def _with_budget(fn: Callable[[], _T], budget_s: float) -> tuple[bool, _T | None]:
    """Run ``fn`` in a worker thread; past ``budget_s`` stop it with an asynchronous :class:`LintTimeout`.

    Why a thread and not a subprocess: importing the lint package costs about a second per process, which
    verify would pay on every run. The rules are Python code, so an asynchronous exception (raised at the next
    bytecode boundary) stops any of them; ``ast.parse`` is C but bounded by :data:`MAX_BYTES`.
    Returns ``(finished, result)``.
    """
    box: dict[str, object] = {}

    def work() -> None:
        try:
            box["result"] = fn()
        except LintTimeout:
            box["timeout"] = True
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=work, name="lint", daemon=True)
    worker.start()
    worker.join(budget_s)
    while worker.is_alive():
        tid = worker.ident
        if tid is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), ctypes.py_object(LintTimeout))
        worker.join(0.05)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    if "result" not in box:
        return False, None
    return True, box["result"]  # type: ignore[return-value]


def encoding_problem(source: str) -> str:
    """Why Python would not run ``source`` as the UTF-8 text lint reads ("" when it would).

    A coding declaration other than UTF-8 makes Python decode the same bytes into other text (the candidate
    shows lint an honest kernel and runs hidden code); the sandbox runner compiles the UTF-8 text and ignores
    cookies, but lint refuses them anyway so that what is reviewed is what any Python would run.
    """
    text = source[1:] if source.startswith("\ufeff") else source
    for line in text.splitlines()[:2]:
        m = _COOKIE.match(line)
        if m:
            enc = m.group(1).lower().replace("_", "-")
            if enc not in _UTF8 and enc.replace("-", "_") not in _UTF8:
                return f"coding declaration `{m.group(1)}`: kernel files must be UTF-8 (Python would decode this " \
                       f"file into other text than lint reads)"
            break
        if line.strip() and not line.lstrip().startswith("#"):
            break  # a cookie counts only on line 1, or line 2 after a comment line
    return ""


def classify(filename: str) -> FileKind:
    """File kind from its name; raises LintUsageError for files the lint has no rules for."""
    name = Path(filename).name
    low = name.lower()
    if low == "design.md":
        return "design"
    if low == "memory.md":
        return "memory"
    if low.endswith((".yaml", ".yml")):
        return "interfaces"
    if low == "golden.py" or low.endswith("_golden.py"):
        return "golden"
    if low.endswith(".py"):
        return "kernel"
    raise LintUsageError(
        f"{filename}: cannot lint this kind of file (expected a kernel .py, golden.py, DESIGN.md, "
        "module_interfaces.yaml or MEMORY.md)"
    )


def infer_stage(filename: str) -> str:
    """The stage a file belongs to when the caller did not say (CLI ``--stage auto``)."""
    kind = classify(filename)
    if kind in ("design", "interfaces", "golden"):
        return "design"
    if kind == "memory":
        return "final"
    return "module" if parse_stage_name(filename).kind == "stage" else "final"


def _finding(rule_id: str, hit: Hit, display: str) -> Finding:
    info = RULES[rule_id]
    status = hit.status or _DEFAULT_STATUS[info.severity]
    return Finding(rule_id=rule_id, severity=info.severity, status=status, message=hit.message,  # type: ignore[arg-type]
                   file=hit.file or display, line=hit.line, col=hit.col, fix=hit.fix or info.fix, title=info.title)


def _run_checks(ctx: LintContext, include_passes: bool) -> list[Finding]:
    findings: list[Finding] = []
    by_rule: dict[str, list[Finding]] = {}
    ran: set[str] = set()
    rules_stage = "final" if ctx.stage == "performance" else ctx.stage  # a perf variant is a final kernel
    for chk in CHECKS:
        if ctx.kind not in chk.kinds or rules_stage not in RULES[chk.rule_id].stages:
            continue
        ran.add(chk.rule_id)
        try:
            hits: Iterable[Hit] = list(chk.fn(ctx))
        except Skip as skip:
            if include_passes:
                findings.append(Finding(rule_id=chk.rule_id, severity=RULES[chk.rule_id].severity, status="SKIP",
                                        message=str(skip), file=ctx.display, title=RULES[chk.rule_id].title))
            by_rule.setdefault(chk.rule_id, [])
            continue
        except Exception as exc:  # fail closed on a crash inside a check
            log.exception("lint check %s crashed on %s", chk.rule_id, ctx.display)
            hits = [Hit(f"could not be checked (internal lint error: {type(exc).__name__}: {exc})", status="FAIL")]
        got = [_finding(chk.rule_id, h, ctx.display) for h in hits]
        if chk.rule_id in WORKFLOW_STYLE and declared_tuned(ctx):
            got = [f.model_copy(update={"status": "WARN", "message": f"{f.message} (a workflow style rule: not "
                                        "enforced on imported code declared tuned)"}) if f.status == "FAIL" else f
                   for f in got]
        by_rule.setdefault(chk.rule_id, []).extend(got)
        findings.extend(got)
    if include_passes:
        for rid in sorted(ran):
            if not by_rule.get(rid) and not any(f.rule_id == rid and f.status == "SKIP" for f in findings):
                findings.append(Finding(rule_id=rid, severity=RULES[rid].severity, status="PASS", message="ok",
                                        file=ctx.display, title=RULES[rid].title))
    return findings


def lint_source(source: str, filename: str, *, stage: str = "module", op_dir: Path | str | None = None,
                previous_stage: Path | str | None = None, kind: FileKind | None = None,
                include_passes: bool = False, budget_s: float = BUDGET_S) -> list[Finding]:
    """Lint one file's text. ``filename`` decides the file kind (kernel, golden, DESIGN.md ...) and is shown
    in findings; nothing is read from it. Cross-file rules read ``op_dir`` when given.

    Raises:
        LintUsageError: unknown stage, unknown file kind, or op_dir/previous_stage that is not there.
    """
    if stage not in STAGES:
        raise LintUsageError(f"unknown stage {stage!r}; use one of: {', '.join(STAGES)}")
    kind = kind or classify(filename)
    op = None
    if op_dir is not None:
        root = Path(op_dir)
        if not root.is_dir():
            raise LintUsageError(f"--op-dir {op_dir}: not a directory")
        op = OpContext(root)
    prev = Path(previous_stage) if previous_stage is not None else None
    if prev is not None and not prev.is_file():
        raise LintUsageError(f"--previous-stage {previous_stage}: no such file")
    ctx = LintContext(display=filename, source=source, kind=kind, stage=stage, op=op, previous_stage=prev)
    if len(source) > MAX_BYTES:
        return [_finding("PF00", Hit(f"file too large to lint ({len(source)} bytes > {MAX_BYTES})"), filename)]
    if kind in ("kernel", "golden"):
        bad = encoding_problem(source)
        if bad:
            return [_finding("PF00", Hit(bad, 1, fix="delete the coding declaration and save the file as UTF-8"),
                             filename)]
        nul = nul_problem(source)  # UTF-16 without a byte-order mark was "syntax error: ... null bytes" (UX s49)
        if nul is not None:
            return [_finding("PF00", nul, filename)]
        if source.startswith("\ufeff"):  # Python drops a UTF-8 byte-order mark before parsing; so does lint
            source = source[1:]
            ctx.source = source

    def run() -> list[Finding]:
        if kind in ("kernel", "golden"):
            try:
                ctx.pf = parse_file(filename, source)
            except SyntaxError as exc:
                return [_finding("PF00", Hit(f"syntax error: {exc.msg}", exc.lineno or 0, exc.offset or 0), filename)]
            except (ValueError, RecursionError, MemoryError) as exc:
                return [_finding("PF00", Hit(f"cannot parse: {type(exc).__name__}: {exc}"), filename)]
        return _dedupe(_run_checks(ctx, include_passes))

    finished, found = _with_budget(run, budget_s)
    if not finished or found is None:
        return [_finding("PF00", Hit(f"lint did not finish within its time budget of {budget_s:g} s; simplify the "
                                     f"file (a kernel file is small)"), filename)]
    return found


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple] = set()
    out = []
    for f in findings:
        key = (f.rule_id, f.file, f.line, f.col, f.status, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    out.sort(key=lambda f: (f.file, f.line, f.col, f.rule_id))
    return out


def _infer_op_dir(path: Path) -> Path | None:
    for cand in (path.parent, path.parent.parent):
        if any((cand / n).is_file() for n in ("SPEC.md", "module_interfaces.yaml", "DESIGN.md")):
            return cand
    return None


def _expand_dir(root: Path, stage: str) -> list[Path]:
    op = OpContext(root)
    if stage == "design":
        return [root / n for n in ("DESIGN.md", "module_interfaces.yaml", "golden.py") if (root / n).is_file()]
    if stage == "module":
        files = sorted((root / "modules").glob("*_module*_impl.py"))
        if not files:
            raise LintUsageError(f"{root}: no modules/<op>_module<sfx>_impl.py stage files to lint")
        return files
    name = f"{op.op_name}_impl.py" if op.op_name else None  # final and performance: the op's kernel file
    if name and (root / name).is_file():
        return [root / name]
    files = sorted(root.glob("*_impl.py"))
    if not files:
        raise LintUsageError(f"{root}: no <op>_impl.py to lint at the final stage")
    return files


def _expand_all(root: Path) -> list[Path]:
    """Every lintable file of an op directory, for per-file stage inference."""
    files = [root / n for n in ("DESIGN.md", "module_interfaces.yaml", "golden.py") if (root / n).is_file()]
    files += sorted((root / "modules").glob("*_module*_impl.py")) + sorted(root.glob("*_impl.py"))
    if not files:
        raise LintUsageError(f"{root}: nothing to lint (no DESIGN.md, module_interfaces.yaml, golden.py or *_impl.py)")
    return files


def lint_paths(paths: Sequence[Path | str] | Path | str, *, stage: str = "module",
               op_dir: Path | str | None = None, previous_stage: Path | str | None = None,
               include_passes: bool = False, auto_stage: bool = False) -> list[Finding]:
    """Lint files (or operator directories) for a stage; see :func:`lint_source`.

    A directory stands for the files of that stage inside it (design: DESIGN.md, module_interfaces.yaml,
    golden.py; module: ``modules/*_impl.py``; final: ``<op>_impl.py``) and is also the op directory when
    ``op_dir`` is not given. For a file, the op directory is inferred from SPEC.md / DESIGN.md /
    module_interfaces.yaml next to it (or one level up for ``modules/``). ``auto_stage`` picks the stage per
    file from its name (what the CLI does by default).

    Raises:
        LintUsageError: a path that does not exist, an unknown stage or file kind.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    if not paths:
        raise LintUsageError("no paths given")
    if stage not in STAGES:
        raise LintUsageError(f"unknown stage {stage!r}; use one of: {', '.join(STAGES)}")
    findings: list[Finding] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise LintUsageError(f"{raw}: no such file or directory")
        if path.is_dir():
            this_op = Path(op_dir) if op_dir is not None else path
            if auto_stage:
                files = _expand_all(path)
            else:
                if stage == "design" and not (path / "DESIGN.md").is_file():
                    findings.append(_finding("OL12", Hit("DESIGN.md is missing"), str(path / "DESIGN.md")))
                files = _expand_dir(path, stage)
        else:
            this_op = Path(op_dir) if op_dir is not None else _infer_op_dir(path)
            files = [path]
        for file in files:
            file_stage = infer_stage(str(file)) if auto_stage else stage
            try:
                raw = file.read_bytes()
                undecodable = bytes_problem(raw)  # the encoding the file is in and how to re-save it (UX s49)
                if undecodable is not None:
                    findings.append(_finding("PF00", undecodable, str(file)))
                    continue
                source = raw.decode("utf-8")
            except OSError as exc:
                raise LintUsageError(f"{file}: cannot read ({exc.strerror})") from None
            findings += lint_source(source, str(file), stage=file_stage, op_dir=this_op,
                                    previous_stage=previous_stage, include_passes=include_passes)
    return _dedupe(findings)


def blocking(findings: Iterable[Finding]) -> list[Finding]:
    """The findings that block a gate: S0/S1 with status FAIL."""
    return [f for f in findings if f.is_blocking]
