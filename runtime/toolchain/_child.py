"""Child side of the second opinion: run a kernel file under the REAL pypto (SIM mode) and report raw facts.

Run as ``<pypto-python> -s -B _child.py request.json`` in a private work directory (cwd and $HOME), by
``runtime.toolchain``. It imports nothing of PTO Forge except ``runtime.arrays`` (array files; numpy + ml_dtypes only) and
stays dependency-light on purpose: the interpreter is the user's pypto environment, not the project's venv.

What it does, in order:

1. redirect fds 1/2 to a log (pypto prints from C++ and from helper subprocesses), import numpy/torch/pypto;
2. wrap ``pypto.frontend.jit`` so every kernel runs in ``RunMode.SIM`` (never the NPU path) and numpy
   arguments become torch CPU tensors (bf16 through an int16 view), counting kernel calls;
3. ``mode == "kernel"``: import the candidate and call its wrapper once per case; ``mode == "scripts"``: for
   each script, import it and call its ``run()``. Every call gets its own log file; the cost-model output
   directory and plog bytes it produced are noted for the parent, which parses them.

A pass failure leaves ``Controller.in_function`` set, which makes every later kernel in this process fail
("function nested is not allowed", spec §0.3): the child then stops and tells the parent where to resume.
Nothing it reports is a verdict; the parent only parses.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any


class _Fd:
    """Point fds 1 and 2 at a file for the duration of a block (C++ and subprocess output included)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __enter__(self) -> _Fd:
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = (os.dup(1), os.dup(2))
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        os.dup2(self.fd, 1)
        os.dup2(self.fd, 2)
        return self

    def __exit__(self, *exc: Any) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        for fd in (self.fd, *self.saved):
            os.close(fd)


def _plog_sizes(root: Path) -> dict[str, int]:
    return {str(p): p.stat().st_size for p in root.rglob("*.log")} if root.is_dir() else {}


def _plog_new(root: Path, before: dict[str, int]) -> str:
    chunks: list[str] = []
    if not root.is_dir():
        return ""
    for p in sorted(root.rglob("*.log")):
        start = before.get(str(p), 0)
        if "plog" not in p.parts or p.stat().st_size <= start:
            continue
        with open(p, "rb") as fh:
            fh.seek(start)
            chunks.append(fh.read(200_000).decode(errors="replace"))
    return "".join(chunks)


def _outputs(root: Path) -> set[str]:
    return {p.name for p in root.iterdir()} if root.is_dir() else set()


def _describe(exc: BaseException, target_name: str) -> dict[str, Any]:
    info: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)[:4000]}
    node = getattr(exc, "node", None)
    if node is not None and isinstance(getattr(node, "lineno", None), int):
        info["node_line"] = node.lineno
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename).name == target_name:
            info["tb_line"] = frame.lineno
            break
    return info


def _poisoned(pypto: Any) -> bool:
    ctl = getattr(importlib.import_module("pypto._controller"), "Controller", None)
    return bool(getattr(ctl, "in_function", False)) if ctl is not None else False


def _install(pypto: Any, torch: Any, np: Any, counter: list[int]) -> None:
    frontend = pypto.frontend
    original = frontend.jit
    sim = pypto.RunMode.SIM

    def to_torch(a: Any) -> Any:
        if isinstance(a, np.ndarray):
            a = np.ascontiguousarray(a)
            if a.dtype.name == "bfloat16":
                return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
            return torch.from_numpy(a.copy())
        return a

    def jit(func: Any = None, **options: Any) -> Any:
        if func is None:
            return lambda f: jit(f, **options)
        rt = dict(options.get("runtime_options") or {})
        rt["run_mode"] = sim  # never the NPU path, whatever the kernel asks for
        kernel = original(func, **{**options, "runtime_options": rt})

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            counter[0] += 1
            return kernel(*[to_torch(a) for a in args], **{k: to_torch(v) for k, v in kwargs.items()})

        return call

    frontend.jit = jit


def _load(path: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:  # noqa: C901 - one linear protocol
    request = json.loads(Path(argv[1]).read_text())
    sys.path[:] = [p for p in sys.path if os.path.realpath(p) != os.path.dirname(os.path.realpath(__file__))]
    sys.path.insert(0, request["repo_root"])
    sys.dont_write_bytecode = True
    work = Path.cwd()
    out_root, plog_root = work / "output", work / "plog"
    result: dict[str, Any] = {"calls": [], "resume_at": None}
    result_path = Path(request["result"])
    t0 = time.perf_counter()
    try:
        with _Fd("import.log"):
            import numpy as np
            import pypto
            import torch
    except BaseException as exc:  # noqa: BLE001 - report, never crash
        result["import_error"] = f"{type(exc).__name__}: {exc}"
        result_path.write_text(json.dumps(result))
        return 0
    result["import_s"] = round(time.perf_counter() - t0, 3)
    try:
        from importlib.metadata import version

        result["pypto_version"] = version("pypto")
    except Exception:  # noqa: BLE001 - informative only
        result["pypto_version"] = getattr(pypto, "__version__", None)
    counter = [0]
    _install(pypto, torch, np, counter)

    def one_call(index: int, label: str, target_name: str, fn: Any) -> dict[str, Any]:
        log = f"call_{index:03d}.log"
        entry: dict[str, Any] = {"index": index, "label": label, "log": log, "error": None}
        outs, plogs = _outputs(out_root), _plog_sizes(plog_root)
        counter[0] = 0
        t = time.perf_counter()
        with _Fd(log):
            try:
                fn()
            except BaseException as exc:  # noqa: BLE001 - untrusted code: report
                entry["error"] = _describe(exc, target_name)
        entry["duration_s"] = round(time.perf_counter() - t, 3)
        entry["kernel_calls"] = counter[0]
        new = sorted(_outputs(out_root) - outs)
        entry["output_dirs"] = [f"output/{n}" for n in new]
        entry["report"] = ""
        for n in new:
            rep = out_root / n / "CostModelSimulationOutput" / "_simulate.stat.report.txt"
            if rep.is_file():
                entry["report"] = rep.read_text(errors="replace")[:20000]
            if request.get("discard_outputs"):
                shutil.rmtree(out_root / n, ignore_errors=True)
        entry["plog"] = _plog_new(plog_root, plogs)
        entry["poisoned"] = entry["error"] is not None and _poisoned(pypto)
        return entry

    if request["mode"] == "kernel":
        target = request["candidate"]
        try:
            with _Fd("import_candidate.log"):
                module = _load(target, "candidate_under_test")
            wrapper = getattr(module, request["wrapper"], None)
            if not callable(wrapper):
                raise AttributeError(f"the kernel file defines no callable {request['wrapper']!r}")
        except BaseException as exc:  # noqa: BLE001
            result["candidate_error"] = _describe(exc, Path(target).name)
            result["candidate_error"]["log"] = "import_candidate.log"
            result_path.write_text(json.dumps(result))
            return 0
        from runtime.arrays import load_arrays  # after repo_root is on sys.path; numpy + ml_dtypes only

        for i, case in enumerate(request["cases"]):
            arrays = load_arrays(case["inputs"])
            args = [arrays[f"in_{j}"] for j in range(len(arrays))]
            entry = one_call(i, case["name"], Path(target).name, lambda a=args: wrapper(*a))
            result["calls"].append(entry)
            if entry["error"] is not None:
                break  # the first rejection is the answer; a pass failure would poison the rest anyway
    else:
        scripts = request["scripts"]
        for i in range(int(request.get("start", 0)), len(scripts)):
            path = scripts[i]

            def run(p: str = path, k: int = i) -> None:
                mod = _load(p, f"diff_kernel_{k}")
                mod.run()

            entry = one_call(i, Path(path).name, Path(path).name, run)
            result["calls"].append(entry)
            if entry["poisoned"]:
                result["resume_at"] = i + 1
                break
            result_path.write_text(json.dumps(result))  # progress survives a native crash
    result_path.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
