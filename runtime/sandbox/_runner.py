"""Child-side entry point of the sandbox: run a candidate wrapper on prepared inputs.

Run as ``python -s -B _runner.py CHANNEL_FD`` by ``runtime.sandbox`` (inside Bubblewrap when available), in a
private working directory. Order matters and is the security argument:

1. read the whole request from stdin (JSON, the candidate's source, all input arrays): nothing untrusted has run
   yet, and nothing of the request stays on disk where the candidate could read or rewrite it;
2. import numpy and the emulator, ``install()`` it as ``pypto`` and wrap ``pypto.frontend.jit`` so every kernel
   call is counted, the wrapper's inputs are checked at kernel entry, and every array argument is snapshotted
   at kernel return (output provenance: an output must equal what the kernel left in it);
3. report the in-process layers on the result channel, then install the socket guard and the audit hook;
4. only then import the candidate and call its wrapper once per case with fresh copies of the inputs, sending
   outputs, post-call inputs and a per-case record as frames on the result channel;
5. end with a ``DONE`` frame and ``os._exit`` (no candidate thread outlives the runner; anything written to the
   channel after ``DONE`` is a protocol violation the parent reports).

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
import types
from pathlib import Path
from typing import Any


def _load_path(name: str, path: str | Path) -> Any:
    """Import one file under ``name`` without importing the package around it."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def compile_candidate(raw: bytes, filename: str) -> Any:
    """The candidate's code object, compiled from its bytes decoded as UTF-8 (a leading BOM dropped).

    Why not the import system: it honours a ``# coding:`` declaration, so a file could show lint (which reads
    UTF-8) an honest kernel and run other text. Compiling the decoded ``str`` ignores any declaration: Python
    runs exactly the text lint read. Non-UTF-8 bytes raise ``UnicodeDecodeError`` (an import error).
    """
    text = raw.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    return compile(text, filename, "exec", dont_inherit=True)


def _load_emulator(spec: str) -> Any:
    return _load_path("_pto_forge_emulator", spec) if spec.endswith(".py") else importlib.import_module(spec)


class _KernelLog:
    """Per case: kernel calls, their array arguments, snapshots of those at kernel return, and whether the
    wrapper's inputs still held their given bytes when the kernel was entered."""

    def __init__(self) -> None:
        self.reset([], [])

    def reset(self, inputs: list[Any], given: list[bytes]) -> None:
        self.calls = 0
        self.args: list[Any] = []
        self.snapshots: list[Any] = []
        self.errors: list[dict[str, Any]] = []
        self.inputs = inputs
        self.given = given
        self.inputs_changed: list[int] = []


def _load_calling(repo_root: str) -> Any:
    """runtime/verify/_calling.py by path (importing runtime.verify would pull in the whole verifier)."""
    return _load_path("_pto_forge_calling", Path(repo_root) / "runtime" / "verify" / "_calling.py")


def _wrap_jit(pypto: Any, klog: _KernelLog, np: Any, as_array: Any = None) -> None:
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
            # torch tensors are remembered as numpy views of their memory (provenance of the outputs)
            views = [as_array(a) if as_array is not None else a for a in list(args) + list(kwargs.values())]
            arrays = [a for a in views if isinstance(a, np.ndarray)]
            klog.args.extend(arrays)
            for i, (a, b) in enumerate(zip(klog.inputs, klog.given, strict=False)):
                if i not in klog.inputs_changed and a.tobytes() != b:
                    klog.inputs_changed.append(i)
            try:
                result = kernel(*args, **kwargs)
            except BaseException as exc:
                klog.errors.append(_describe_error(exc))
                raise
            klog.snapshots.extend(a.copy() for a in arrays)
            return result

        call.__wrapped_kernel__ = kernel  # type: ignore[attr-defined]
        return call

    frontend.jit = counting_jit
    if hasattr(pypto, "jit"):
        pypto.jit = counting_jit


_TYPE_NAME = type.__dict__["__name__"]
"""``type.__name__`` itself: reads a class's name without its metaclass (which could override ``__name__``)."""
_WORK = ""
"""The work directory, fixed before any candidate code runs (``os.getcwd()`` fails once the candidate removed it)."""


def _work() -> str:
    return _WORK or os.getcwd()


def _plain(val: Any, cap: int) -> str:
    """A ``str`` (or a subclass of it) as a plain ``str`` of at most ``cap`` characters, without calling any of
    its methods (a subclass can override them all)."""
    return str.__getitem__(val, slice(0, cap))


def _type_name(obj: Any) -> str:
    """The name of ``obj``'s class, bounded; never runs candidate code."""
    try:
        return _plain(_TYPE_NAME.__get__(type(obj), type), 200)
    except BaseException:  # noqa: BLE001 - untrusted object
        return "object"


def _big_int(val: int) -> str:
    """An int too long to print (Python refuses ``str()`` of ints over 4300 digits), described by its size."""
    return f"<an int of about {int(int.bit_length(val) * 0.30103) + 1} digits>"


def _scalar(val: Any, cap: int) -> Any:
    """A str (cut to ``cap``) or an int (a huge one as :func:`_big_int`) from a candidate's attribute, else None."""
    kind = type(val)
    if kind is bool:
        return None
    if issubclass(kind, str):
        return _plain(val, cap)
    if issubclass(kind, int):
        num = int.__index__(val)  # a plain int, whatever the subclass overrides
        return num if int.bit_length(num) <= 63 else _big_int(num)
    return None


def _message(exc: BaseException) -> str:
    """``str(exc)``, or what can be said when it raises (a candidate's ``__str__`` may raise anything)."""
    try:
        text = str(exc)
        return _plain(text, 2000)
    except BaseException as inner:  # noqa: BLE001 - untrusted __str__
        why = _type_name(inner)
    message = f"<exception message could not be rendered: str() raised {why}>"
    try:
        args = _plain(BaseException.__str__(exc), 1000)  # the arguments it was raised with
    except BaseException:  # noqa: BLE001 - an argument's own __str__/__repr__ raised too
        args = ""
    return f"{message} {args}" if args else message


def _describe_error(exc: BaseException) -> dict[str, Any]:
    """``exc`` as a JSON-able record: ``type`` always, ``message`` (bounded), and ``code``/``file``/``line``/``op``
    when it carries them. Never raises, whatever the candidate's exception does when it is looked at (a
    ``__str__`` that raises, a 6000-digit int ``code``, properties that raise); the runner used to die here and the
    report said only that the process exited."""
    info: dict[str, Any] = {"type": _type_name(exc)}
    try:
        info["message"] = _message(exc)
        for attr in ("code", "file", "line", "op"):
            try:
                val = _scalar(getattr(exc, attr, None), 200)
            except BaseException:  # noqa: BLE001 - a property of the candidate's
                val = None
            if val is not None:
                info[attr] = val
        try:
            own = _scalar(getattr(exc, "message", None), 2000)
        except BaseException:  # noqa: BLE001 - a property of the candidate's
            own = None
        if isinstance(own, str):
            info["message"] = own
        if "line" not in info:
            _where(exc, info)
        if isinstance(info.get("file"), str):
            info["file"] = _local_name(info["file"])
        info["message"] = _scrub(info["message"])
    except BaseException as inner:  # noqa: BLE001 - never lose the error for want of describing it
        info = {"type": info["type"], "message": f"<exception could not be described: {_type_name(inner)}>"}
    return info


def _where(exc: BaseException, info: dict[str, Any]) -> None:
    """The innermost frame of the candidate's file in ``exc``'s traceback (no source lines read)."""
    try:
        tb = BaseException.__dict__["__traceback__"].__get__(exc)
        frames = traceback.StackSummary.extract(traceback.walk_tb(tb), lookup_lines=False)
    except BaseException:  # noqa: BLE001 - no traceback worth reading
        return
    work = _work()
    for frame in reversed(frames):
        if isinstance(frame.filename, str) and frame.filename.startswith(work):
            info["file"], info["line"] = _plain(frame.filename, 500), frame.lineno
            break


def _jsonable(obj: Any, depth: int = 0) -> Any:
    """``obj`` with only what ``json.dumps`` writes: plain containers, strings and numbers; an int too long to
    print described (:func:`_big_int`), anything else its guarded ``str()`` (as ``default=str`` did)."""
    kind = type(obj)
    if obj is None or kind is bool or kind is str or kind is float:
        return obj
    if kind is int:
        return obj if obj.bit_length() <= 63 else _big_int(obj)
    if depth > 64:
        return None
    if kind is dict:
        return {k if type(k) is str else _jsonable_key(k): _jsonable(v, depth + 1) for k, v in obj.items()}
    if kind is list or kind is tuple:
        return [_jsonable(v, depth + 1) for v in obj]
    try:
        if issubclass(kind, str):
            return _plain(obj, 1 << 20)
        if issubclass(kind, float):
            return float.__float__(obj)
        if issubclass(kind, int):
            return _jsonable(int.__index__(obj))
        return _plain(str(obj), 2000)
    except BaseException:  # noqa: BLE001 - untrusted object
        return f"<{_type_name(obj)}>"


def _jsonable_key(key: Any) -> str:
    made = _jsonable(key, 65)
    return made if type(made) is str else json.dumps(made)


def _to_json(record: dict[str, Any]) -> bytes:
    """The record as JSON; never raises. Should even the plain copy fail, the case and run with an error that
    says so (the parent must still hear about this call)."""
    try:
        return json.dumps(_jsonable(record)).encode()
    except BaseException as exc:  # noqa: BLE001 - e.g. MemoryError
        keep = {k: record[k] for k in ("case", "run") if type(record.get(k)) in (str, int)}
        keep["error"] = {"type": "RunnerError", "message": f"the case record could not be written ({_type_name(exc)})"}
        return json.dumps(keep).encode()


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
    cwd = _work().rstrip(os.sep) + os.sep
    return path[len(cwd):] if path.startswith(cwd) else path


def _scrub(text: str) -> str:
    return text.replace(_work().rstrip(os.sep) + os.sep, "")


def _dump(obj: Any) -> Any:
    data = obj.model_dump(mode="json") if hasattr(obj, "model_dump") else obj
    if isinstance(data, dict):
        data = {k: (_local_name(v) if k == "file" else _scrub(v) if isinstance(v, str) else v)
                for k, v in data.items()}
    return data


def _send(fd: int, kind: bytes, payload: bytes) -> None:
    from runtime.sandbox._wire import frame

    data = memoryview(frame(kind, payload))
    while data:
        data = data[os.write(fd, data):]


def _read_request() -> tuple[dict[str, Any], bytes, bytes]:
    # the checkout this runner belongs to first on sys.path before the first `runtime` import: an editable install
    # of another checkout (its finder maps `runtime` there) would otherwise serve `runtime.sandbox._wire` - a
    # checkout run with another checkout's venv failed every verification with "No module named 'runtime'" under
    # Bubblewrap (that checkout is not mounted), and would silently run the other checkout's code without it
    sys.path.insert(0, str(Path(os.path.realpath(__file__)).parents[2]))
    from runtime.sandbox._wire import parse

    raw = sys.stdin.buffer.read()
    frames = dict(parse(raw))
    return json.loads(frames[b"REQ "]), frames[b"SRC "], frames.get(b"INPT", b"")


class _SharedInputs:
    """The case inputs from the sealed shared memory: every call copies its case's region into arrays that own
    their memory (fresh and writable, and nobody else's; indistinguishable from a caller's own arrays)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        from runtime.sandbox import _shm

        self.fd, self.size = int(spec["fd"]), int(spec["size"])
        self.slots = _shm.slots_from_json(spec["slots"], self.size)
        self.cases: dict[str, list[str]] = {k: list(v) for k, v in spec["cases"].items()}
        self.regions: dict[str, list[int]] = {k: list(v) for k, v in spec["regions"].items()}

    def __contains__(self, name: str) -> bool:
        return name in self.cases

    def fresh(self, name: str) -> list[Any]:
        import mmap

        import numpy as np

        from runtime.dtypes import to_numpy

        start, length = self.regions[name]
        mm = mmap.mmap(self.fd, length, access=mmap.ACCESS_READ, offset=start) if length else mmap.mmap(-1, 1)
        out = []
        for key in self.cases[name]:
            slot = self.slots[key]
            view = np.ndarray(slot.shape, dtype=to_numpy(slot.dtype), buffer=mm, offset=slot.offset - start)
            # a copy that owns its memory, like any caller's array: a view over a mapping (owndata False, an
            # mmap base) told the candidate it was being verified (held-out attack A9b)
            out.append(np.array(view, copy=True))
            del view
        mm.close()
        return out


class _Remote:
    """The kernel executor the runner installs in device mode: every traced kernel goes to the device (the
    protocol of :mod:`runtime.sandbox._device`), and the bytes it wrote come back into the caller's arrays."""

    def __init__(self, req_fd: int, resp_fd: int) -> None:
        from runtime.emulator import device  # noqa: F401 - loaded before the audit hook, like everything we use
        from runtime.sandbox._channel import FrameReader
        from runtime.sandbox._finder import Provenance

        self.req_fd = req_fd
        self.reader = FrameReader(resp_fd)
        self.prov = Provenance()

    def _ask(self, kind: bytes, head: dict[str, Any], blobs: list[Any] = (),  # type: ignore[assignment]
             place: Any = None) -> tuple[dict[str, Any], list[Any]]:
        from runtime.emulator import EmulatorError
        from runtime.sandbox._channel import ChannelError, pack, send

        try:
            send(self.req_fd, kind, pack(head, list(blobs)))
            got = self.reader.read_message_into(b"RESP", 1 << 40, place or (lambda *_: None))
        except (OSError, ChannelError):
            got = None
        if got is None:
            raise EmulatorError("EMU_RUNTIME", "the kernel could not be launched")
        return got

    def begin(self, case: str, run: int, inputs: list[Any]) -> None:
        self.prov.reset(inputs)
        self._ask(b"CALL", {"case": case, "run": run})

    def end(self, outputs: list[dict[str, Any]] | None) -> None:
        try:
            self._ask(b"END ", {"outputs": outputs or [], "raised": outputs is None})
        except Exception:  # noqa: BLE001, S110 - the device tells the parent what it saw; nothing to add here
            pass

    def __call__(self, program: Any, args: list[Any], options: Any = None) -> Any:
        import numpy as np

        from runtime.dtypes import name_of
        from runtime.emulator import EmulatorError
        from runtime.emulator.device import ExecError, ExecResult, ExecWarning, encode
        from runtime.sandbox._desc import group_write_only, uninit_array
        from runtime.sandbox._desc import write_only as _write_only

        blob = encode(program)
        arrays = [np.asarray(a) for a in args]
        write_only = _write_only(program)
        alias = _aliases(np, arrays, [getattr(p, "written", True) for p in program.params])
        group_wo = group_write_only(write_only, alias)
        descs: list[Any] = []
        for i, a in enumerate(arrays):
            same = alias[i]
            descs.append(descs[same] if same is not None else self.prov.describe(a, write_only=group_wo[i]))
        head = {"descs": descs, "digests": [self.prov.device_digest(a) for a in arrays],
                "shapes": [list(a.shape) for a in arrays],
                "dtypes": [name_of(a.dtype) for a in arrays], "write_only": write_only, "alias": alias}

        def place(resp: dict[str, Any], i: int, size: int) -> Any:
            """Where blob ``i`` of the reply goes: straight into the wrapper's array when it can take the bytes
            as they are (a GB output is then never held twice); else a buffer, copied below."""
            back = resp.get("back")
            if not isinstance(back, list) or i >= len(back) or not isinstance(back[i], int) \
                    or not 0 <= back[i] < len(arrays) or i in _masked(resp):
                return None
            dst = arrays[back[i]]
            if dst.flags.c_contiguous and dst.flags.writeable and dst.nbytes == size and dst.size:
                placed.add(i)
                return memoryview(dst.reshape(-1).view(np.uint8))
            return None

        placed: set[int] = set()
        resp, blobs = self._ask(b"KERN", head, [blob], place)
        if not resp.get("ok"):
            raise EmulatorError("EMU_RUNTIME", "the kernel could not be launched")
        back = resp.get("back") or []
        masked = _masked(resp)
        for i, (idx, raw) in enumerate(zip(back, blobs[:len(back)], strict=True)):
            dst = arrays[idx]
            if i in placed:
                continue
            src = np.frombuffer(raw, dtype=dst.dtype).reshape(dst.shape)
            if not dst.flags.writeable:
                continue
            if i in masked and dst.flags.c_contiguous and masked[i] < len(blobs):
                wrote = np.unpackbits(np.frombuffer(blobs[masked[i]], dtype=np.uint8), count=dst.size)
                wrote = wrote.view(np.bool_).reshape(dst.shape)
                np.copyto(dst, src, where=wrote)  # the rest keeps this process's bytes, as on a device
                self.prov.shadow(dst, src, ~wrote)
            else:
                np.copyto(dst, src)
        first = int(resp.get("first_id", 0))
        for i, a in enumerate(arrays):
            if descs[i][:1] == ["uninit"] and alias[i] is None and i not in back and a.size:
                # the device's fill of it was not sent back: its memory keeps this process's bytes, the device's
                # copy its fill (an output a 0-trip loop never wrote is judged on those numbers)
                if not a.flags.c_contiguous:
                    continue
                self.prov.shadow(a, uninit_array(a.shape, a.dtype), np.broadcast_to(np.True_, a.shape))
            self.prov.register(first + i, a)
        err = resp.get("error")
        return ExecResult(error=ExecError(**err) if err else None,
                          warnings=[ExecWarning(**w) for w in resp.get("warnings") or []],
                          counters=dict(resp.get("counters") or {}), written=list(resp.get("written") or []))


def _masked(resp: dict[str, Any]) -> dict[int, int]:
    """Position in ``back`` -> index of the blob holding its written-elements mask (the device's ``masks``)."""
    out: dict[int, int] = {}
    for entry in resp.get("masks") or []:
        if isinstance(entry, list) and len(entry) == 2 and all(type(v) is int for v in entry):
            out[entry[0]] = entry[1]
    return out


def _aliases(np: Any, arrays: list[Any], written: list[bool]) -> list[int | None]:
    """Per kernel argument: the earlier argument that is the very same memory (same address, shape, strides and
    dtype: ``kernel(x, y, y)``), else None. The device then gives both parameters one buffer, as a device does.

    Raises:
        EmulatorError: two arguments overlap without being the same view and the kernel writes one of them (the
            device cannot lay out one buffer as two different views; pass separate tensors).
    """
    from runtime.emulator import EmulatorError

    out: list[int | None] = [None] * len(arrays)
    for i, a in enumerate(arrays):
        for j in range(i):  # every earlier argument: one that is the same memory does not end the search (s31c)
            b = arrays[j]
            if not a.size or not b.size or not np.may_share_memory(a, b):
                continue
            if a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape \
                    and a.strides == b.strides and a.dtype == b.dtype:
                if out[i] is None:
                    out[i] = j if out[j] is None else out[j]
                continue
            if (written[i] or written[j]) and np.shares_memory(a, b, max_work=1 << 20):
                raise EmulatorError("EMU_ARG_ALIAS", f"kernel arguments {j + 1} and {i + 1} overlap in memory without "
                                    "being the same tensor, and the kernel writes one of them: pass separate "
                                    "tensors (or the same one twice)")
    return out


def _provenance(np: Any, leaf: Any, klog: _KernelLog) -> tuple[bool, bool]:
    """(written by the kernel, changed by the host after the kernel returned) for one output leaf."""
    from_kernel = any(_derived_from(np, leaf, snap) for snap in klog.snapshots)
    shared = [i for i, a in enumerate(klog.args) if np.shares_memory(leaf, a)]
    after = bool(shared) and not from_kernel
    return from_kernel, after


def main(argv: list[str]) -> int:  # noqa: C901 - one linear protocol, kept in one place on purpose
    global _WORK
    fd = int(argv[1])
    _WORK = os.getcwd()
    os.environ.pop("PWD", None)  # Bubblewrap exports it; a plain child has none: the environment is the allow-list
    # the interpreter has read it already; a host that randomizes hashing does not set it (red team s17, c01)
    os.environ.pop("PYTHONHASHSEED", None)
    request, source, blob = _read_request()
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p) != here]
    sys.path.insert(0, request["repo_root"])
    sys.dont_write_bytecode = True

    import numpy as np

    from runtime import testmodes

    noise = testmodes.activate_in_child(testmodes.take_seed(sys.argv))  # test mode only; argv is cleaned

    from runtime.arrays import dumps_arrays, loads_arrays
    from runtime.sandbox._guard import (
        install_audit_hook,
        install_codegen_audit,
        install_codegen_guard,
        install_socket_guard,
        install_unraisable_guard,
    )

    Path(request["candidate"]).write_bytes(source)
    calling_mod = _load_calling(request["repo_root"])
    try:  # parsed, never run: nothing untrusted has run yet
        wants_torch_npu = calling_mod.imports_module(source.decode("utf-8", "replace"), "torch_npu", anywhere=True)
    except (ValueError, RecursionError, MemoryError):  # a source Python cannot parse imports nothing
        wants_torch_npu = False
    cases = request["cases"]
    shared = _SharedInputs(request["shm"]) if request.get("shm") else None
    if shared is None:
        arrays_in = loads_arrays(blob)
        inputs = {c["name"]: [arrays_in[f"c{i}_in{j}"] for j in range(int(c["n_inputs"]))]
                  for i, c in enumerate(cases)}
        del arrays_in
    del blob, source

    calling = request.get("calling") or {}
    if calling.get("torch"):  # trusted pre-import: the candidate's `import torch` then finds it loaded
        import torch  # noqa: F401

    emu = _load_emulator(request["emulator"])
    emu.install()
    # `import torch_npu` works as on a device host (the stand-in: npu devices are the CPU). Where it failed here
    # and only here, `try: import torch_npu / except ImportError` told verification from a device (red team s19)
    from runtime.emulator._torch_npu import install_finder

    install_finder()
    # trusted pre-import (the stand-in loads torch, which the audit hook would refuse later); with torch it is
    # there even unasked, as on a device host, where `import torch` loads torch_npu by itself: `x.npu()`,
    # `device="npu"` and `torch.npu` work in a wrapper here as there (and as under the gym runner)
    if wants_torch_npu or calling.get("torch"):
        try:
            import torch_npu  # noqa: F401
        except ImportError:  # no torch on this machine: the candidate's own import says so, at its line
            pass
    pypto = importlib.import_module("pypto")
    klog = _KernelLog()
    remote: _Remote | None = None
    if request.get("device"):  # kernels execute in the device process; the executor seam sends them there
        from runtime.emulator import kernel_executor

        remote = _Remote(int(request["device"]["req_fd"]), int(request["device"]["resp_fd"]))
        kernel_executor.set_default(remote)
    else:
        _wrap_jit(pypto, klog, np, calling_mod.array_view)
    session_factory = getattr(emu, "session", None)
    emulator_error = getattr(emu, "EmulatorError", None)
    # the op dir's toolchain target (runtime.targets) and any other emulator Options the verifier chose
    emu_options = calling.get("emulator_options") or {}
    session_kwargs = {"options": emu.Options(**emu_options)} if emu_options and hasattr(emu, "Options") else {}

    layers = {"process_group": os.getsid(0) == os.getpid() or os.getpid() <= 2, "env_allowlist": True}
    try:
        import resource

        layers["rlimits"] = resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY and \
            resource.getrlimit(resource.RLIMIT_CORE)[0] == 0
    except (ImportError, OSError):
        layers["rlimits"] = False
    install_socket_guard()
    layers["socket_guard"] = True
    denied: list[str] = []
    install_codegen_audit(os.path.abspath(request["candidate"]), denied)  # before the policy hook: it denies hooks
    install_audit_hook(request["read_roots"], os.getcwd(), denied)
    layers["audit_hook"] = True
    install_codegen_guard(denied)
    install_unraisable_guard(os.path.abspath(request["candidate"]), denied)
    _send(fd, b"LAYR", json.dumps(layers).encode())

    record: dict[str, Any] = {"import_error": None}
    try:
        path = os.path.abspath(request["candidate"])  # absolute, as the import system named it: tracebacks
        code = compile_candidate(Path(path).read_bytes(), path)  # are mapped back to the file by it
        # imported as the import system would (module named after the file, a real spec and loader): a
        # telltale name or a missing __spec__ let a candidate tell verification from a user's import (attack A9)
        mod_name = Path(path).stem if Path(path).stem.isidentifier() else "kernel"
        spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(spec) if spec is not None else types.ModuleType(mod_name)
        module.__file__ = path
        sys.modules[mod_name] = module
        exec(code, module.__dict__)  # noqa: S102 - the sandboxed candidate, compiled from the linted text
        wrapper = getattr(module, request["wrapper"], None)
        if not callable(wrapper):
            raise AttributeError(f"the stage file defines no callable {request['wrapper']!r}")
    except BaseException as exc:  # noqa: BLE001 - untrusted code: report, never crash
        record["import_error"] = _describe_error(exc)
        record["denied"] = list(denied)
        _send(fd, b"IMPE", _to_json(record))
        _finish(fd)

    plan = [name for name in request["plan"] if (name in shared if shared is not None else name in inputs)]
    layouts = list(calling.get("layouts") or [])
    for run_index, name in enumerate(plan):
        fresh = shared.fresh(name) if shared is not None else [a.copy() for a in inputs[name]]
        # laid out as a caller lays inputs out (owned or a view into a larger allocation; torch-allocated tensors
        # for a torch wrapper): `fresh` are the numpy arrays sharing the arguments' memory (red team s20)
        layout = layouts[run_index] if run_index < len(layouts) else None
        args, fresh = calling_mod.lay_out(fresh, bool(calling.get("torch")), layout)
        # one tensor for several inputs (`call_wrapper` passes it): the views registered as inputs say so too
        fresh = calling_mod.aliased(fresh, calling_mod.alias_of(calling, run_index))
        if shared is None:
            klog.reset(fresh, [a.tobytes() for a in inputs[name]])
        entry: dict[str, Any] = {"case": name, "run": run_index, "error": None, "kernel_errors": []}
        if remote is not None:
            try:
                remote.begin(name, run_index, fresh)
            except Exception as exc:  # noqa: BLE001 - the device refused or is gone: the parent hears it from it
                entry["error"] = _describe_error(exc)
                entry["denied"] = list(denied)
                _send(fd, b"CASE", _to_json(entry))
                continue
        t0 = time.perf_counter()
        try:
            if session_factory is not None:
                with session_factory(**session_kwargs) as sess:
                    out = calling_mod.call_wrapper(wrapper, args, calling, run_index)
                entry["counters"] = _dump(getattr(sess, "counters", None))
                entry["diagnostics"] = [_dump(d) for d in getattr(sess, "diagnostics", [])]
            else:
                out = calling_mod.call_wrapper(wrapper, args, calling, run_index)
        except BaseException as exc:  # noqa: BLE001 - untrusted code
            entry["error"] = _describe_error(exc)
            entry["error"]["emulator_error"] = _is_a(exc, emulator_error)
            out = None
        entry["duration_s"] = time.perf_counter() - t0
        if remote is not None:
            _device_outcome(entry, out, fresh, remote, calling_mod, np, denied)
            _send(fd, b"CASE", _to_json(entry))
            continue
        entry["kernel_calls"] = klog.calls
        entry["kernel_errors"] = klog.errors
        entry["inputs_changed_before_kernel"] = list(klog.inputs_changed)
        entry["denied"] = list(denied)
        arrays: dict[str, Any] = {f"arg_{i}": a for i, a in enumerate(fresh)}
        if out is not None and entry["error"] is None:
            try:
                arrays.update(_host_outcome(entry, out, klog, calling_mod, np, noise))
            except BaseException as exc:  # noqa: BLE001 - the wrapper returned something that cannot be taken apart
                _unreadable_result(entry, exc)
        try:
            blob = dumps_arrays(arrays)
        except BaseException as exc:  # noqa: BLE001 - e.g. an input the wrapper changed into an unwritable dtype
            _unreadable_result(entry, exc)
            blob = dumps_arrays({})
        _send(fd, b"CASE", _to_json(entry))
        _send(fd, b"ARRS", blob)
    _finish(fd)
    return 0


def _is_a(exc: BaseException, cls: Any) -> bool:
    """``isinstance`` by the real class (``isinstance`` reads a candidate's ``__class__``, which can raise)."""
    try:
        return bool(cls) and issubclass(type(exc), cls)
    except BaseException:  # noqa: BLE001 - untrusted class
        return False


def _unreadable_result(entry: dict[str, Any], exc: BaseException) -> None:
    """The wrapper returned, but what it returned could not be read (a container whose iteration raises, a leaf
    that claims to be a torch tensor and is not ...): this call failed, and the record says why."""
    for key in ("n_outputs", "from_kernel", "written_after_kernel", "output_kinds"):
        entry.pop(key, None)
    err = _describe_error(exc)
    err["message"] = f"the wrapper's result could not be read: {err['type']}: {err.get('message', '')}"[:2000]
    entry["error"] = err


def _host_outcome(entry: dict[str, Any], out: Any, klog: _KernelLog, calling_mod: Any, np: Any,
                  noise: Any) -> dict[str, Any]:
    """In-process mode: every output leaf, what kind it is and whether the kernel wrote it; the arrays to send."""
    arrays: dict[str, Any] = {}
    leaves = calling_mod.output_leaves(out)
    kinds: list[str] = []
    from_kernel_flags: list[bool] = []
    after_flags: list[bool] = []
    for i, leaf in enumerate(leaves):
        if type(leaf) is not np.ndarray:
            kinds.append(_type_name(leaf))
            from_kernel_flags.append(False)
            after_flags.append(False)
            continue
        kinds.append("ndarray")
        arrays[f"out_{i}"] = noise.perturb(leaf) if noise is not None else leaf
        from_kernel, after = _provenance(np, leaf, klog)
        from_kernel_flags.append(from_kernel)
        after_flags.append(after)
    entry.update(n_outputs=len(leaves), from_kernel=from_kernel_flags, written_after_kernel=after_flags,
                 output_kinds=kinds)
    return arrays


def _device_outcome(entry: dict[str, Any], out: Any, fresh: list[Any], remote: _Remote, calling_mod: Any, np: Any,
                    denied: list[str]) -> None:
    """Device mode: describe every output leaf to the device (which sends the parent the bytes), and record
    what only this process can say (leaf kinds, the inputs' digests after the call). Ends the device's call
    exactly once, also when the wrapper's result cannot be taken apart (then the call failed)."""
    from runtime.sandbox._finder import digest

    entry["denied"] = list(denied)
    described: list[dict[str, Any]] | None = None
    try:
        entry["inputs_after"] = [digest(a) for a in fresh]
        if out is not None and entry["error"] is None:
            described = _describe_outputs(entry, out, remote, calling_mod, np)
    except BaseException as exc:  # noqa: BLE001 - the wrapper returned something that cannot be taken apart
        _unreadable_result(entry, exc)
        described = None
    remote.end(described)


def _describe_outputs(entry: dict[str, Any], out: Any, remote: _Remote, calling_mod: Any,
                      np: Any) -> list[dict[str, Any]]:
    from runtime.sandbox._desc import canonical_nans, value_cast_source
    from runtime.sandbox._finder import digest

    leaves = calling_mod.output_leaves(out)
    kinds: list[str] = []
    described = []
    for leaf in leaves:
        if type(leaf) is not np.ndarray:
            kinds.append(_type_name(leaf))
            described.append({"kind": kinds[-1]})
            continue
        kinds.append("ndarray")
        if leaf.size and any(st == 0 and n > 1 for st, n in zip(leaf.strides, leaf.shape, strict=True)):
            # a broadcast view is never a kernel's output (the device refuses it too): not worth a digest of
            # what could be gigabytes of one repeated element (attack A3b)
            described.append({"kind": "ndarray", "desc": ["host"], "digest": 0})
            continue
        desc = remote.prov.describe(leaf, output=True)
        # a cast of a kernel's bytes: the device casts them itself and compares without NaN payloads (torch and
        # numpy give a cast NaN different ones; `_desc.value_cast_source`)
        cast = value_cast_source(desc) is not None
        described.append({"kind": "ndarray", "desc": desc,
                          "digest": digest(canonical_nans(leaf)) if cast else remote.prov.device_digest(leaf)})
    entry["n_outputs"] = len(leaves)
    entry["output_kinds"] = kinds
    return described


def _finish(fd: int) -> None:
    """Last act of the runner: ``DONE``, flush, and end the process at once (threads included)."""
    _send(fd, b"DONE", b"")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001, S110 - the candidate may have replaced or closed them
            pass
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
