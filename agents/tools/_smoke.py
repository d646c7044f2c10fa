"""Smoke-run a draft stage file on a few small cases, inside the verifier's OS sandbox.

``smoke(op_dir, draft, wrapper)`` returns ``{"status": "ok"|"error", "wrapper": ..., "runs": [{"case", "dims",
"dtype", "status", "outputs": [{"shape", "dtype"}], "diagnostics": [...], "error", "where"}]}``. The trusted
parts (loading the op dir, building inputs, finding the wrapper by parsing the draft) run here; the draft itself
is only ever imported inside :func:`runtime.sandbox.run_candidate` (the same OS sandbox as verification). It
never runs golden.py's reference and never shows tensor values: the agent learns whether the draft runs and what
it returns, not whether it is right (that is the verifier's job).
``python -m agents.tools._smoke --op-dir OP --file DRAFT.py --wrapper NAME`` prints the same as ONE JSON line.
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import sys
from pathlib import Path
from typing import Any

from runtime import pyast
from runtime.opdir import load_op_dir
from runtime.sandbox import SandboxError, SandboxPolicy, run_candidate

SMOKE_TIMEOUT_S = 60.0


def _describe(outputs: list[Any], kinds: list[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, kind in enumerate(kinds):
        value = outputs[i] if i < len(outputs) else None
        if kind != "ndarray" or value is None:
            out.append({"type": kind})
        else:
            out.append({"shape": [int(s) for s in value.shape], "dtype": str(value.dtype)})
    return out


def _where(error: dict[str, Any], lines: list[str], draft: Path) -> dict[str, Any]:
    line = error.get("line")
    if isinstance(line, int) and error.get("file") in (draft.name, None) and 1 <= line <= len(lines):
        return {"line": line, "code": lines[line - 1].strip()}
    return {}


def _signature(source: str, wrapper_name: str) -> tuple[str, list[str] | None, list[str], str]:
    """(wrapper name, its parameters or None when not a plain top-level def, all *_wrapper names, syntax error)."""
    try:
        tree = pyast.parse(source)
    except SyntaxError as exc:
        return wrapper_name, None, [], f"SyntaxError: {exc.msg} (line {exc.lineno})"
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    wrappers = sorted(n for n in defs if n.endswith("_wrapper"))
    if not wrapper_name and len(wrappers) == 1:  # e.g. the debugger: use the file's only *_wrapper
        wrapper_name = wrappers[0]
    node = defs.get(wrapper_name)
    params = [a.arg for a in node.args.posonlyargs + node.args.args] if node is not None else None
    return wrapper_name, params, wrappers, ""


def smoke(op_dir: Path, draft: Path, wrapper_name: str, *, emulator: str = "runtime.emulator",
          timeout: float = SMOKE_TIMEOUT_S) -> dict[str, Any]:
    """Run the draft's wrapper on up to three small cases (per dtype the smallest tail case) in the sandbox."""
    op = load_op_dir(op_dir)
    cases = op.cases()
    if not cases:
        return {"status": "error", "error": "SPEC.md defines no cases"}
    smallest: dict[str, Any] = {}
    for c in sorted(cases, key=lambda c: (not getattr(c, "tail", False),
                                          math.prod(c.dims.values()) if c.dims else 0, c.name)):
        smallest.setdefault(c.dtype, c)
    picked = list(smallest.values())[:3]
    source = Path(draft).read_text(encoding="utf-8")
    lines = source.splitlines()
    wrapper_name, params, wrappers, syntax = _signature(source, wrapper_name)
    if syntax:
        return {"status": "error", "error": f"import of the draft failed: {syntax}"}
    if params is None:
        if not wrapper_name or wrapper_name not in source:
            return {"status": "error", "error": f"no function {wrapper_name!r} in the draft; wrappers found: {wrappers}"}
        params = [t.name for t in op.spec.inputs]
    names = [t.name for t in op.spec.inputs]
    unknown = [p for p in params if p not in names]
    if unknown:
        return {"status": "error", "wrapper": wrapper_name,
                "error": f"wrapper parameters {unknown} are not SPEC inputs {names}"}
    batch = []
    for c in picked:
        by_name = dict(zip(names, op.make_inputs(c), strict=False))
        batch.append((c.name, [by_name[p] for p in params]))
    policy = SandboxPolicy(wall_timeout_s=timeout, cpu_timeout_s=int(timeout))
    try:
        run = run_candidate(Path(draft), wrapper_name, batch, policy=policy, emulator=emulator, repeat_first=False)
    except SandboxError as exc:
        return {"status": "error", "error": f"the sandbox could not start: {exc}"}
    if run.status == "import_error":
        err = run.import_error or {}
        return {"status": "error", "error": f"import of the draft failed: {err.get('type')}: "
                                            f"{str(err.get('message', ''))[:800]}", "where": _where(err, lines, draft)}
    if run.status == "timeout":
        return {"status": "error", "error": f"TIMEOUT after {timeout:.0f}s (infinite loop or task explosion?)"}
    results: list[dict[str, Any]] = []
    for c, r in zip(picked, run.runs, strict=False):
        base: dict[str, Any] = {"case": c.name, "dims": c.dims, "dtype": c.dtype}
        err = r.record.get("error")
        if err:
            results.append({**base, "status": "error", "error": f"{err.get('type')}: {str(err.get('message'))[:800]}",
                            "where": _where(err, lines, draft),
                            "diagnostic": {k: err[k] for k in ("code", "op", "line") if k in err} or None})
        else:
            results.append({**base, "status": "ok",
                            "outputs": _describe(r.outputs, list(r.record.get("output_kinds") or [])),
                            "diagnostics": list(r.record.get("diagnostics") or [])})
    if run.status != "ok" or len(results) < len(picked):
        return {"status": "error", "wrapper": wrapper_name, "runs": results,
                "error": f"the draft did not finish: {run.reason or run.status}"}
    status = "ok" if all(r["status"] == "ok" for r in results) else "error"
    return {"status": status, "wrapper": wrapper_name, "runs": results}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.tools._smoke")
    parser.add_argument("--op-dir", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--wrapper", default="")
    parser.add_argument("--ulp-noise", type=int, default=None, help=argparse.SUPPRESS)  # runtime.testmodes
    args = parser.parse_args(argv)
    if args.ulp_noise is not None:
        from runtime import testmodes

        testmodes.activate_in_child(args.ulp_noise)
    try:
        report = smoke(Path(args.op_dir), Path(args.file), args.wrapper)
    except Exception as exc:  # the JSON line is the only contract with the parent
        report = {"status": "error", "error": f"smoke runner: {type(exc).__name__}: {str(exc)[:800]}"}
    sys.stdout.write(json.dumps(report, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
