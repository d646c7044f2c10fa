"""Parent side of the candidate sandbox: start the runner confined, feed it, collect its results.

The isolation is the operating system's (:mod:`runtime.sandbox._proc`): Bubblewrap namespaces and a seccomp filter
where the machine has them (``bwrap+seccomp`` / ``bwrap``), a plain limited child otherwise (``process-only``,
reported as such; ``require_sandbox`` refuses it). Layers reported in :attr:`CandidateRun.layers`:

``bwrap``          fresh user/PID/network/IPC/UTS namespaces; only the interpreter, installed packages and the
                   emulator are visible (read-only); a private tmpfs work dir; dies with its parent
``seccomp``        process creation, ptrace, mounts, namespaces and non-local sockets refused by the kernel
``process_group``  own session; the whole group (and with Bubblewrap its PID namespace) is killed at the end
``rlimits``        address space, CPU seconds, open files, file size, processes, no core dumps
``env_allowlist``  :func:`runtime.sandbox.env_policy.child_env`, the same as the golden's: nothing says "sandbox"
``socket_guard``   socket functions raise inside the child (early, explainable warning)
``audit_hook``     an in-process file/process policy that names what the candidate tried (early warning only)

Results the child cannot rewrite after the fact: the request (inputs, candidate source) goes in over stdin and
nothing of it stays on disk; results come back as frames on a pipe (:mod:`runtime.sandbox._wire`) that the parent
parses only after the whole sandbox is dead (EOF on the pipe: no writer left). Golden outputs and tolerances
never enter the child at all.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from runtime import testmodes
from runtime.arrays import dumps_arrays, loads_arrays
from runtime.sandbox._guard import DENIED_MARKER
from runtime.sandbox._proc import (
    Isolation,
    Limits,
    ProcResult,
    isolation_level,
    private_dir,
    run_process,
    start_process,
)
from runtime.sandbox._text import safe_text
from runtime.sandbox._wire import frame, parse_prefix
from runtime.targets import DEFAULT_NPUARCH

__all__ = ["LAYERS", "CandidateRun", "RunOutput", "SandboxError", "SandboxPolicy", "run_candidate"]

log = logging.getLogger(__name__)

LAYERS = ("bwrap", "seccomp", "process_group", "rlimits", "env_allowlist", "socket_guard", "audit_hook")
_RUNNER = Path(__file__).with_name("_runner.py")
_DEVICE = Path(__file__).with_name("_device.py")
_REPO_ROOT = Path(__file__).resolve().parents[2]


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (infrastructure problem, verdict ERROR)."""


class SandboxPolicy(BaseModel):
    """Limits of one sandboxed candidate run.

    Attributes:
        wall_timeout_s: wall-clock budget of the whole child (import + all cases).
        cpu_timeout_s: CPU-seconds budget (RLIMIT_CPU; SIGXCPU then SIGKILL).
        memory_bytes: address-space limit (RLIMIT_AS); a 50 GB allocation fails with MemoryError.
        max_open_files, max_file_bytes: RLIMIT_NOFILE / RLIMIT_FSIZE.
        max_processes: RLIMIT_NPROC.
        isolation: ``auto`` (the best this machine offers) or a weaker level forced on purpose
            (``process-only`` / ``bwrap``: tests of the fallback paths).
        output_cap_bytes: how much of the child's stdout/stderr is kept.
        result_cap_bytes: how much the child may send back (outputs included); more is a failed run.
    """

    model_config = ConfigDict(frozen=True)

    wall_timeout_s: float = 120.0
    cpu_timeout_s: int = 120
    memory_bytes: int = 4 * 1024**3
    max_open_files: int = 256
    max_file_bytes: int = 512 * 1024**2
    max_processes: int = 256
    isolation: Literal["auto", "bwrap+seccomp", "bwrap", "process-only"] = "auto"
    output_cap_bytes: int = 16 * 1024
    result_cap_bytes: int = 1024**3

    def limits(self) -> Limits:
        return Limits(wall_s=self.wall_timeout_s, cpu_s=self.cpu_timeout_s, memory_bytes=self.memory_bytes,
                      max_open_files=self.max_open_files, max_file_bytes=self.max_file_bytes,
                      max_processes=self.max_processes)


@dataclass
class RunOutput:
    """One wrapper call in the child: outputs and post-call inputs (numpy arrays) plus the child's record."""

    case: str
    run: int
    record: dict[str, Any]
    outputs: list[np.ndarray | None] = field(default_factory=list)
    args_after: list[np.ndarray] = field(default_factory=list)


class CandidateRun(BaseModel):
    """What happened to the child process as a whole."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    status: Literal["ok", "timeout", "killed", "crashed", "import_error", "sandbox_error", "refused"]
    reason: str = ""
    isolation: Isolation = "process-only"
    isolation_note: str = ""
    """Why the isolation is weaker than ``bwrap+seccomp`` (one line), or ""."""
    layers: dict[str, bool] = {}
    protocol_violation: str = ""
    """The result channel held something the runner does not write (forged or torn results), or the candidate's
    process broke the device protocol."""
    device_error: str = ""
    """The device process itself failed (infrastructure: verdict ERROR), or ""."""
    returncode: int | None = None
    pid: int | None = None
    duration_s: float = 0.0
    denied: list[str] = []
    stderr_tail: str = ""
    import_error: dict[str, Any] | None = None
    runs: list[Any] = []


def emulator_files(emulator: str) -> tuple[str, list[str]]:
    """The emulator as the child names it, and the host paths it needs to read.

    A ``.py`` emulator is visible alone, plus its siblings that share its name prefix (``bisect_emulator.py``
    brings ``bisect_*``): never its whole folder, which may hold an operator directory.
    """
    if emulator.endswith(".py"):
        path = Path(emulator).resolve()
        prefix = path.name.split("_", 1)[0] + "_"
        files = [str(path)] + sorted(str(p) for p in path.parent.glob(prefix + "*") if p != path)
        return str(path), files
    import importlib.util

    found = importlib.util.find_spec(emulator)
    paths: list[str] = []
    if found is not None and found.origin:
        origin = Path(found.origin)
        paths.append(str(origin.parent if origin.name == "__init__.py" else origin))
    return emulator, paths


def _read_roots(emulator_paths: list[str]) -> list[str]:
    """What the child may read: the interpreter, installed packages, the runner's own modules, the emulator."""
    import site

    runtime_dir = _REPO_ROOT / "runtime"
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *site.getsitepackages(),
             str(runtime_dir / "__init__.py"), str(runtime_dir / "dtypes.py"), str(runtime_dir / "arrays.py"),
             str(runtime_dir / "sandbox"), str(runtime_dir / "pyast.py"),
             str(runtime_dir / "verify" / "_calling.py"), *emulator_paths}
    return sorted(os.path.realpath(r) for r in roots if os.path.exists(r))


def _scrub(text: str, work: Path) -> str:
    """Drop the random work-directory prefix so that reports of identical runs are identical."""
    return text.replace(str(work) + os.sep, "").replace(os.path.realpath(work) + os.sep, "")


_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt)\b.*)$")


def _last_exception(stderr_tail: str) -> str:
    """`` (<the last exception line of stderr>)``, or "": a process that stops on an uncaught exception prints it
    last, and "exited with code 1" alone told neither the user nor the debugger agent what stopped it (an FP8 input
    the runner could not hand torch). Only a line shaped as an exception, truncated: the text is the candidate's."""
    for line in reversed(stderr_tail.strip().splitlines()[-40:]):
        m = _EXCEPTION_LINE.match(line.strip())
        if m:
            return f" ({m.group(1)[:240]})"
    return ""


def _signal_reason(sig: int, policy: SandboxPolicy) -> str:
    if sig == signal.SIGXCPU:
        return f"CPU time limit of {policy.cpu_timeout_s} s exceeded (SIGXCPU)"
    if sig == signal.SIGKILL:
        return "killed by SIGKILL (CPU hard limit or memory)"
    if sig == signal.SIGXFSZ:
        return "file size limit exceeded (SIGXFSZ)"
    try:
        return f"terminated by signal {signal.Signals(sig).name}"
    except ValueError:
        return f"terminated by signal {sig}"


def run_candidate(
    candidate: Path,
    wrapper: str,
    cases: list[tuple[str, list[np.ndarray]]],
    *,
    policy: SandboxPolicy | None = None,
    emulator: str = "runtime.emulator",
    repeat_first: bool = True,
    visible: tuple[str | Path, ...] = (),
    calling: dict | None = None,
    plan: list[str] | None = None,
    device: bool = False,
    hash_seed: int = 0,
) -> CandidateRun:
    """Run ``wrapper`` of the stage file ``candidate`` once per case (inputs copied), confined.

    Args:
        candidate: the stage file; its source is sent to the child (the child never sees the op directory).
        wrapper: name of the wrapper function to call.
        cases: ``(case name, input arrays)`` in call order.
        policy: limits; defaults to :class:`SandboxPolicy()`.
        emulator: module name (or path of a ``.py`` file) providing ``install()``, ``session()`` and
            ``EmulatorError``; installed as ``pypto`` in the child.
        repeat_first: call the first case once more at the end (determinism / caching check).
        plan: the case names in call order, repeats allowed (verify's seeded call pattern); overrides the
            ``cases`` order and ``repeat_first``. Every name must be one of ``cases``.
        device: execute the kernels in a separate trusted device process (:mod:`runtime.sandbox._device`):
            inputs go through sealed shared memory, outputs and the record of what each kernel wrote come from
            the device, never from the candidate's process. What verify uses; bisect and smoke runs execute
            in-process (they decide no verdict).
        visible: further host files/directories the emulator needs to read (e.g. the real emulator a ``.py``
            adapter loads); they are bound read-only and allowed by the audit hook. Never an operator directory.
        hash_seed: ``PYTHONHASHSEED`` of the candidate's process (verify passes one derived from its secret seed,
            :func:`runtime.sandbox.env_policy.candidate_hash_seed`; the default 0 is for runs that decide no
            verdict). The runner removes the variable from the candidate's ``os.environ``.

    Returns:
        A :class:`CandidateRun`; ``runs`` holds one :class:`RunOutput` per wrapper call when the child
        finished. Timeouts, limit kills, crashes and forged results are statuses, never exceptions.

    Raises:
        SandboxError: the candidate cannot be read or the child process could not be started.
    """
    policy = policy or SandboxPolicy()
    names = [name for name, _ in cases]
    if plan is None:
        plan = names + names[:1] if repeat_first else list(names)
    unknown = sorted(set(plan) - set(names))
    if unknown:
        raise SandboxError(f"the call plan names cases that were not given: {unknown[:3]}")
    # the child sees opaque call labels, never case names: a name would tell an unseen case from a SPEC case
    label = {name: f"c{i}" for i, name in enumerate(dict.fromkeys(names))}
    run = _run_labelled(candidate, wrapper, [(label[n], arrs) for n, arrs in cases], policy, emulator, visible,
                        calling, [label[n] for n in plan], device, hash_seed)
    back = {v: k for k, v in label.items()}
    for r in run.runs:
        r.case = back.get(r.case, r.case)
        if isinstance(r.record.get("case"), str):
            r.record["case"] = back.get(r.record["case"], r.record["case"])
    return run


def _run_labelled(candidate: Path, wrapper: str, cases: list[tuple[str, list[np.ndarray]]], policy: SandboxPolicy,
                  emulator: str, visible: tuple[str | Path, ...], calling: dict | None, plan: list[str],
                  device: bool, hash_seed: int = 0) -> CandidateRun:
    try:
        source = Path(candidate).read_bytes()
    except OSError as exc:
        raise SandboxError(f"cannot read {candidate}: {exc}") from None
    # test mode (runtime.testmodes): a host without unprivileged user namespaces cannot run bwrap
    level, note = isolation_level("process-only" if testmodes.no_userns() else policy.isolation)
    emu_name, emu_paths = emulator_files(emulator)
    emu_paths += [str(Path(v).resolve()) for v in visible]
    if device:
        return _run_with_device(source, Path(candidate).name, wrapper, cases, plan, policy, level, note, emu_name,
                                emu_paths, calling, hash_seed)
    arrays = {f"c{i}_in{j}": a for i, (_, arrs) in enumerate(cases) for j, a in enumerate(arrs)}
    with private_dir("tmp") as work:  # a name like any tempfile.mkdtemp() (no telltale)
        request = {
            "repo_root": str(_REPO_ROOT),
            "emulator": emu_name,
            "candidate": Path(candidate).name,
            "wrapper": wrapper,
            "cases": [{"name": name, "n_inputs": len(arrs)} for name, arrs in cases],
            "plan": plan,
            "calling": calling or {},  # runtime.verify._calling: SPEC attributes by keyword, torch or numpy
            "read_roots": _read_roots(emu_paths),
        }
        stdin = (frame(b"REQ ", json.dumps(request).encode()) + frame(b"SRC ", source)
                 + frame(b"INPT", dumps_arrays(arrays)))
        try:
            res = run_process([sys.executable, "-s", "-B", str(_RUNNER), "{channel_fd}", *testmodes.child_args()],
                              work=work,
                              limits=policy.limits(), profile="untrusted", isolation=level, stdin=stdin,
                              read_only=_visible(emu_paths), channel=True, channel_cap=policy.result_cap_bytes,
                              output_cap=policy.output_cap_bytes, denial_marker=DENIED_MARKER.encode(),
                              hash_seed=hash_seed)
        except OSError as exc:
            raise SandboxError(f"cannot start the sandbox process: {exc}") from None
        return _collect(res, policy, level, note, work, plan=plan)


STRING_CAP = 4000
"""Longest string of a child's or the device's record that reaches a report (held-out attack A8: a 20 MB
exception ``code`` became a 640 MB report)."""


_ONE_LINE_KEYS = frozenset({"type", "code", "file", "op", "case", "kind", "output_kinds", "kernel", "name", "dtype"})
"""Record fields that are names, never multi-line text: a newline in them is escaped too."""


def clean_record(obj: Any, depth: int = 0, cap: int | None = STRING_CAP, one_line: bool = False) -> Any:
    """``obj`` (parsed JSON from another process) with every string cut to :data:`STRING_CAP` characters, made
    encodable (a lone surrogate, e.g. from ``"\\ud800"`` in an exception message, made the report
    unserialisable and verify raised: held-out attack A5) and safe to show (:func:`runtime.sandbox._text.safe_text`:
    no terminal escape sequence or bidi override of the candidate's reaches a report); nesting deeper than 64 levels
    is dropped. Strings under a ``counters`` key keep their length (the emulator session's counters carry bisect's
    base64 captures; the report never shows them as text)."""
    if isinstance(obj, str):
        return safe_text(obj[:cap] if cap is not None else obj, one_line=one_line)
    if depth > 64:
        return None
    if isinstance(obj, list):
        return [clean_record(v, depth + 1, cap, one_line) for v in obj]
    if isinstance(obj, dict):
        return {clean_record(str(k), depth + 1, one_line=True):
                clean_record(v, depth + 1, None if k == "counters" else cap, one_line or k in _ONE_LINE_KEYS)
                for k, v in obj.items()}
    return obj


def _json_dict(payload: bytes, what: str, cap: int = 1 << 30) -> dict[str, Any]:
    if len(payload) > cap:
        raise ValueError(f"{what} of {len(payload)} bytes")
    try:
        data = json.loads(payload)
    except RecursionError:  # forged, deeply nested JSON: not a record the runner writes
        raise ValueError(f"{what} nested too deeply") from None
    if not isinstance(data, dict):
        raise ValueError(f"{what} is not an object")
    return clean_record(data)


_FINITE = (int, float)
_CASE_FIELDS: dict[str, tuple[tuple[type, ...], type | None]] = {
    "error": ((dict, type(None)), None), "duration_s": (_FINITE, None), "kernel_calls": ((int,), None),
    "n_outputs": ((int,), None), "counters": ((dict, type(None)), None), "diagnostics": ((list,), dict),
    "kernel_errors": ((list,), dict), "denied": ((list,), str), "output_kinds": ((list,), str),
    "from_kernel": ((list,), None), "written_after_kernel": ((list,), None),
    "inputs_changed_before_kernel": ((list,), None), "inputs_after": ((list,), None),
}
"""The fields of the runner's case record the verifier reads, with their types (and their elements' types)."""


def _case_record_problem(rec: dict[str, Any]) -> str:
    """Why ``rec`` is not a case record the runner writes ("" when it is): the verifier reads these fields as
    these types, and a forged record with another type made it raise instead of reporting a violation."""
    for key, (types, item) in _CASE_FIELDS.items():
        if key not in rec:
            continue
        val = rec[key]
        if not isinstance(val, types) or (key == "duration_s" and not math.isfinite(val)):
            return f"field {key!r} of the wrong type"
        if item is not None and not all(isinstance(v, item) for v in val):
            return f"field {key!r} holds items of the wrong type"
    return ""


def _safe_run(run: CandidateRun) -> CandidateRun:
    """Every free text of ``run`` safe to show (its records are already, by :func:`clean_record`): the reason and
    violation may quote the candidate's bytes, stderr and the denials are the candidate's own."""
    run.reason = safe_text(run.reason)[:STRING_CAP]
    run.protocol_violation = safe_text(run.protocol_violation)[:STRING_CAP]
    run.device_error = safe_text(run.device_error)
    run.stderr_tail = safe_text(run.stderr_tail)
    run.denied = list(dict.fromkeys(safe_text(d, one_line=True)[:STRING_CAP] for d in run.denied))
    return run


def _collect(res: Any, policy: SandboxPolicy, level: Isolation, note: str, work: Path, *,
             plan: list[str] | None = None, device: bool = False) -> CandidateRun:
    """What the child said (:func:`_read_channel`), every text of it safe to show (:func:`_safe_run`)."""
    return _safe_run(_read_channel(res, policy, level, note, work, plan=plan, device=device))


def _read_channel(res: Any, policy: SandboxPolicy, level: Isolation, note: str, work: Path, *,
                  plan: list[str] | None = None, device: bool = False) -> CandidateRun:
    """What the child said, read as the runner's grammar and nothing else.

    ``LAYR`` first, then either ``IMPE`` or one ``CASE`` (+ ``ARRS`` unless ``device``) per planned call in the
    plan's order (case name and run index checked), then ``DONE`` last. Anything else - a foreign or torn
    frame, an unknown kind, a frame out of order, a record that is not the JSON object the runner writes, an
    array blob that does not parse, a call the plan does not have - is a protocol violation (FAIL_CHEAT); it
    never raises.
    """
    layers = {"bwrap": level.startswith("bwrap"), "seccomp": level == "bwrap+seccomp" or False,
              "process_group": True, "rlimits": True, "env_allowlist": True, "socket_guard": False,
              "audit_hook": False}
    run = CandidateRun(status="ok", isolation=level, isolation_note=note, layers=layers,
                       returncode=res.returncode, duration_s=res.duration_s, pid=res.pid,
                       denied=[_scrub(d, work) for d in res.denials],
                       stderr_tail=_scrub(res.stderr.decode(errors="replace"), work))

    def violate(why: str) -> None:
        run.protocol_violation = run.protocol_violation or why

    frames, wire_error = parse_prefix(res.channel)
    if wire_error and not res.timed_out and not res.channel_overflow and (res.returncode or 0) >= 0:
        violate(f"the result channel was written outside the runner's protocol ({wire_error})")
    known = {b"LAYR", b"CASE", b"IMPE", b"DONE"} | (set() if device else {b"ARRS"})
    if any(k not in known for k, _ in frames):
        violate("the result channel holds frames the runner never writes")
    kinds = [k for k, _ in frames]
    if b"DONE" in kinds and (kinds.index(b"DONE") != len(kinds) - 1):
        violate("the result channel was written after the runner finished")
    if kinds and kinds[0] != b"LAYR" or kinds.count(b"LAYR") > 1 or kinds.count(b"IMPE") > 1:
        violate("the result channel's frames are out of the runner's order")
    if not res.channel_eof:
        violate("a process kept the result channel open after the run")
    if res.channel_overflow:
        run.status, run.reason = "killed", f"the candidate sent more than {policy.result_cap_bytes} bytes of results"
        return run
    if kinds[:1] == [b"LAYR"]:
        try:
            reported = _json_dict(frames[0][1], "layer report")
            run.layers["socket_guard"] = bool(reported.get("socket_guard"))
            run.layers["audit_hook"] = bool(reported.get("audit_hook"))
            run.layers["rlimits"] = bool(reported.get("rlimits"))
        except (ValueError, UnicodeDecodeError):
            violate("unreadable layer report")
    if res.timed_out:
        run.status, run.reason = "timeout", f"wall-clock timeout after {policy.wall_timeout_s:g} s; sandbox killed"
        return run
    rc = res.returncode
    if level.startswith("bwrap") and rc is not None and 128 < rc < 128 + 65:
        rc = 128 - rc  # Bubblewrap reports a child killed by signal N as exit code 128 + N
    if rc is not None and rc < 0:
        run.status, run.reason = "killed", _signal_reason(-rc, policy)
        return run
    if b"LAYR" not in kinds:
        run.status, run.reason = "sandbox_error", "the sandbox runner failed before the candidate was loaded"
        if rc:
            run.reason += f" (exit code {rc}: {run.stderr_tail.strip().splitlines()[-1:] or ''})"
        return run
    if b"IMPE" in kinds:
        try:
            record = _json_dict(dict(frames)[b"IMPE"], "import record")
            error = record.get("import_error")
            if not isinstance(error, dict):
                raise ValueError("no error")
        except (ValueError, UnicodeDecodeError):
            violate("unreadable import record")
            record, error = {}, {"type": "Error", "message": "unreadable"}
        run.denied += [_scrub(str(d), work) for d in record.get("denied") or [] if _scrub(str(d), work) not in run.denied]
        run.status, run.import_error = "import_error", error
        run.reason = f"importing the stage file failed: {error.get('type')}: {str(error.get('message', ''))[:300]}"
        return run
    runs: list[RunOutput] = []
    pending: dict[str, Any] | None = None
    for kind, payload in frames:
        if kind not in (b"CASE", b"ARRS"):
            continue
        if kind == b"CASE":
            if pending is not None and not device:
                violate("a case record without its arrays")
                break
            try:
                pending = _json_dict(payload, "case record", policy.result_cap_bytes)
                index = len(runs)
                if plan is not None and (index >= len(plan) or pending.get("case") != plan[index]
                                         or pending.get("run") != index):
                    raise ValueError("a call the verifier did not make, or out of its order")
                if not isinstance(pending.get("case"), str) or not isinstance(pending.get("run"), int):
                    raise ValueError("no case name or run index")
                problem = _case_record_problem(pending)
                if problem:
                    raise ValueError(problem)
            except (ValueError, UnicodeDecodeError) as exc:
                violate(f"the result channel holds a case record the runner never wrote ({str(exc)[:120]})")
                break
            if device:
                runs.append(RunOutput(case=pending["case"], run=pending["run"], record=pending))
                pending = None
            continue
        if pending is None:
            violate("arrays without a case record")
            break
        try:
            arrays = loads_arrays(payload)
            n_out = int(pending.get("n_outputs", 0) or 0)
            if not 0 <= n_out <= 4096:
                raise ValueError("output count")
            outs = [arrays.get(f"out_{i}") for i in range(n_out)]
            args = [arrays[k] for k in sorted((k for k in arrays if k.startswith("arg_")),
                                              key=lambda s: int(s[4:]) if s[4:].isdigit() else -1)]
        except (ValueError, TypeError, KeyError, OSError, OverflowError) as exc:
            violate(f"unreadable outputs for case {str(pending.get('case'))[:80]} ({str(exc)[:120]})")
            break
        runs.append(RunOutput(case=pending["case"], run=pending["run"], record=pending, outputs=outs,
                              args_after=args))
        pending = None
    run.runs = runs
    for r in runs:  # denials the runner recorded in-process (a closed or truncated stderr cannot erase them)
        for d in r.record.get("denied") or []:
            d = _scrub(str(d), work)
            if d not in run.denied:
                run.denied.append(d)
    if b"DONE" not in kinds:
        run.status = "crashed"
        run.reason = f"the candidate process exited with code {rc} before finishing" + _last_exception(run.stderr_tail)
    return run


# ------------------------------------------------------------------------------------------ device mode


def _visible(emu_paths: list[str]) -> list[str]:
    runtime_dir = _REPO_ROOT / "runtime"
    return [str(runtime_dir / "__init__.py"), str(runtime_dir / "dtypes.py"), str(runtime_dir / "arrays.py"),
            str(runtime_dir / "sandbox"), str(runtime_dir / "emulator"), str(runtime_dir / "verify" / "_calling.py"),
            str(runtime_dir / "testmodes.py"), str(runtime_dir / "pyast.py"), *emu_paths]


def _run_with_device(source: bytes, candidate_name: str, wrapper: str, cases: list[tuple[str, list[np.ndarray]]],
                     plan: list[str], policy: SandboxPolicy, level: Isolation, note: str, emu_name: str,
                     emu_paths: list[str], calling: dict | None, hash_seed: int = 0) -> CandidateRun:
    """The three-process run: this parent, the sandboxed candidate child and the trusted device.

    The parent seals every case input into one memfd (:mod:`runtime.sandbox._shm`) that both children map, and
    connects child and device with two pipes; the device's result channel comes back here. The verdict's
    output bytes are the device's.
    """
    from runtime.sandbox._shm import SealedArrays

    arrays = {f"c{i}_in{j}": a for i, (_, arrs) in enumerate(cases) for j, a in enumerate(arrs)}
    groups = {name: [f"c{i}_in{j}" for j in range(len(arrs))] for i, (name, arrs) in enumerate(cases)}
    case_bytes = max((sum(a.nbytes for a in arrs) for _, arrs in cases), default=0)
    budget = 4 * case_bytes + (256 << 20)
    """what one wrapper call may make the device allocate (kernel arguments + intermediates of one call)"""
    fds: list[int] = []
    try:
        shared = SealedArrays.create(arrays, groups)
        fds.append(shared.fd)
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        fds += [req_r, req_w, resp_r, resp_w]
    except OSError as exc:
        for fd in fds:
            os.close(fd)
        raise SandboxError(f"cannot set up shared memory for the device: {exc}") from None
    shm = {"fd": shared.fd, "size": shared.size, "slots": shared.table(), "cases": groups,
           "regions": shared.regions}
    with private_dir("tmp") as work, private_dir("tmp") as dwork:  # names like any tempfile.mkdtemp()
        dev_request = {"repo_root": str(_REPO_ROOT), "inputs_fd": shared.fd, "inputs_size": shared.size,
                       "slots": shared.table(), "cases": groups, "plan": plan, "budget_bytes": budget,
                       "limits": {"max_alloc_bytes": budget},
                       # the architecture the verifier chose (SPEC.md `npuarch`): the device prepares kernels for it
                       "npuarch": str(((calling or {}).get("emulator_options") or {}).get("npuarch") or DEFAULT_NPUARCH)}
        request = {
            "repo_root": str(_REPO_ROOT), "emulator": emu_name, "candidate": candidate_name, "wrapper": wrapper,
            "cases": [{"name": name, "n_inputs": len(arrs)} for name, arrs in cases], "plan": plan,
            "calling": calling or {}, "read_roots": _read_roots(emu_paths), "shm": shm,
            "device": {"req_fd": req_w, "resp_fd": resp_r},
        }
        stdin = frame(b"REQ ", json.dumps(request).encode()) + frame(b"SRC ", source)
        # the child may need memory for one case's inputs (mapped), its outputs and copies on top of its limit
        child_limits = policy.limits()
        if child_limits.memory_bytes is not None:
            child_limits = Limits(**{**child_limits.__dict__, "memory_bytes": child_limits.memory_bytes + 4 * case_bytes})
        # what the device may send the parent: every call's outputs (each call's bounded by ``budget`` on the device)
        # up to the result cap, or a few times the inputs of the calls for ops whose cases are that large
        device_cap = policy.result_cap_bytes + 4 * sum(sum(a.nbytes for a in arrs) for _, arrs in cases) * \
            max(1, -(-len(plan) // max(1, len(cases))))
        dev_limits = Limits(wall_s=policy.wall_timeout_s + 60.0, cpu_s=policy.cpu_timeout_s + 60,
                            memory_bytes=max(4 << 30, 2 * shared.size + 2 * budget + (2 << 30)),
                            max_open_files=64, max_file_bytes=0, max_processes=None)
        try:
            dev = start_process([sys.executable, "-s", "-B", str(_DEVICE), str(req_r), str(resp_w), "{channel_fd}",
                                 *testmodes.child_args()],
                                work=dwork, limits=dev_limits, profile="trusted", stdin=json.dumps(dev_request).encode(),
                                channel=True, channel_cap=device_cap, pass_fds=[shared.fd, req_r, resp_w])
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"cannot start the device process: {exc}") from None
        try:
            child = start_process([sys.executable, "-s", "-B", str(_RUNNER), "{channel_fd}", *testmodes.child_args()],
                                  work=work, limits=child_limits, profile="untrusted", isolation=level, stdin=stdin,
                                  read_only=_visible(emu_paths), channel=True, channel_cap=policy.result_cap_bytes,
                                  output_cap=policy.output_cap_bytes, denial_marker=DENIED_MARKER.encode(),
                                  pass_fds=[shared.fd, req_w, resp_r], hash_seed=hash_seed)
        except OSError as exc:
            dev.kill()
            dev.wait(timeout=5.0)
            for fd in fds:
                os.close(fd)
            raise SandboxError(f"cannot start the sandbox process: {exc}") from None
        for fd in fds:  # the children hold their ends now; the device sees EOF when the candidate is gone
            os.close(fd)
        try:
            res = child.wait()
        except BaseException:  # Ctrl-C in the parent: the device goes with the candidate, now (its pipe readers
            dev.kill()          # would otherwise hold interpreter exit until it noticed the candidate was gone)
            dev.wait(timeout=5.0)
            raise
        dres = dev.wait(timeout=30.0)
        run = _read_channel(res, policy, level, note, work, plan=plan, device=True)
        _merge_device(run, dres)
        return _safe_run(run)  # once, after the device's own text is in


def _merge_device(run: CandidateRun, dres: ProcResult) -> None:
    """Put the device's record and output bytes into ``run`` (the child's own records stay for what only it can
    say: errors raised in the wrapper, output kinds, diagnostics of tracing)."""
    from runtime.dtypes import to_numpy
    from runtime.sandbox._channel import ChannelError, unpack

    frames, wire_error = parse_prefix(dres.channel, copy=False)  # outputs stay views of the channel's buffer
    by_run: dict[int, tuple[dict[str, Any], list[Any]]] = {}
    done: dict[str, Any] | None = None
    failure = ""
    for kind, payload in frames:
        try:
            head, blobs = unpack(payload)
        except ChannelError as exc:
            failure = f"unreadable device record ({exc})"
            break
        head = clean_record(head)  # kernel names, messages and file names in it come from the candidate's program
        if kind == b"CASE":
            by_run[int(head.get("run", -1))] = (head, blobs)
        elif kind == b"DONE":
            done = head
        elif kind == b"FAIL":
            failure = str(head.get("error", "device failure"))
    if dres.channel_overflow:  # the outputs the candidate returned, over every bound: its doing, not ours (A12)
        run.protocol_violation = run.protocol_violation or \
            "the wrapper's outputs over all calls exceeded what the verifier accepts from the device"
        wire_error = failure = ""
        done = done or {}
    if wire_error and not failure:
        failure = f"torn device record ({wire_error})"
    if done is None and not failure and run.status == "ok":
        rc = dres.returncode
        failure = "the device process ended before finishing" + (f" (exit code {rc})" if rc else "") + (
            " (timeout)" if dres.timed_out else "")
        tail = dres.stderr.decode(errors="replace").strip().splitlines()[-3:]
        if tail:
            failure += ": " + " | ".join(tail)
    if failure:
        run.device_error = failure[:2000]
    if done is not None and done.get("violation"):
        run.protocol_violation = run.protocol_violation or \
            f"the candidate's process broke the device protocol: {done['violation']}"
    for r in run.runs:
        got = by_run.get(r.run)
        if got is None:
            r.record["device"] = None
            continue
        head, blobs = got
        r.record["device"] = {k: v for k, v in head.items() if k != "blobs"}
        outs: list[np.ndarray | None] = []
        for entry in head.get("outputs") or []:
            if entry.get("ok"):
                raw = blobs[int(entry["blob"])]
                outs.append(np.frombuffer(raw, dtype=to_numpy(entry["dtype"])).reshape(entry["shape"]))
            else:
                outs.append(None)
        r.outputs = outs
