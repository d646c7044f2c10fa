"""Smoke-run a draft stage file on one small case in the emulator (run as a child process).

``python -m agents.tools._smoke --op-dir OP --file DRAFT.py --wrapper NAME`` prints ONE JSON line:
``{"status": "ok"|"error", "case": ..., "outputs": [{"shape", "dtype"}], "diagnostics": [...], "error": ...}``.
It never runs golden.py's reference and never prints tensor values: the agent learns whether the draft
runs and what it returns, not whether it is right (that is the verifier's job).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import math
import sys
import traceback
from pathlib import Path
from typing import Any

import runtime.emulator as emu
from runtime.opdir import load_op_dir


def _describe(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, tuple | list):
        return [d for v in value for d in _describe(v)]
    if isinstance(value, dict):
        return [d for v in value.values() for d in _describe(v)]
    shape = getattr(value, "shape", None)
    if shape is None:
        return [{"type": type(value).__name__}]
    return [{"shape": [int(s) for s in shape], "dtype": str(getattr(value, "dtype", "?"))}]


def _error_location(exc: BaseException, draft: Path) -> dict[str, Any]:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename).name == draft.name:
            return {"line": frame.lineno, "code": (frame.line or "").strip()}
    return {}


def smoke(op_dir: Path, draft: Path, wrapper_name: str) -> dict[str, Any]:
    op = load_op_dir(op_dir)
    cases = op.cases()
    if not cases:
        return {"status": "error", "error": "SPEC.md defines no cases"}
    # per dtype the smallest tail case (tails are where drafts break), else the smallest case
    smallest: dict[str, Any] = {}
    for c in sorted(cases, key=lambda c: (not getattr(c, "tail", False),
                                          math.prod(c.dims.values()) if c.dims else 0, c.name)):
        smallest.setdefault(c.dtype, c)
    picked = list(smallest.values())[:3]
    emu.install()
    spec = importlib.util.spec_from_file_location(draft.stem, draft)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        return {"status": "error", "error": f"import of the draft failed: {type(exc).__name__}: {str(exc)[:800]}",
                "where": _error_location(exc, draft)}
    if not wrapper_name:  # e.g. the debugger: use the file's only *_wrapper
        candidates = [n for n in dir(module) if n.endswith("_wrapper") and callable(getattr(module, n))]
        wrapper_name = candidates[0] if len(candidates) == 1 else ""
    wrapper = getattr(module, wrapper_name, None) if wrapper_name else None
    if wrapper is None:
        names = [n for n in dir(module) if n.endswith("_wrapper")]
        return {"status": "error", "error": f"no function {wrapper_name!r} in the draft; wrappers found: {names}"}
    runs = [_run_case(emu, op, case, wrapper, draft) for case in picked]
    status = "ok" if all(r["status"] == "ok" for r in runs) else "error"
    return {"status": status, "wrapper": wrapper_name, "runs": runs}


def _run_case(emu: Any, op: Any, case: Any, wrapper: Any, draft: Path) -> dict[str, Any]:
    result: dict[str, Any] = {"case": case.name, "dims": case.dims, "dtype": case.dtype}
    inputs = op.make_inputs(case)
    by_name = {t.name: arr for t, arr in zip(op.spec.inputs, inputs, strict=False)}
    params = list(inspect.signature(wrapper).parameters)
    unknown = [p for p in params if p not in by_name]
    if unknown:
        return {**result, "status": "error",
                "error": f"wrapper parameters {unknown} are not SPEC inputs {list(by_name)}"}
    try:
        with emu.session() as session:
            out = wrapper(*[by_name[p] for p in params])
        diagnostics = [d.model_dump(mode="json") for d in getattr(session, "diagnostics", [])]
        return {**result, "status": "ok", "outputs": _describe(out), "diagnostics": diagnostics}
    except Exception as exc:
        to_diag = getattr(exc, "to_diagnostic", None)
        diag = to_diag().model_dump(mode="json") if callable(to_diag) else None
        return {**result, "status": "error", "error": f"{type(exc).__name__}: {str(exc)[:800]}",
                "where": _error_location(exc, draft), "diagnostic": diag}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.tools._smoke")
    parser.add_argument("--op-dir", required=True)
    parser.add_argument("--file", required=True)
    parser.add_argument("--wrapper", default="")
    args = parser.parse_args(argv)
    try:
        report = smoke(Path(args.op_dir), Path(args.file), args.wrapper)
    except Exception as exc:  # the JSON line is the only contract with the parent
        report = {"status": "error", "error": f"smoke runner: {type(exc).__name__}: {str(exc)[:800]}"}
    sys.stdout.write(json.dumps(report, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
