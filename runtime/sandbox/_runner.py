"""Child-side entry point of the sandbox: run a candidate wrapper on prepared inputs.

Run as ``python -s -B _runner.py request.json`` inside a fresh work directory by ``runtime.sandbox``. Order
matters and is the security argument:

1. read the request and every input file (nothing untrusted has run yet);
2. import numpy and the emulator, ``install()`` it as ``pypto`` and wrap ``pypto.frontend.jit`` so every
   kernel call is counted and its array arguments are remembered (output provenance);
3. install the socket guard and the audit hook (file/process/network policy);
4. report the active layers on the trusted channel (fd given in the request) and close it;
5. only then import the candidate and call its wrapper once per case with fresh copies of the inputs,
   writing outputs, post-call inputs and a per-case record to the work directory.

The child never receives golden outputs, tolerances or SPEC.md; comparison happens in the parent.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any


def _net_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/net")
    except OSError:
        return ""


def _load_emulator(spec: str) -> Any:
    if spec.endswith(".py"):
        mod_spec = importlib.util.spec_from_file_location("_pto_forge_emulator", spec)
        assert mod_spec is not None and mod_spec.loader is not None
        mod = importlib.util.module_from_spec(mod_spec)
        sys.modules["_pto_forge_emulator"] = mod
        mod_spec.loader.exec_module(mod)
        return mod
    return importlib.import_module(spec)


class _KernelLog:
    """Counts jit-kernel calls and remembers their array arguments for the current case."""

    def __init__(self) -> None:
        self.calls = 0
        self.args: list[Any] = []
        self.errors: list[dict[str, Any]] = []

    def reset(self) -> None:
        self.calls = 0
        self.args = []
        self.errors = []


def _wrap_jit(pypto: Any, klog: _KernelLog, np: Any) -> None:
    frontend = getattr(pypto, "frontend", None)
    original = getattr(frontend, "jit", None) if frontend is not None else None
    if original is None:
        return

    def counting_jit(func: Any = None, **options: Any) -> Any:
        if func is None:
            return lambda f: counting_jit(f, **options)
        kernel = original(func, **options) if options else original(func)

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            klog.calls += 1
            klog.args.extend(a for a in list(args) + list(kwargs.values()) if isinstance(a, np.ndarray))
            try:
                return kernel(*args, **kwargs)
            except BaseException as exc:
                klog.errors.append(_describe_error(exc))
                raise

        call.__wrapped_kernel__ = kernel  # type: ignore[attr-defined]
        return call

    frontend.jit = counting_jit
    if hasattr(pypto, "jit"):
        pypto.jit = counting_jit


def _describe_error(exc: BaseException) -> dict[str, Any]:
    info: dict[str, Any] = {"type": type(exc).__name__, "message": str(exc)[:2000]}
    for attr in ("code", "file", "line", "op"):
        val = getattr(exc, attr, None)
        if isinstance(val, str | int) and not isinstance(val, bool):
            info[attr] = val
    if isinstance(getattr(exc, "message", None), str):
        info["message"] = exc.message[:2000]  # type: ignore[attr-defined]
    if "line" not in info:
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            if frame.filename.startswith(os.getcwd()):
                info["file"], info["line"] = frame.filename, frame.lineno
                break
    if "file" in info:
        info["file"] = _local_name(info["file"])
    info["message"] = _scrub(info["message"])
    return info


def _derived_from(np: Any, leaf: Any, arg: Any) -> bool:
    """True when ``leaf`` is (a view, reshape or dtype cast of) a kernel argument after the call."""
    if np.shares_memory(leaf, arg):
        return True
    if arg.size != leaf.size:
        # a leading sub-block of a padded kernel output (e.g. ``y[:n].copy()``)
        if arg.ndim == leaf.ndim and all(a >= b for a, b in zip(arg.shape, leaf.shape, strict=True)):
            block = arg[tuple(slice(0, b) for b in leaf.shape)]
            return block.dtype == leaf.dtype and np.ascontiguousarray(block).tobytes() == \
                np.ascontiguousarray(leaf).tobytes()
        return False
    try:
        cast = np.ascontiguousarray(arg).reshape(-1).astype(leaf.dtype)
    except (TypeError, ValueError):
        return False
    return cast.tobytes() == np.ascontiguousarray(leaf).reshape(-1).tobytes()


def _local_name(path: Any) -> Any:
    """Paths inside the (random) work directory become bare file names, so reports are reproducible."""
    if not isinstance(path, str):
        return path
    cwd = os.getcwd().rstrip(os.sep) + os.sep
    return path[len(cwd):] if path.startswith(cwd) else path


def _scrub(text: str) -> str:
    return text.replace(os.getcwd().rstrip(os.sep) + os.sep, "")


def _dump(obj: Any) -> Any:
    data = obj.model_dump(mode="json") if hasattr(obj, "model_dump") else obj
    if isinstance(data, dict):
        data = {k: (_local_name(v) if k == "file" else _scrub(v) if isinstance(v, str) else v)
                for k, v in data.items()}
    return data


def main(argv: list[str]) -> int:  # noqa: C901 - one linear protocol, kept in one place on purpose
    request = json.loads(Path(argv[1]).read_text())
    sys.path[:] = [p for p in sys.path if os.path.realpath(p) != os.path.dirname(os.path.realpath(__file__))]
    sys.path.insert(0, request["repo_root"])
    sys.dont_write_bytecode = True

    import numpy as np

    from runtime.sandbox._guard import install_audit_hook, install_socket_guard
    from runtime.sandbox._npz import load_arrays, save_arrays

    cases = request["cases"]
    inputs = {c["name"]: load_arrays(c["inputs"]) for c in cases}

    emu = _load_emulator(request["emulator"])
    emu.install()
    pypto = importlib.import_module("pypto")
    klog = _KernelLog()
    _wrap_jit(pypto, klog, np)
    session_factory = getattr(emu, "session", None)
    emulator_error = getattr(emu, "EmulatorError", None)

    layers = {"process_group": os.getsid(0) == os.getpid(), "tempdir": True, "env_allowlist": True}
    layers["net_namespace"] = bool(_net_namespace()) and _net_namespace() != request.get("parent_netns")
    try:
        import resource

        layers["rlimits"] = resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY and \
            resource.getrlimit(resource.RLIMIT_CORE)[0] == 0
    except (ImportError, OSError):
        layers["rlimits"] = False
    install_socket_guard()
    layers["socket_guard"] = True
    install_audit_hook(request["read_roots"], os.getcwd())
    layers["audit_hook"] = True
    fd = int(request["trusted_fd"])
    os.write(fd, (json.dumps({"layers": layers, "pid": os.getpid()}) + "\n").encode())
    os.close(fd)

    record: dict[str, Any] = {"import_error": None, "cases": []}
    result_path = Path(request["result"])
    try:
        spec = importlib.util.spec_from_file_location("candidate_under_test", request["candidate"])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["candidate_under_test"] = module
        spec.loader.exec_module(module)
        wrapper = getattr(module, request["wrapper"], None)
        if not callable(wrapper):
            raise AttributeError(f"the stage file defines no callable {request['wrapper']!r}")
    except BaseException as exc:  # noqa: BLE001 - untrusted code: report, never crash
        record["import_error"] = _describe_error(exc)
        result_path.write_text(json.dumps(record))
        return 0

    plan = [c["name"] for c in cases]
    if request.get("repeat_first") and plan:
        plan.append(plan[0])
    for run_index, name in enumerate(plan):
        fresh = [inputs[name][f"in_{i}"].copy() for i in range(len(inputs[name]))]
        klog.reset()
        entry: dict[str, Any] = {"case": name, "run": run_index, "error": None, "kernel_errors": []}
        t0 = time.perf_counter()
        try:
            if session_factory is not None:
                with session_factory() as sess:
                    out = wrapper(*fresh)
                entry["counters"] = _dump(getattr(sess, "counters", None))
                entry["diagnostics"] = [_dump(d) for d in getattr(sess, "diagnostics", [])]
            else:
                out = wrapper(*fresh)
        except BaseException as exc:  # noqa: BLE001 - untrusted code
            entry["error"] = _describe_error(exc)
            entry["error"]["emulator_error"] = bool(emulator_error and isinstance(exc, emulator_error))
            out = None
        entry["duration_s"] = time.perf_counter() - t0
        entry["kernel_calls"] = klog.calls
        entry["kernel_errors"] = klog.errors
        arrays: dict[str, Any] = {f"arg_{i}": a for i, a in enumerate(fresh)}
        if out is not None and entry["error"] is None:
            leaves = list(out) if isinstance(out, tuple | list) else [out]
            entry["n_outputs"] = len(leaves)
            entry["from_kernel"] = []
            entry["output_kinds"] = []
            for i, leaf in enumerate(leaves):
                if not isinstance(leaf, np.ndarray):
                    entry["output_kinds"].append(type(leaf).__name__)
                    entry["from_kernel"].append(False)
                    continue
                entry["output_kinds"].append("ndarray")
                arrays[f"out_{i}"] = leaf
                entry["from_kernel"].append(any(_derived_from(np, leaf, a) for a in klog.args))
        entry["file"] = f"run_{run_index:03d}.npz"
        save_arrays(entry["file"], arrays)
        record["cases"].append(entry)
    result_path.write_text(json.dumps(record, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
