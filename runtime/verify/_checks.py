"""The anti-gaming checks of verify, one small named function each.

Every check reads what the run established (:class:`Evidence`) and returns the cheats it found as sentences that
name the case and the output or input concerned; any cheat makes the verdict ``FAIL_CHEAT``. Each docstring
names the hostile candidate(s) in ``tests/verify/hostile`` or ``tests/redteam`` that motivate it, so that a check
is never removed without its test failing.

What the checks rely on, and why it holds: outputs and post-call inputs come from the sandbox's result channel,
parsed by the parent after the whole sandbox is dead (a process still running cannot change them); the inputs
given to the child are the parent's own arrays; the "snapshot at kernel return" is taken by the runner before
control returns to the wrapper. A candidate that subverts the Python runtime of its own process can still lie
about *how* it computed an output (docs/verification.md, "limits"); lint is the static line against that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from runtime.sandbox import CandidateRun, RunOutput

__all__ = ["ANTI_GAMING_CHECKS", "Evidence", "run_checks"]


@dataclass
class Evidence:
    """What one verification run established, as the checks see it."""

    run: CandidateRun
    case_names: list[str]
    given: dict[str, list[np.ndarray]]
    """case -> the input arrays the parent sent (in wrapper parameter order)."""
    expected: dict[str, list[np.ndarray]]
    """case -> the golden leaves."""
    params: list[str]
    leaves: list[str]
    files: dict[str, Path] = field(default_factory=dict)
    unseen: frozenset[str] = frozenset()
    """Names of the unseen cases (drawn per run; see ``runtime.opdir._unseen``)."""
    shapes: dict[str, tuple] = field(default_factory=dict)
    """case -> (dims, dtype): calls with equal keys ran the same shapes on other input values."""
    device: bool = False
    """Kernels executed in the device process: the device's record decides (``record["device"]``)."""
    file_hashes: dict[str, str] = field(default_factory=dict)
    hash_file: Callable[[Path], str] | None = None
    failed: frozenset[str] = frozenset()
    """Cases whose first run already failed the comparison (their verdict is a failure whatever the checks say)."""

    def primary(self) -> list[tuple[str, RunOutput]]:
        """(case name, its first run) for every case that produced a result without raising, in case order."""
        first: dict[str, RunOutput] = {}
        for r in self.run.runs:
            first.setdefault(r.case, r)
        return [(name, first[name]) for name in self.case_names
                if name in first and not first[name].record.get("error")]

    def leaf(self, j: int) -> str:
        return f"output[{j}] ({self.leaves[j]})" if j < len(self.leaves) else f"output[{j}]"


def _same_bytes(a: np.ndarray, b: np.ndarray) -> bool:
    """Bitwise equality without copying either array (``tobytes`` held two more copies of a GB output)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.size == 0:
        return True
    return bool(np.array_equal(np.ascontiguousarray(a).reshape(-1).view(np.uint8),
                               np.ascontiguousarray(b).reshape(-1).view(np.uint8)))


_CHUNK = 1 << 22


def _equal_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal as float64 values (NaN equals NaN), chunk by chunk: float64 copies of two whole GB-sized leaves were
    four times their size again."""
    if a.shape != b.shape:
        return False
    fa, fb = a.reshape(-1), b.reshape(-1)
    try:
        return all(np.array_equal(fa[i:i + _CHUNK].astype(np.float64), fb[i:i + _CHUNK].astype(np.float64),
                                  equal_nan=True) for i in range(0, fa.size, _CHUNK))
    except (TypeError, ValueError):
        return False


def _is_constant(a: np.ndarray) -> bool:
    if a.size < 2:
        return False
    flat = a.reshape(-1)
    if flat.dtype.kind not in "fiub":  # bf16/fp8 and friends: compare as float32, chunked to bound memory
        return all(_is_constant_chunk(flat[i:i + (1 << 24)].astype(np.float32), flat[:1].astype(np.float32))
                   for i in range(0, flat.size, 1 << 24))
    return _is_constant_chunk(flat, flat[:1])


def _is_constant_chunk(flat: np.ndarray, first: np.ndarray) -> bool:
    """Every element equals ``first[0]`` (or every element is NaN), in the array's own dtype (a float64 copy of a
    several-GB output cost twice its size again)."""
    with np.errstate(invalid="ignore"):
        if bool(np.all(flat == first[0])):
            return True
        return flat.dtype.kind == "f" and bool(np.all(np.isnan(flat)))


def _dev(r: RunOutput) -> dict[str, Any]:
    return r.record.get("device") or {}


def _digest(a: np.ndarray) -> int:
    import zlib

    c = np.ascontiguousarray(a)
    return zlib.crc32(c.reshape(-1).view(np.uint8).data) if c.size else 0


# ------------------------------------------------------------------------------------------------ the checks


def sandbox_denials(ev: Evidence) -> list[str]:
    """The candidate tried something the sandbox refused (file outside its view, process, socket, signal).

    Hostile: ``read_golden_from_disk``, ``spawn_process``, ``network_exfiltration``, redteam ``proc_parent_cmdline``,
    ``signal_parent``, ``write_site_packages``.
    """
    if not ev.run.denied:
        return []
    return ["the sandbox denied: " + "; ".join(sorted(set(ev.run.denied))[:10])]


def result_channel_intact(ev: Evidence) -> list[str]:
    """The result channel holds exactly the runner's frames: nothing after ``DONE``, no torn or foreign frames.

    Redteam: ``forge_results_thread`` (a thread that keeps writing results after the wrapper returned),
    ``forge_channel_bytes``.
    """
    return [ev.run.protocol_violation] if ev.run.protocol_violation else []


def device_record_complete(ev: Evidence) -> list[str]:
    """Every wrapper call that returned told the device about it: the device's record exists, and it has as many
    outputs as the wrapper returned (device mode).

    Redteam: ``device_skip_end_frame``, ``device_extra_outputs``.
    """
    if not ev.device:
        return []
    out = []
    for name, r in ev.primary():
        dev = r.record.get("device")
        if dev is None:
            out.append(f"case {name}: the wrapper call never reached the device (its kernels did not run there)")
        elif dev.get("incomplete") or dev.get("raised"):
            out.append(f"case {name}: the wrapper returned but the device saw the call fail or never end")
        elif len(dev.get("outputs") or []) != int(r.record.get("n_outputs", 0) or 0):
            out.append(f"case {name}: the wrapper returned {r.record.get('n_outputs')} output(s) but described "
                       f"{len(dev.get('outputs') or [])} to the device")
    return out


def device_cheats(ev: Evidence) -> list[str]:
    """What the device refused while executing: a kernel argument that is host data (not an input, a buffer a
    kernel wrote, a constant, or a layout/cast/padding of one), or whose bytes differ from what the device
    derives from the inputs (computed or changed on the host before the kernel).

    Redteam: ``host_result_as_extra_arg``, ``host_result_through_identity_kernel``, ``prescale_input_then_restore``.
    """
    out = []
    for run in ev.run.runs:
        for cheat in _dev(run).get("cheats") or []:
            out.append(f"case {run.case}: {cheat}")
    return list(dict.fromkeys(out))


def same_program_for_same_shapes(ev: Evidence) -> list[str]:
    """Calls with the same shapes and other input values send the device the same kernel programs and argument
    descriptions: constants, scalar arguments and buffer choices are functions of shapes, never of input values
    (a value computed on the host and baked into ``pypto.full`` or a scalar argument would otherwise pass).

    Redteam: ``smuggle_answer_in_full_constant``, ``smuggle_scalar_argument``, ``fingerprint_public_inputs``.
    """
    if not ev.device:
        return []
    seen: dict[tuple, tuple[str, list[Any]]] = {}
    out = []
    for run in ev.run.runs:
        dev = run.record.get("device")
        if dev is None or run.record.get("error") or dev.get("raised") or run.case not in ev.shapes:
            continue
        key = ev.shapes[run.case]
        sig = list(dev.get("signature") or [])
        if key not in seen:
            seen[key] = (run.case, sig)
        elif seen[key][1] != sig:
            first = seen[key][0]
            out.append(f"case {run.case}: the kernel program or its arguments differ from those of case {first} "
                       f"(same shapes, other input values): the kernel depends on input values computed on the "
                       f"host (constants or scalar arguments), or on how its caller called the wrapper (input "
                       f"layout, autograd mode)")
    return list(dict.fromkeys(out))


def kernel_called_once(ev: Evidence) -> list[str]:
    """The wrapper calls its jit kernel exactly once per call.

    Hostile: ``kernel_called_twice``, ``no_kernel_call``, ``bypass_counting_jit``.
    """
    out = []
    for name, r in ev.primary():
        if ev.device:
            calls = int(_dev(r).get("kernel_calls", 0) or 0)
            if calls != 1:
                out.append(f"case {name}: the wrapper called the jit kernel {calls} time(s); exactly once per call is "
                           f"required")
            continue
        calls = int(r.record.get("kernel_calls", 0))
        counted = (r.record.get("counters") or {}).get("runs")  # the emulator session's own count, if kept
        if calls != 1 or (isinstance(counted, int) and counted != 1):
            shown = calls if calls != 1 else counted
            out.append(f"case {name}: the wrapper called the jit kernel {shown} time(s); exactly once per call is "
                       f"required")
    return out


DEVICE_ONLY_CODES = frozenset({"EMU_RUNTIME", "EMU_POISON", "EMU_UNINIT", "EMU_READ_OOB", "EMU_INDEX_OOB", "EMU_LIMIT",
                               "EMU_PARALLEL_OVERLAP"})
"""error codes only the device executor raises (`runtime.emulator.device`): never the tracer in the candidate's process"""


def kernel_errors_from_the_device(ev: Evidence) -> list[str]:
    """A run that failed with an error only the device executor raises, while the device ran no failing kernel: the
    kernel executed somewhere else - in the candidate's own process, after it switched the executor seam back and
    patched the numpy that executor uses (the patch crashed, so no output reached the other checks).

    Redteam: ``swap_executor_back_in_process``.
    """
    if not ev.device:
        return []
    out = []
    for run in ev.run.runs:
        err = run.record.get("error") or {}
        if err.get("code") not in DEVICE_ONLY_CODES:
            continue
        dev = _dev(run)
        if not any(k.get("error") for k in dev.get("kernels") or []):
            out.append(f"case {run.case}: the kernel failed with {err.get('code')}, an error only the device executor "
                       f"raises, but the device ran the kernel {int(dev.get('kernel_calls', 0) or 0)} time(s) without "
                       f"an error: it was executed outside the device process")
    return list(dict.fromkeys(out))


def kernel_errors_not_swallowed(ev: Evidence) -> list[str]:
    """A kernel that raised cannot be hidden by a wrapper that catches the error and returns something else.

    Hostile: ``try_except_fallback``.
    """
    out = []
    for name, r in ev.primary():
        errors = [k["error"] for k in _dev(r).get("kernels") or [] if k.get("error")] if ev.device else \
            r.record.get("kernel_errors")
        if errors:
            err = errors[0]
            out.append(f"case {name}: the kernel raised {err.get('code') or err.get('type')} "
                       f"({str(err.get('message'))[:160]}) but the wrapper swallowed it and returned outputs")
    return out


def inputs_unmodified(ev: Evidence) -> list[str]:
    """The inputs hold their given bytes after the call (the parent compares with its own copies).

    Hostile: ``modify_inputs``.
    """
    out = []
    for name, r in ev.primary():
        if ev.device:  # the child's digests of its inputs after the call (an early warning: the device computes
            # on its own copies, so a changed input can no longer change a result)
            after_digests = r.record.get("inputs_after") or []
            for j, (before, got) in enumerate(zip(ev.given[name], after_digests, strict=False)):
                if _digest(before) != got:
                    out.append(f"case {name}: the wrapper modified its input {ev.params[j]!r}")
            continue
        for j, (before, after) in enumerate(zip(ev.given[name], r.args_after, strict=False)):
            if not _same_bytes(before, after):
                out.append(f"case {name}: the wrapper modified its input {ev.params[j]!r}")
    return out


def inputs_intact_at_kernel_entry(ev: Evidence) -> list[str]:
    """The inputs still hold their given bytes when the kernel starts (no host pre-computation restored later).

    Redteam: ``prescale_input_then_restore``.
    """
    out = []
    for name, r in ev.primary():
        for j in r.record.get("inputs_changed_before_kernel") or []:
            if isinstance(j, int) and j < len(ev.params):
                out.append(f"case {name}: the wrapper changed input {ev.params[j]!r} before the kernel call")
    return out


def outputs_from_kernel(ev: Evidence) -> list[str]:
    """Every output equals (a view, reshape, cast or leading block of) what a kernel argument held at kernel return.

    Hostile: ``numpy_in_wrapper``; redteam ``host_copy_result``, ``torch_in_wrapper``.
    """
    out = []
    for name, r in ev.primary():
        if ev.device:
            for j, entry in enumerate(_dev(r).get("outputs") or []):
                if entry.get("kind") == "ndarray" and not entry.get("ok"):
                    out.append(f"case {name}: {ev.leaf(j)} {entry.get('problem') or 'was not written by the jit kernel'}")
            continue
        flags = r.record.get("from_kernel") or []
        after = r.record.get("written_after_kernel") or []
        for j, ok in enumerate(flags):
            if j < len(r.outputs) and r.outputs[j] is not None and not ok and not (j < len(after) and after[j]):
                out.append(f"case {name}: {ev.leaf(j)} was not written by the jit kernel (computed on the host in the "
                           f"wrapper)")
    return out


def no_host_write_after_kernel(ev: Evidence) -> list[str]:
    """An output buffer the kernel wrote was changed by host code after the kernel returned (snapshot differs).

    Redteam: ``alias_write_after_kernel``, ``copy_write_after_kernel``, ``helper_validate_fixup``, ``main_fixup``.
    """
    out = []
    for name, r in ev.primary():
        for j, after in enumerate(r.record.get("written_after_kernel") or []):
            if after:
                out.append(f"case {name}: {ev.leaf(j)} was written on the host after the kernel call")
    return out


def output_not_input_copy(ev: Evidence) -> list[str]:
    """An output equal to an input (when the golden's is not) is a pass-through, not a computation.

    Hostile: ``return_input``.
    """
    out = []
    for name, r in ev.primary():
        for j, (a, b) in enumerate(zip(r.outputs, ev.expected[name], strict=False)):
            if a is None:
                continue
            for k, inp in enumerate(ev.given[name]):
                if _equal_values(a, inp) and not _equal_values(b, inp):
                    out.append(f"case {name}: {ev.leaf(j)} is a copy of input {ev.params[k]!r}")
    return out


def output_not_constant(ev: Evidence) -> list[str]:
    """An output that is constant on every SPEC case where the golden's is not.

    Every such case, not any one: a kernel with a tail bug that writes nothing for a 1-row input (a SPEC may hold
    one) leaves that case's zeroed output constant, and a bf16 rounding can make a small-band case's output one
    value - numeric failures, not cheats (mutation sweep s30 got FAIL_CHEAT for three such honest bugs). A "return
    zeros" cheat, or a kernel that writes a constant, is constant on all of them. Not on unseen cases, for the same
    reason.

    Hostile: ``return_zeros``, ``kernel_writes_constant``.
    """
    judged: dict[int, list[str]] = {}
    constant: dict[int, list[str]] = {}
    for name, r in ev.primary():
        if name in ev.unseen:
            continue
        for j, (a, b) in enumerate(zip(r.outputs, ev.expected[name], strict=False)):
            if a is None or _is_constant(b):
                continue
            judged.setdefault(j, []).append(name)
            if _is_constant(a):
                constant.setdefault(j, []).append(name)
    return [f"case {name}: {ev.leaf(j)} is constant but the golden is not"
            for j, names in sorted(constant.items()) if names == judged[j] for name in names]


def _unrepeatable(ev: Evidence) -> list[str]:
    """Cases whose second run (later in the seeded call order) did not give the first run's bytes."""
    first: dict[str, RunOutput] = {}
    out: list[str] = []
    for again in ev.run.runs:
        if again.case not in first:
            first[again.case] = again
            continue
        one = first[again.case]
        if one.record.get("error"):
            continue
        if again.record.get("error") or len(again.outputs) != len(one.outputs) or not all(
            (a is None and b is None) or (a is not None and b is not None and _same_bytes(a, b))
            for a, b in zip(one.outputs, again.outputs, strict=True)
        ):
            out.append(again.case)
    return list(dict.fromkeys(out))


def deterministic_repeat(ev: Evidence) -> list[str]:
    """A case called again later in the (seeded) call order gives the same bytes (no state kept across calls, no
    randomness).

    Not on a case whose first run already failed the comparison: that case fails whatever this check says, and
    "cheat" first sent the debugger agent after state and randomness while the numbers said what was wrong (a
    bugged RoPE that left half of its output unwritten got FAIL_CHEAT). :func:`unrepeatable_failures` keeps the
    finding as a hint in the reasons.

    Hostile: ``cache_outputs``, ``nondeterministic``.
    """
    return [f"case {case} run twice gave different outputs (non-deterministic or state kept across calls)"
            for case in _unrepeatable(ev) if case not in ev.failed]


def unrepeatable_failures(ev: Evidence) -> list[str]:
    """The hint for failed cases that also differ run to run (not a cheat: see :func:`deterministic_repeat`)."""
    return [f"case {case}: run twice it also gave different outputs (state kept across calls, randomness, or a "
            f"read of memory nothing wrote) - the numbers above fail either way"
            for case in _unrepeatable(ev) if case in ev.failed]


def input_files_unchanged(ev: Evidence) -> list[str]:
    """SPEC.md, golden.py, the stage files are byte-identical after the run (nothing loosened a tolerance).

    Hostile: ``loosen_tolerance``.
    """
    if ev.hash_file is None:
        return []
    out = []
    for k, path in ev.files.items():
        now = ev.hash_file(path) if path.is_file() else "missing"
        if now != ev.file_hashes.get(k):
            out.append(f"{k} changed while the candidate ran")
    return out


ANTI_GAMING_CHECKS: tuple[Callable[[Evidence], list[str]], ...] = (
    sandbox_denials, result_channel_intact, device_record_complete, device_cheats, same_program_for_same_shapes,
    kernel_called_once, kernel_errors_from_the_device, kernel_errors_not_swallowed, inputs_unmodified,
    inputs_intact_at_kernel_entry, no_host_write_after_kernel, outputs_from_kernel, output_not_input_copy,
    output_not_constant, deterministic_repeat, input_files_unchanged,
)
"""Run in this order; all of them always run (a report lists every cheat found, not only the first)."""


def run_checks(ev: Evidence) -> list[str]:
    """All cheats found by :data:`ANTI_GAMING_CHECKS`, in check order, duplicates dropped."""
    found: list[str] = []
    for check in ANTI_GAMING_CHECKS:
        found.extend(check(ev))
    return list(dict.fromkeys(found))


def names() -> list[str]:
    """The check names (documentation and tests)."""
    return [c.__name__ for c in ANTI_GAMING_CHECKS]


def describe(check: Callable[..., Any]) -> str:
    """First docstring line of a check."""
    return (check.__doc__ or "").strip().splitlines()[0]
