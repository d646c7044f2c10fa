"""The child process that imports golden.py and runs it: ``python _golden_child.py <workdir>``.

Run by :mod:`runtime.opdir._golden_runner` in a fresh interpreter, with the temporary ``workdir`` as its current
directory and bytecode writing disabled (nothing is ever written next to golden.py). It reads
``request.json`` (+ ``inputs.npz``), writes ``result.json`` and, on success, one ``<case>.out.npz``,
``<case>.mid.npz`` and (when ``make_inputs`` was used) ``<case>.in.npz`` per case.

Intermediates are captured without the golden's cooperation: a ``sys.settrace`` hook traces the outermost
``golden`` frame only (its callees get no line events), notes the order in which its locals are first bound and
snapshots them at its ``return`` event; array-valued ones are kept, in binding order (data-flow order).
"""

from __future__ import annotations

import inspect
import json
import signal
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Any

sys.dont_write_bytecode = True
_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

import numpy as np  # noqa: E402

from runtime.arrays import load_arrays, save_arrays  # noqa: E402 - numpy + runtime.dtypes only (no pydantic)
from runtime.dtypes import DTypeError, name_of  # noqa: E402


class _CaseTimeout(BaseException):
    """A case ran past its time limit (raised by SIGALRM; a BaseException so a golden's ``except Exception``
    cannot swallow it)."""


def _on_alarm(signum: int, frame: Any) -> None:  # noqa: ARG001 - signal handler signature
    raise _CaseTimeout


class _Failure(Exception):
    def __init__(self, kind: str, message: str, line: int | None = None, tb: str = "") -> None:
        super().__init__(message)
        self.kind, self.message, self.line, self.tb = kind, message, line, tb


def _golden_line(exc: BaseException, golden_file: str) -> tuple[int | None, str]:
    """The last traceback line inside golden.py, and the formatted traceback limited to golden frames."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if f.filename == golden_file]
    text = "".join(traceback.format_list(mine)) + "".join(traceback.format_exception_only(type(exc), exc))
    return (mine[-1].lineno if mine else None), text


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _to_numpy(value: Any) -> np.ndarray | None:
    """numpy (or torch CPU) array-likes as numpy arrays; anything else None."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "detach"):
        t = value.detach().cpu()
        if str(t.dtype) == "torch.bfloat16":
            import ml_dtypes

            return t.float().numpy().astype(ml_dtypes.bfloat16)
        return t.numpy()
    return None


def _storable(arr: np.ndarray) -> bool:
    try:
        name_of(arr.dtype)
        return True
    except DTypeError:
        return False


def _load_module(path: Path) -> types.ModuleType:
    source = path.read_text(encoding="utf-8")
    try:
        code = compile(source, str(path), "exec")
    except SyntaxError as exc:
        raise _Failure("syntax", f"syntax error: {exc.msg}", exc.lineno) from None
    module = types.ModuleType("golden")
    module.__file__ = str(path)
    sys.modules["golden"] = module
    if str(path.parent) not in sys.path:
        sys.path.append(str(path.parent))
    try:
        exec(code, module.__dict__)
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
        line, tb = _golden_line(exc, str(path))
        raise _Failure("import", f"importing golden.py failed: {_describe(exc)}", line, tb) from None
    return module


def _outputs(result: Any, names: list[str]) -> dict[str, np.ndarray]:
    """Map golden's return value to the SPEC output names (one array, a tuple/list, or a dict)."""
    if isinstance(result, dict):
        keys = [str(k) for k in result]
        if sorted(keys) != sorted(names):
            raise _Failure("bad_output", f"golden returned a dict with keys {keys}; SPEC.md declares outputs {names}")
        items = [(n, result[n]) for n in names]
    elif isinstance(result, (tuple, list)):
        if len(result) != len(names):
            raise _Failure("bad_output", f"golden returned {len(result)} values; SPEC.md declares "
                                         f"{len(names)} output(s) {names}")
        items = list(zip(names, result))
    else:
        if len(names) != 1:
            raise _Failure("bad_output", f"golden returned one value; SPEC.md declares {len(names)} outputs {names}")
        items = [(names[0], result)]
    out: dict[str, np.ndarray] = {}
    for name, value in items:
        arr = _to_numpy(value)
        if arr is None and isinstance(value, (int, float, bool, np.generic)):
            arr = np.asarray(value)
        if arr is None or not _storable(arr):
            what = type(value).__name__ if arr is None else f"array of dtype {arr.dtype}"
            raise _Failure("bad_output", f"output '{name}' is a {what}; golden must return numpy arrays "
                                         "with a supported dtype")
        out[name] = arr
    return out


def _run_case(module: types.ModuleType, golden_file: str, req: dict, case: dict, workdir: Path) -> dict:
    golden = module.__dict__["golden"]
    n_inputs = int(req["n_inputs"])
    if req["make_inputs"]:
        rng = np.random.default_rng(case["seed"])
        try:
            made = module.__dict__["make_inputs"](dict(case), rng)
        except _CaseTimeout:
            raise
        except BaseException as exc:  # noqa: BLE001
            line, tb = _golden_line(exc, golden_file)
            raise _Failure("make_inputs", f"make_inputs raised {_describe(exc)}", line, tb) from None
        if isinstance(made, dict):
            if sorted(made) != sorted(req["input_names"]):
                raise _Failure("make_inputs", f"make_inputs returned keys {sorted(made)}; SPEC.md declares "
                                              f"inputs {req['input_names']}")
            made = [made[n] for n in req["input_names"]]
        if not isinstance(made, (list, tuple)) or len(made) != n_inputs:
            raise _Failure("make_inputs", f"make_inputs must return a list of {n_inputs} arrays "
                                          f"(inputs {req['input_names']}), got {type(made).__name__}"
                                          + (f" of length {len(made)}" if isinstance(made, (list, tuple)) else ""))
        inputs = []
        for name, value in zip(req["input_names"], made):
            arr = _to_numpy(value)
            if arr is None or not _storable(arr):
                raise _Failure("make_inputs", f"make_inputs returned a {type(value).__name__} for input "
                                              f"'{name}'; expected a numpy array")
            inputs.append(arr)
        save_arrays(workdir / f"{case['name']}.in.npz", dict(zip(req["input_names"], inputs)))
    else:
        inputs = list(load_arrays(workdir / f"{case['name']}.in.npz").values())

    target = getattr(inspect.unwrap(golden), "__code__", None)  # None: a callable object, no locals to capture
    try:
        params = inspect.signature(golden).parameters
    except (TypeError, ValueError):
        params = {}  # type: ignore[assignment]
    positional = list(params)[:n_inputs]
    kwargs = {k: v for k, v in req["attrs"].items()
              if k in params and k not in positional
              and params[k].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}
    captured: dict[str, Any] = {}
    bound: dict[str, int] = {}
    """local name -> rank of its first binding: frame locals list names read inside a generator expression
    or lambda (cell variables) after all others, so their order is not the order the golden computed them"""
    state: dict[str, Any] = {"frame": None}

    def local_trace(frame: types.FrameType, event: str, arg: Any) -> Any:
        if event in ("line", "return"):
            for name in frame.f_locals:
                bound.setdefault(name, len(bound))
        if event == "return":
            captured.update(frame.f_locals)
        return local_trace

    def global_trace(frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "call" and state["frame"] is None and target is not None and frame.f_code is target:
            state["frame"] = frame
            return local_trace
        return None  # no line events anywhere else: the golden's callees run at full speed

    args = [a.copy() for a in inputs]
    start = time.perf_counter()
    sys.settrace(global_trace)
    try:
        result = golden(*args, **kwargs)
    except _CaseTimeout:
        raise
    except BaseException as exc:  # noqa: BLE001
        sys.settrace(None)
        line, tb = _golden_line(exc, golden_file)
        raise _Failure("exception", f"golden raised {_describe(exc)}", line, tb) from None
    finally:
        sys.settrace(None)
    duration = time.perf_counter() - start
    outputs = _outputs(result, req["output_names"])
    mids: dict[str, np.ndarray] = {}
    for name, value in sorted(captured.items(), key=lambda kv: bound.get(kv[0], len(bound))):
        arr = _to_numpy(value)
        if arr is not None and _storable(arr):
            mids[name] = arr
    if _NOISE is not None:  # test mode: the golden's float results as another CPU would give them
        outputs = {k: _NOISE.perturb(v) for k, v in outputs.items()}
        mids = {k: v if k in req["input_names"] else _NOISE.perturb(v) for k, v in mids.items()}
    save_arrays(workdir / f"{case['name']}.out.npz", outputs)
    save_arrays(workdir / f"{case['name']}.mid.npz", mids)
    return {"name": case["name"], "duration_s": duration}


def _timed_case(module: types.ModuleType, golden_file: str, req: dict, case: dict, workdir: Path) -> dict:
    """One case under its own time limit (``case_timeout``): an endless loop stops this case, and with it the
    batch, after one limit, not after the whole batch's budget."""
    limit = float(req.get("case_timeout") or 0)
    if limit > 0:
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        return _run_case(module, golden_file, req, case, workdir)
    except _CaseTimeout:
        raise _Failure("timeout", f"golden.py did not finish case {case['name']} within {limit:g} s (the limit per "
                                  "case); is there an endless loop?") from None
    finally:
        if limit > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)


def main(workdir: Path) -> int:
    req = json.loads((workdir / "request.json").read_text(encoding="utf-8"))
    golden_file = req["golden"]
    try:
        module = _load_module(Path(golden_file))
        if not callable(module.__dict__.get("golden")):
            raise _Failure("missing_function", "golden.py defines no function 'golden(*inputs)'")
        if req["make_inputs"] and not callable(module.__dict__.get("make_inputs")):
            raise _Failure("missing_function", "make_inputs is not a function")
        done = [_timed_case(module, golden_file, req, case, workdir) for case in req["cases"]]
        reply: dict[str, Any] = {"ok": True, "cases": done}
    except _Failure as f:
        reply = {"ok": False, "kind": f.kind, "message": f.message, "line": f.line, "traceback": f.tb}
    (workdir / "result.json").write_text(json.dumps(reply), encoding="utf-8")
    return 0


_NOISE: Any = None


if __name__ == "__main__":
    from runtime import testmodes

    _NOISE = testmodes.activate_in_child(testmodes.take_seed(sys.argv))
    if _NOISE is not None:
        _NOISE.wrap_numpy(np)
    sys.exit(main(Path(sys.argv[1])))
