"""The device: a trusted process that executes the candidate's kernels on its own copies of the data.

Run as ``python -s -B _device.py REQ_FD RESP_FD OUT_FD`` by :mod:`runtime.sandbox._exec`, with the request (JSON)
on stdin. It never imports or runs candidate code, torch, the emulator's tracer or frontend: only numpy,
ml_dtypes, :mod:`runtime.emulator.device` (the program codec, validator and executor) and this package's
leaf modules. ``tests/sandbox/test_device_process_imports.py`` holds it to that.

What it does (docs/verification.md, "Where the verdict comes from"):

* maps the sealed case inputs (:mod:`runtime.sandbox._shm`) read-only: the only inputs it ever computes with;
* serves the candidate child's requests on ``REQ_FD``/``RESP_FD``, strictly in the verifier's call plan:
  ``CALL`` (a wrapper call begins: case and run index must be the plan's next), ``KERN`` (a kernel call: the
  encoded program, one descriptor + digest per argument), ``END`` (the wrapper returned: one descriptor + digest
  per output leaf);
* per kernel call: decodes and validates the program, builds every argument from trusted data
  (:func:`runtime.sandbox._desc.build`), compares with the digest of the bytes the child holds (a mismatch is a
  host-computed input), executes, records which buffers the kernel wrote, and sends the written bytes back so
  the child's host code can continue;
* per wrapper call: resolves each output to (a view of) a buffer a kernel wrote in that call, and sends the
  parent, on ``OUT_FD``, the record and the output bytes - the only output bytes the verdict uses.

Anything the child sends outside the protocol ends the service with a recorded violation; the child then
blocks or fails, and the verifier reports FAIL_CHEAT. Nothing the child sends can crash the device: every
error becomes a record.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any

_CAPS_HEAD = 16 << 20
"""Largest JSON head (descriptors of one call) the device reads."""


def _digest(arr: Any) -> int:
    import numpy as np

    a = np.ascontiguousarray(arr)
    return zlib.crc32(a.reshape(-1).view(np.uint8).data) if a.size else 0


def _raw(arr: Any) -> memoryview:
    import numpy as np

    a = np.ascontiguousarray(arr)
    return a.reshape(-1).view(np.uint8).data if a.size else memoryview(b"")


_KNOWN = "a wrapper input, a buffer a kernel wrote, a constant, or a layout/cast/padding of one"


def _unexplained(label: str, param: Any, write_only: bool) -> str:
    """Why an argument whose bytes nothing explains is refused (always a cheat: the device cannot tell garbage
    from an answer). A buffer the kernel both reads and writes is most often an output allocated with
    ``np.empty`` that the kernel reads before writing (its prior contents); say that rather than accuse the
    host of computing it. Only the message depends on the program's ``written`` flag, never the verdict."""
    if not write_only and getattr(param, "written", False) is True:
        return (f"{label}: the kernel reads what this buffer held before the call (it also writes it), and that is "
                f"not {_KNOWN}: memory the wrapper allocated and never wrote (e.g. np.empty), or data computed on "
                f"the host. Allocate it with np.zeros, or do not read it before the kernel writes it")
    return f"{label} is host data (computed on the host, or memory never written): not {_KNOWN}"


_NPUARCHS = frozenset({"DAV_2201", "DAV_3510"})
"""the architectures a verifier may ask the device for (`runtime.targets.NPUARCHS`, written out: the device process
imports nothing outside its allow-list; tests/verify/test_npuarch.py checks the two agree)"""

class Violation(Exception):  # noqa: N818 - the child broke the protocol: recorded, then service ends
    """The candidate's process did something the protocol does not allow."""


class DeviceFailure(Exception):  # noqa: N818 - the device's own failure (verdict ERROR, never the candidate's)
    """The executor failed on a program the validator had accepted (a bug of the device, not a verdict)."""


class Device:
    """The device's state for one verification run (see the module docstring)."""

    def __init__(self, request: dict[str, Any], req_fd: int, resp_fd: int, out_fd: int) -> None:
        import numpy as np

        from runtime.sandbox import _shm
        from runtime.sandbox._channel import FrameReader

        self.np = np
        self.req = FrameReader(req_fd)
        self.resp_fd, self.out_fd = resp_fd, out_fd
        fd, size = int(request["inputs_fd"]), int(request["inputs_size"])
        if not _shm.is_sealed(fd):
            raise RuntimeError("the inputs memory is not sealed")
        self.mem = _shm.map_readonly(fd, size)
        slots = _shm.slots_from_json(request["slots"], size)
        self.cases: dict[str, list[Any]] = {
            name: [_shm.slot_view(self.mem, slots[s]) for s in names] for name, names in request["cases"].items()}
        self.plan: list[str] = list(request["plan"])
        self.budget = int(request["budget_bytes"])
        self.max_program = int(request.get("max_program_bytes", 64 << 20))
        from runtime.emulator.device import ExecOptions, Limits

        # the device decides how kernels run (never the candidate): the session defaults, bounded
        limits = request.get("limits") or {}
        npuarch = str(request.get("npuarch") or "DAV_2201")
        if npuarch not in _NPUARCHS:
            raise RuntimeError(f"unknown npuarch {npuarch!r}")
        self.options = ExecOptions(limits=Limits(max_alloc_bytes=int(limits.get("max_alloc_bytes", self.budget)),
                                                 max_steps=int(limits.get("max_steps", 50_000_000))),
                                   npuarch=npuarch)
        self.noise: Any = None
        self.run_index = -1
        self.open = False
        self.violation = ""

    # ------------------------------------------------------------------------------------------ parent side
    def emit(self, kind: bytes, head: dict[str, Any], blobs: list[memoryview] = ()) -> None:  # type: ignore[assignment]
        from runtime.sandbox._channel import pack, send

        send(self.out_fd, kind, pack(head, list(blobs)))

    # ------------------------------------------------------------------------------------------ child side
    def reply(self, head: dict[str, Any], blobs: list[memoryview] = ()) -> None:  # type: ignore[assignment]
        from runtime.sandbox._channel import pack, send

        try:
            send(self.resp_fd, b"RESP", pack(head, list(blobs)))
        except OSError:
            pass  # the child is gone; its end of the story is the parent's to tell

    def serve(self) -> None:
        from runtime.sandbox._channel import ChannelError, unpack

        caps = {b"CALL": 1 << 16, b"KERN": _CAPS_HEAD + self.max_program + 4096, b"END ": _CAPS_HEAD}
        try:
            while True:
                frame = self.req.read(caps)
                if frame is None:
                    break
                kind, payload = frame
                head, blobs = unpack(payload)
                if kind == b"CALL":
                    self.on_call(head)
                elif kind == b"KERN":
                    self.on_kernel(head, blobs)
                else:
                    self.on_end(head)
        except (ChannelError, Violation) as exc:
            self.violation = str(exc)[:500]
            self.reply({"ok": False, "violation": True})
        except DeviceFailure:
            raise
        except MemoryError:
            # the device ran out of memory serving the candidate's request (its budget and RLIMIT_AS hold): the
            # candidate's doing, a violation - never an infrastructure ERROR it could hide a failure behind (A3b)
            self.buffers, self.inputs = [], []
            self.violation = "the candidate's requests made the device run out of memory"
            self.reply({"ok": False, "violation": True})
        except (RecursionError, ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as exc:
            # whatever a malformed request makes the parsing code trip over is the request's fault
            self.violation = f"malformed request ({type(exc).__name__}: {str(exc)[:200]})"
            self.reply({"ok": False, "violation": True})
        except OSError as exc:
            self.violation = f"the device could not read the candidate's requests ({exc.strerror})"
        if self.open and not self.violation:
            self.finish_call(incomplete=True)
        self.emit(b"DONE", {"violation": self.violation, "calls": self.run_index + 1})

    # ------------------------------------------------------------------------------------------ one wrapper call
    def on_call(self, head: dict[str, Any]) -> None:
        if self.open:
            raise Violation("a wrapper call began before the previous one ended")
        self.run_index += 1
        if self.run_index >= len(self.plan):
            raise Violation(f"more wrapper calls than the verifier made ({len(self.plan)})")
        expected = self.plan[self.run_index]
        if head.get("case") != expected or head.get("run") != self.run_index:
            raise Violation(f"wrapper call {self.run_index} names case {str(head.get('case'))[:80]!r}; the verifier "
                            f"called {expected!r}")
        self.open = True
        self.inputs = self.cases[expected]
        self.buffers: list[Any] = []
        self.roots: list[int] = []
        self.written_roots: set[int] = set()
        self.input_roots: set[int] = set()
        self.blank_roots: set[int] = set()
        self.allocated = 0
        self.kernels: list[dict[str, Any]] = []
        self.cheats: list[str] = []
        self.signature: list[str] = []
        self.t0 = time.perf_counter()
        self.reply({"ok": True})

    def on_kernel(self, head: dict[str, Any], blobs: list[memoryview]) -> None:
        np = self.np
        from runtime.emulator.device import ProgramError, decode, execute
        from runtime.sandbox._desc import DescError, build, group_write_only, signature
        from runtime.sandbox._desc import write_only as _write_only

        if not self.open:
            raise Violation("a kernel call outside a wrapper call")
        n_call = len(self.kernels)
        if n_call >= 64:
            raise Violation("more than 64 kernel calls in one wrapper call")
        if len(blobs) != 1 or len(blobs[0]) > self.max_program:
            raise Violation("a kernel call must carry exactly one program")
        blob = bytes(blobs[0])
        try:
            program = decode(blob)
        except ProgramError as exc:
            raise Violation(f"kernel call {n_call + 1}: the device refused the kernel program: {exc}") from None
        params = list(program.params)
        descs, digests, shapes, dtypes = head.get("descs"), head.get("digests"), head.get("shapes"), head.get("dtypes")
        n = len(params)
        if not (isinstance(descs, list) and isinstance(digests, list) and isinstance(shapes, list)
                and isinstance(dtypes, list) and len(descs) == len(digests) == len(shapes) == len(dtypes) == n):
            raise Violation(f"kernel call {n_call + 1}: one descriptor, digest, shape and dtype per parameter "
                            f"({n}) expected")
        write_only = _write_only(program)  # the device's own reading of the program, not the child's
        kernel = getattr(program, "kernel", "kernel")
        args: list[Any] = []
        built_roots: list[int | None] = []
        inputs_only: list[bool] = []
        blanks: list[bool] = []
        sig: list[Any] = []
        alias = head.get("alias") or [None] * n
        if not (isinstance(alias, list) and len(alias) == n):
            raise Violation(f"kernel call {n_call + 1}: one alias entry per parameter ({n}) expected")
        # the very memory of an earlier argument (`kernel(x, y, y)`): one buffer, as on a device - two copies let the
        # later copy-back, not the kernel's later write, decide (red team s31 k02); read if any parameter reads it
        for i, same in enumerate(alias):
            if same is not None and (isinstance(same, bool) or not isinstance(same, int) or not 0 <= same < i
                                     or alias[same] is not None or shapes[i] != shapes[same]
                                     or dtypes[i] != dtypes[same]):
                raise Violation(f"kernel call {n_call + 1}: argument {i + 1}'s alias must name an earlier argument "
                                f"of the same shape and dtype that is no alias itself")
        write_only = group_write_only(list(write_only), alias)
        first = len(self.buffers)
        partial: list[int] = []  # the uninitialised arguments: of those, the written elements only go back (below)
        for i, (p, desc) in enumerate(zip(params, descs, strict=True)):
            label = f"argument {p.name!r} of kernel {kernel!r} (kernel call {n_call + 1})"
            same = alias[i]
            if same is not None:
                if not args[same].flags.writeable and getattr(p, "written", True):  # `kernel(x, x)` into an input
                    args[same] = args[same].copy()
                    built_roots[same] = None
                    self.allocated += args[same].nbytes
                    if self.allocated > self.budget:
                        raise Violation(f"{label}: the wrapper call allocated more than {self.budget} bytes on the "
                                        f"device")
                args.append(args[same])
                built_roots.append(first + same if built_roots[same] is None else built_roots[same])
                inputs_only.append(inputs_only[same])
                blanks.append(blanks[same])
                sig.append(["alias", same])
                continue
            if desc == ["host"]:
                self.cheats.append(_unexplained(label, p, bool(write_only[i]) if i < len(write_only) else True))
                self.reply({"ok": False, "cheat": True})
                return
            try:
                b = build(desc, self.inputs, self.buffers, self.roots, self.budget - self.allocated)
            except DescError as exc:
                raise Violation(f"{label}: {exc}") from None
            arr = b.array
            from runtime.dtypes import name_of

            if list(arr.shape) != shapes[i] or name_of(arr.dtype) != dtypes[i]:
                raise Violation(f"{label}: the descriptor builds {name_of(arr.dtype)}{list(arr.shape)} but the "
                                f"candidate passed {dtypes[i]}{shapes[i]}")
            wo = bool(write_only[i])
            uninit = isinstance(desc, list) and desc[:1] == ["uninit"]
            if uninit and not wo and arr.size:  # zero elements carry nothing
                raise Violation(f"{label}: described as uninitialised memory, but the kernel reads it")
            if not uninit and _digest(arr) != digests[i]:
                self.cheats.append(f"{label} was changed on the host before the kernel call (its bytes are not what "
                                   f"the device derives from the inputs)")
                self.reply({"ok": False, "cheat": True})
                return
            if not arr.flags.c_contiguous or (not arr.flags.writeable and getattr(p, "written", True)):
                arr = np.ascontiguousarray(arr).copy()
                b.root = None
            if b.root is None:
                self.allocated += arr.nbytes
                if self.allocated > self.budget:
                    raise Violation(f"{label}: the wrapper call allocated more than {self.budget} bytes on the device")
            if uninit:
                partial.append(i)
            args.append(arr)
            built_roots.append(b.root)
            inputs_only.append(b.inputs_only and not b.host_layout)
            blanks.append(b.blank)
            sig.append(signature(desc, wo))
        options = self.options
        if partial:  # which elements of them the kernel writes
            import dataclasses

            options = dataclasses.replace(options, track_writes=True)
        try:
            res = execute(program, args, options)
        except ProgramError as exc:  # the arguments do not fit the program's parameters
            raise Violation(f"kernel call {n_call + 1}: {exc}") from None
        except Exception as exc:
            raise DeviceFailure(f"{type(exc).__name__}: {exc}") from exc
        for i, arr in enumerate(args):
            self.buffers.append(arr)
            root = built_roots[i]
            self.roots.append(first + i if root is None else root)
            if root is None and blanks[i]:
                self.blank_roots.add(first + i)
            elif root is None and inputs_only[i]:
                self.input_roots.add(first + i)
        written = sorted(set(int(w) for w in res.written))
        for w in written:
            self.written_roots.add(self.roots[first + w])
        error = None
        if res.error is not None:
            e = res.error
            error = {k: getattr(e, k, None) for k in ("code", "message", "file", "line", "op", "kind")}
        self.kernels.append({"kernel": kernel, "error": error, "written": written,
                             "counters": dict(res.counters or {}),
                             "warnings": [{k: getattr(w, k, None) for k in ("code", "message", "file", "line", "op")}
                                          for w in (res.warnings or [])]})
        self.signature.append(hashlib.sha256(blob + json.dumps(sig, sort_keys=True).encode()).hexdigest())
        # one blob per buffer the kernel wrote (an alias group's first argument stands for the group), nothing for
        # the others; of an uninitialised one the kernel wrote in part, the written elements only (a packed mask after
        # the data). What is not sent keeps the candidate's own bytes, as on a device and in a user's run (red team
        # s31, k04: the device's NaN fill sent back was a tell - a spare argument that came back NaN only under
        # verification; in the unwritten part of a buffer, the same tell one tile later)
        group: dict[int, list[int]] = {}
        for i in range(n):
            group.setdefault(i if alias[i] is None else alias[i], []).append(i)
        back = [r for r, members in group.items() if any(m in written for m in members)]
        blobs = [_raw(args[i]) for i in back]
        masks: list[list[int]] = []
        for pos, r in enumerate(back):
            if r not in partial:
                continue
            got = [(res.write_masks or {}).get(m) for m in group[r] if m in written]
            if not got or any(m is None or m.shape != args[r].shape for m in got):
                continue  # a write the masks do not cover: the whole buffer, as before
            m = np.logical_or.reduce(got) if len(got) > 1 else got[0]
            if not m.all():
                masks.append([pos, len(blobs)])
                blobs.append(memoryview(np.packbits(m.reshape(-1))))
        self.reply({"ok": True, "first_id": first, "error": error, "back": back, "masks": masks,
                    "counters": dict(res.counters or {}),
                    "warnings": self.kernels[-1]["warnings"], "written": written}, blobs)

    def on_end(self, head: dict[str, Any]) -> None:
        if not self.open:
            raise Violation("a wrapper call ended that never began")
        self.finish_call(head)
        self.reply({"ok": True})

    def _ship(self, entry: dict[str, Any], array: Any, blobs: list[memoryview]) -> int:
        """Mark ``entry`` as a good output whose bytes are ``array`` (ulp noise in test mode); returns its size."""
        from runtime.dtypes import name_of

        out = self.noise.perturb(array) if self.noise is not None else array
        entry.update(ok=True, dtype=name_of(out.dtype), shape=list(out.shape), blob=len(blobs))
        blobs.append(_raw(out))
        return int(out.nbytes)

    def finish_call(self, head: dict[str, Any] | None = None, *, incomplete: bool = False) -> None:
        from runtime.sandbox._desc import (
            DescError,
            build,
            build_join,
            canonical_nans,
            honest_cast,
            output_root,
            value_cast_source,
        )

        self.open = False
        outputs: list[dict[str, Any]] = []
        blobs: list[memoryview] = []
        leaves = (head or {}).get("outputs")
        raised = bool((head or {}).get("raised"))
        out_bytes = 0
        if not incomplete and not raised:
            if not isinstance(leaves, list) or len(leaves) > 256:
                raise Violation("the wrapper's outputs are not described")
            for j, leaf in enumerate(leaves):
                if not isinstance(leaf, dict):
                    raise Violation(f"output {j} is not described")
                entry: dict[str, Any] = {"kind": str(leaf.get("kind"))[:40]}
                desc = leaf.get("desc")
                if entry["kind"] != "ndarray":
                    outputs.append(entry)
                    continue
                if desc == ["host"] or not isinstance(desc, list):
                    entry["problem"] = "was not written by the jit kernel (computed on the host)"
                    outputs.append(entry)
                    continue
                if desc[:1] == ["join"]:  # the union of several kernel-written pieces (A14)
                    try:
                        joined = build_join(desc, self.inputs, self.buffers, self.roots,
                                            self.written_roots | self.blank_roots, self.budget - out_bytes)
                    except DescError as exc:
                        entry["problem"] = f"was not written by the jit kernel (its description was refused: {exc})"
                        outputs.append(entry)
                        continue
                    if _digest(joined) != leaf.get("digest"):
                        entry["problem"] = "was written on the host after the kernel call"
                        outputs.append(entry)
                        continue
                    out_bytes += self._ship(entry, joined, blobs)
                    outputs.append(entry)
                    continue
                try:
                    b = build(desc, self.inputs, self.buffers, self.roots, self.budget)
                except DescError as exc:
                    entry["problem"] = f"was not written by the jit kernel (its description was refused: {exc})"
                    outputs.append(entry)
                    continue
                root = output_root(desc, self.roots)
                # one rounding or exactly widening cast of what a kernel wrote (an fp32 kernel and `y.to(x.dtype)`,
                # int32 ids and `.long()` in the wrapper): the device's own cast of its bytes (`_desc.value_cast_source`)
                cast_src = value_cast_source(desc) if b.host_layout else None
                if cast_src is not None:
                    try:
                        inner = build(cast_src, self.inputs, self.buffers, self.roots, self.budget)
                    except DescError:
                        inner = None
                    if (inner is not None and not inner.host_layout
                            and honest_cast(inner.array.dtype, b.array.dtype)):
                        root = output_root(cast_src, self.roots)
                    else:
                        cast_src = None
                # a view never holds more elements than the buffer it views: a broadcast (stride-0) view of one
                # element with millions of them made the device materialise and send gigabytes (attacks A3, A3b)
                base = self.buffers[root] if root is not None and 0 <= root < len(self.buffers) else None
                if b.array.size > (base.size if base is not None else b.array.size) or (b.array.size and any(
                        st == 0 and n > 1 for st, n in zip(b.array.strides, b.array.shape, strict=True))):
                    entry["problem"] = (f"is a broadcast or overlapping view ({b.array.size} elements over a buffer of "
                                        f"{base.size if base is not None else 0}): not what the kernel wrote")
                    outputs.append(entry)
                    continue
                if out_bytes + b.array.nbytes > self.budget:
                    entry["problem"] = f"makes this call's outputs larger than {self.budget} bytes"
                    outputs.append(entry)
                    continue
                # a kernel argument the wrapper allocated as a fill and no kernel wrote is judged on its numbers
                # (a 0-trip loop leaves the zeros); anything else an output may be must come from a kernel
                allowed = root is not None and (root in self.written_roots or root in self.blank_roots)
                if (b.host_layout and cast_src is None) or not allowed:
                    from_input = b.inputs_only or (b.root is not None and b.root in self.input_roots)
                    cast = "cast" in json.dumps(desc)
                    entry["problem"] = (
                        "is a dtype cast made on the host of what the kernel wrote (an output is the kernel's bytes, or "
                        "one float-to-float or exactly widening cast of them: cast inside the kernel with pypto.cast)"
                        if cast else "is a copy of a wrapper input, not written by the jit kernel" if from_input else
                        "was not written by the jit kernel in this call (computed on the host)")
                    outputs.append(entry)
                    continue
                if _digest(canonical_nans(b.array) if cast_src is not None else b.array) != leaf.get("digest"):
                    entry["problem"] = "was written on the host after the kernel call"
                    outputs.append(entry)
                    continue
                out_bytes += self._ship(entry, b.array, blobs)
                outputs.append(entry)
        counters: dict[str, Any] = {}
        for k in self.kernels:
            for key, val in (k["counters"] or {}).items():
                if isinstance(val, int | float) and not isinstance(val, bool):
                    counters[key] = counters.get(key, 0) + val
        self.emit(b"CASE", {
            "case": self.plan[self.run_index], "run": self.run_index, "incomplete": incomplete, "raised": raised,
            "kernel_calls": len(self.kernels), "kernels": self.kernels, "cheats": self.cheats,
            "outputs": outputs, "signature": self.signature, "counters": counters,
            "duration_s": round(time.perf_counter() - self.t0, 6)}, blobs)
        self.buffers, self.roots, self.written_roots = [], [], set()
        self.input_roots, self.blank_roots = set(), set()


def main(argv: list[str]) -> int:
    req_fd, resp_fd, out_fd = (int(a) for a in argv[1:4])
    request = json.loads(sys.stdin.buffer.read())
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.realpath(p) != here]
    sys.path.insert(0, request["repo_root"])
    sys.dont_write_bytecode = True
    from runtime import testmodes
    from runtime.emulator.device._pages import no_hugepage_advice

    no_hugepage_advice()  # the device executes every kernel of a verification: no THP compaction stalls (`device._pages`)

    # test mode only (simulated other machines): the device's ops and the outputs it hands over get ulp noise
    noise = testmodes.activate_in_child(testmodes.take_seed(argv))
    dev = Device(request, req_fd, resp_fd, out_fd)
    dev.noise = noise
    try:
        dev.serve()
    except BaseException as exc:  # noqa: BLE001 - the device's own failure: reported, the parent says ERROR
        import traceback

        from runtime.sandbox._channel import pack, send

        try:
            send(out_fd, b"FAIL", pack({"error": f"{type(exc).__name__}: {exc}"[:2000],
                                        "trace": traceback.format_exc()[-4000:]}))
        except OSError:
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    sys.exit(main(sys.argv))
