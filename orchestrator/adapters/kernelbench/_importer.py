"""``python -m orchestrator import TASK.py DEST``: a KernelBench-format task file as a PTO Forge op dir.

A task file defines a torch ``Model`` (``__init__(*get_init_inputs())``, ``forward(*get_inputs())``) and,
in the gym's benchmark, the hints ``FORMULA`` (index notation) and ``DYNAMIC_AXIS`` (which index letters are
dynamic). The import writes:

* ``SPEC.md``: the ``forward`` inputs with their dtypes from ``get_inputs()``, then the model's parameters
  (``nn.Parameter`` s are inputs of the kernel: a kernel cannot know weights drawn inside the golden), dim
  names from ``FORMULA``, ``dynamic_axes`` from ``DYNAMIC_AXIS``; P0 cases that shrink the dynamic axes to
  at most 64 (KernelBench sizes are GPU timing sizes; the emulator verifies every case on the CPU) plus a tail
  case (+13) that is not a multiple of 16; value ranges from ``get_inputs()``'s own samples; tolerances from one
  per-dtype table (:data:`TOLERANCE`);
* ``golden.py``: the task file unchanged, then ``golden(...)``, which runs ``Model.forward`` on torch CPU
  with the op dir's inputs and parameters (``torch.func.functional_call``), in training mode as KernelBench
  runs it; the inventory header lists the torch calls ``forward`` made, each with its PyPTO route;
* ``IMPORT.md``: what was inferred and what could not be mapped.

Structured inputs (a sorted offsets vector or block table, a length equal to another input's axis, or integer
inputs on which the model fails when they are drawn independently) cannot be drawn from a range: golden.py then
also gets a ``make_inputs(case, rng)`` that runs the task's own ``get_inputs()`` seeded from the case seed, keeps
its integer / bool inputs and draws every float input from the case's value band, so that every seed still gives
other float values (verification's unseen seeds must not repeat a case). ``get_inputs()`` has the task's sizes
built in, so such an op dir has one P0 shape, the task's own, and no dynamic axis (IMPORT.md says why).

The task file is third-party code: it runs only in :mod:`._probe` children started by
:func:`runtime.sandbox.run_process` (allow-listed environment), and the written op dir must pass
``intake`` (its golden run on every case) before anything is written to ``DEST``. A task that cannot be
imported is one line saying why (:class:`TaskImportError`).
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from orchestrator.adapters.kernelbench._formula import formula_outputs, formula_tensors, match_params
from orchestrator.adapters.kernelbench._ops import NO_EQUIVALENT, classify
from orchestrator.adapters.kernelbench._probe import (
    CPU_ONLY,
    CUDA_DEVICES,
    FRESH_STATE,
    OUTPUT_ELEMENTS,
    SORTED_TOPK,
    names_cuda,
    too_large,
)
from runtime import pyast

__all__ = ["TOLERANCE", "TaskImport", "TaskImportError", "import_task", "is_task_file", "task_op_name"]

_PROBE = Path(__file__).with_name("_probe.py")
_TORCH_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int8": "int8",
                 "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool"}
TOLERANCE = {"fp32": {"atol": 1e-4, "rtol": 1e-4}, "fp64": {"atol": 1e-6, "rtol": 1e-6},
             "fp16": {"atol": 1e-2, "rtol": 1e-2}, "bf16": {"atol": 1e-2, "rtol": 1e-2}}
"""Per-dtype tolerance (KernelBench's habit of one table per precision: fp32 1e-4, half types 1e-2)."""
MAX_DYNAMIC = 64
"""Largest size a dynamic axis gets in the P0 cases (the task's own size when smaller)."""
MAX_ELEMENTS = 1 << 20
"""The first P0 case keeps every input at or under this many elements where halving dynamic axes can."""
MAX_FIXED_ELEMENTS = 1 << 24
"""A task whose sizes cannot be shrunk (no dynamic axis) is refused above this many elements in one input."""
MAX_MACS = 1 << 32
"""Without a DYNAMIC_AXIS hint, a task whose ``forward`` is more multiply-adds than this at its own sizes (by the
meta run's count, ``peak["macs"]``) is too large to verify as it is (:func:`_too_large`), like one over the
element bounds: a 4096 x 4096 x 4096 product (6.9e10, 2^36) builds no tensor over them, and every case of its op
dir would have cost the emulator that many. 2^32 is a 1024-row GEMM with a 2048 x 2048 weight; a 1024^3 product
(2^30) stays at its size."""
TAIL = 13
"""Added to a dynamic axis for the tail case (a partial 16-row tile)."""


STRUCTURE_SEEDS = (1000, 1001)
"""Seeds under which the import runs ``get_inputs()`` to check that a written ``make_inputs`` can reproduce its
structured inputs (the first twice: same seed, same bytes; the second: same shapes)."""


class TaskImportError(ValueError):
    """The task cannot be imported (one line saying why; nothing was written)."""


class _ModelRefused(TaskImportError):
    """The model itself cannot have a golden (it keeps state across calls): no retry with other inputs helps."""


class _InputsRejected(TaskImportError):
    """The model or its golden failed on independently drawn inputs (a trace or intake failure): a task with
    integer inputs is then retried with inputs from its own ``get_inputs()`` (see :func:`_structured_path`)."""


class TaskImport(BaseModel):
    """What an import wrote and inferred (also in IMPORT.md)."""

    task: str
    """The task file's name."""
    level: str = ""
    """Its folder (``level1``, ``pto_case``): the benchmark level it belongs to."""
    op_name: str
    written: list[str] = Field(default_factory=list)
    dynamic_axes: list[str] = Field(default_factory=list)
    p0_shapes: list[dict[str, int]] = Field(default_factory=list)
    cases: int = 0
    """Verification cases of the written op dir (intake's count)."""
    unmapped: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    unstructured: list[str] = Field(default_factory=list)
    """Inputs that get_inputs() builds with a matrix structure (symmetric, triangular, diagonal) the op dir's drawn
    values do not have (also in SPEC.md's prose: a kernel must not rely on it)."""
    contract: list[str] = Field(default_factory=list)
    """Where golden.py fixes what the task leaves open (``topk(sorted=False)``'s order): said in SPEC.md's prose."""
    constant_outputs: dict[str, str] = Field(default_factory=dict)
    """Outputs marked ``constant: true`` -> what intake saw (all zeros / one value / the same for two seeds)."""


def is_task_file(path: str | Path) -> bool:
    """A ``.py`` file that defines ``class Model`` and ``get_inputs`` (read as text, never executed)."""
    p = Path(path)
    if not p.is_file() or p.suffix != ".py":
        return False
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return bool(re.search(r"^class Model\b", text, re.M)) and bool(re.search(r"^def get_inputs\b", text, re.M))


def task_op_name(path: str | Path) -> str:
    """``30_Gemm_GroupNorm_Hardtanh.py`` -> ``gemm_groupnorm_hardtanh`` (a Python identifier)."""
    stem = re.sub(r"^\d+_", "", Path(path).stem)
    name = re.sub(r"[^0-9a-zA-Z]+", "_", stem).strip("_").lower() or "task"
    return name if not name[0].isdigit() else f"op_{name}"


# ------------------------------------------------------------------------------------------------ probing


def _probe(request: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run the probe child (the task's code) through the project's one subprocess runner."""
    from runtime.sandbox import Limits, private_dir, run_process

    request = {**request, "stop": sorted(NO_EQUIVALENT)}  # the meta runs stop at a call with no route
    with private_dir("forge-task-") as work:
        limits = Limits(wall_s=timeout, cpu_s=int(timeout) + 30, memory_bytes=16 * 1024**3, max_open_files=1024,
                        max_file_bytes=None, max_processes=None)
        proc = run_process([sys.executable, "-s", "-B", str(_PROBE), "{channel_fd}"], work=work, limits=limits,
                           profile="trusted", stdin=json.dumps(request).encode(), channel=True,
                           channel_cap=64 << 20)
    if proc.timed_out:
        raise TaskImportError(f"running the task took longer than {timeout:g} s")
    try:
        answer = json.loads(proc.channel.decode("utf-8"))
    except ValueError:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["(no output)"]
        if "No module named 'torch'" in proc.stderr.decode("utf-8", "replace"):
            tail = ["torch is not installed (task files are torch; pip install torch==2.13.0 for a CPU build)"]
        raise TaskImportError(f"the task process died (exit code {proc.returncode}): {tail[0][:300]}") from None
    return _checked(answer)


def _checked(answer: dict[str, Any]) -> dict[str, Any]:
    """A probe answer, or the one-line refusal it carries (an error of the task, a model that keeps state)."""
    if not answer.get("ok"):
        raise TaskImportError(f"the task fails when run: {answer.get('error')}")
    if answer.get("too_large"):
        raise _ModelRefused(f"forward would build {_built(answer['too_large'])}, too large to run every case here "
                            "(nothing was built: sizes from a run on the meta device)")
    if answer.get("state_changed") and answer.get("carried"):
        names = ", ".join(f"self.{n}" for n in answer["state_changed"])
        raise _ModelRefused(f"forward changes {names} and reads it on the next call: the model keeps state between "
                            "calls (the same inputs, or others, give another output than on a freshly built model), "
                            "so no golden can be compared; state built once from the shapes (a mask made on the "
                            "first call) is accepted")
    if answer.get("state_changed"):
        names = ", ".join(f"self.{n}" for n in answer["state_changed"])
        raise _ModelRefused(f"forward changes the model's tensor attribute(s) {names}: the model keeps state between "
                            "calls, so the same inputs give another output on the next call and no golden can be "
                            "compared")
    return answer


def _built(peak: dict[str, Any]) -> str:
    """What :func:`_probe.meta_peak` found, in words: the largest output, or the largest tensor and its call."""
    size, shape = max(((math.prod(s), s) for s in peak["outputs"]), default=(0, []))
    if size >= peak["elements"] or size > OUTPUT_ELEMENTS:
        return f"an output of {size:,} elements ({' x '.join(map(str, shape)) or 'a scalar'})"
    return f"a tensor of {peak['elements']:,} elements (the result of {peak['op']})"


# ------------------------------------------------------------------------------------------------ mapping


def _dtype(name: str) -> str:
    if name not in _TORCH_DTYPES:
        raise TaskImportError(f"torch dtype {name} has no PTO Forge equivalent")
    return _TORCH_DTYPES[name]


def _sig(x: float, up: bool) -> float:
    """``x`` rounded outward to 3 significant digits (a readable range that still contains the samples)."""
    if x == 0 or not math.isfinite(x):
        return 0.0
    e = math.floor(math.log10(abs(x))) - 2
    q = 10.0 ** e
    return float(f"{(math.ceil(x / q) if up else math.floor(x / q)) * q:.6g}")


def _value_spec(label: str, d: dict[str, Any], report: TaskImport) -> dict[str, Any]:
    """dtype / range / distribution of one input from its sample statistics (never its values)."""
    if d["dtype"] == "bool":
        return {"dtype": "bool"}
    if d.get("finite") is False:
        raise TaskImportError(f"{label}: get_inputs() gives it inf or nan values, which generated inputs cannot "
                              "reproduce")
    if d.get("integer"):
        if d.get("sorted"):
            raise TaskImportError(f"{label}: a sorted integer vector (offsets or lengths, e.g. cu_seqlens): random "
                                  "values in a range cannot express it (it needs a hand-written make_inputs)")
        ilo, ihi = int(d["min"]), int(d["max"])
        if d.get("bounds") and d["bounds"][1] > d["bounds"][0] and [ilo, ihi] != d["bounds"]:
            # randint's own range (the sample of 128 ids from randint(0, 512) spanned [9, 510])
            report.notes.append(f"{label}: range [{d['bounds'][0]}, {d['bounds'][1]}] of get_inputs()' randint "
                                f"(its sample spans [{ilo}, {ihi}])")
            ilo, ihi = int(d["bounds"][0]), int(d["bounds"][1])
        if ihi <= ilo:
            report.notes.append(f"{label}: constant {ilo} in get_inputs(); drawn from [{ilo}, {ilo + 1}]")
            ihi = ilo + 1
        return {"dtype": _dtype(d["dtype"]), "range": [ilo, ihi]}
    distinct = d.get("distinct")
    if distinct is not None and sorted(distinct) == [0.0, 1.0]:
        report.notes.append(f"{label}: only the values 0 and 1 in get_inputs() (a mask); declared bool, golden() "
                            f"hands the model {d['dtype']}")
        return {"dtype": "bool", "torch_dtype": d["dtype"]}
    mean, std = float(d.get("mean", 0.0)), float(d.get("std", 0.0))
    lo, hi = float(d.get("min", -1.0)), float(d.get("max", 1.0))
    if distinct is not None and len(distinct) == 2:  # labels or signs (hinge loss targets: -1 and 1)
        a, b = distinct
        where = ("in get_inputs() (labels or signs)" if not label.startswith("parameter ") else
                 "as __init__ draws it (signs or levels)")
        if label.startswith("input ") and sorted([a, b])[0] == 0:  # 0 and 1 / (1 - p): an inverted-dropout mask
            where = "in get_inputs() (a mask's two levels)"
        report.unstructured.append(f"{label} holds only the values {a:g} and {b:g} {where}; the op dir draws it "
                                   f"uniformly from [{a:g}, {b:g}], so a kernel must compute the general operation "
                                   "and not rely on two values")
        report.unmapped.append(report.unstructured[-1])
        return {"dtype": _dtype(d["dtype"]), "range": [a, b]}
    if d.get("structure"):
        report.unstructured.append(f"{label} is {d['structure']} in get_inputs(); the op dir draws it without that "
                                   "structure, so a kernel must compute the general operation and not rely on it")
        report.unmapped.append(report.unstructured[-1])
    if std == 0 or hi <= lo:
        c = float(lo)
        lo, hi = (c - 0.5, c + 0.5) if c == 0 else (min(0.5 * c, 1.5 * c), max(0.5 * c, 1.5 * c))
        report.notes.append(f"{label}: constant {c:g} in the task; drawn from [{lo:g}, {hi:g}] so that a kernel "
                            "that ignores it fails")
        return {"dtype": _dtype(d["dtype"]), "range": [lo, hi]}
    if d.get("within_1sd", 0.0) > 0.64:  # bell-shaped (randn): the same mean and sigma, clipped at 3 sigma and
        # never past the samples' own extremes (|randn| * 1e-6 stays non-negative: AdamW's v goes into a sqrt)
        return {"dtype": _dtype(d["dtype"]), "range": [_sig(max(mean - 3 * std, lo), False),
                                                        _sig(min(mean + 3 * std, hi), True)],
                "distribution": "normal"}
    return {"dtype": _dtype(d["dtype"]), "range": [_sig(lo, False), _sig(hi, True)]}


def _kept(d: dict[str, Any]) -> bool:
    """An input a written ``make_inputs`` takes from ``get_inputs()`` as it is: integers (indices, offsets,
    lengths, block ids), bools and 0/1 masks carry structure; other floats are drawn per value band."""
    if d.get("kind") != "tensor":
        return False
    distinct = d.get("distinct")
    return bool(d.get("integer")) or d["dtype"] == "bool" or (distinct is not None and sorted(distinct) == [0.0, 1.0])


DISTINCT_BY_CHANCE = 0.05
"""An integer input counts as distinct by design when values drawn independently from its range would all be
distinct with at most this probability (:func:`_distinct_by_design`)."""


def _distinct_by_design(d: dict[str, Any]) -> bool:
    """An integer input whose values never repeat in get_inputs() although independent draws from its range would:
    ``torch.randperm(n)[:T]`` slots of a KV-cache write. Drawn independently, two tokens wrote one slot, and which
    of them the golden kept was torch's choice (an index_put with repeated indices), not the task's.

    The test is the chance that n independent uniform draws from a span of R values are all distinct,
    prod_{i<n} (1 - i/R): at most :data:`DISTINCT_BY_CHANCE`. Round 3 asked only for n(n-1)/2 >= R (one expected
    repeat), which 20 ``randint`` token ids over 93 values pass by chance one time in nine (and the op dir then lost
    its dynamic axis for a "permutation" that was none); a full ``randperm(8)`` (8!/8^8 = 0.2%) is distinct by design
    at any size (the probe marks ``unique`` from 3 values on)."""
    if not d.get("unique") or "max" not in d:
        return False
    n, span = math.prod(d["shape"] or [1]), int(d["max"]) - int(d["min"]) + 1
    if n < 3 or n > span:
        return False
    chance = 1.0
    for i in range(1, n):
        chance *= 1.0 - i / span
        if chance <= DISTINCT_BY_CHANCE:
            return True
    return False


def _structured_reasons(plan: _Plan) -> list[str]:
    """Why independently drawn values cannot stand in for some integer input (one phrase each; empty: they can).

    Three signs, all read from ``get_inputs()``'s own sample: a sorted integer vector (offsets, block tables),
    distinct values that independent draws would repeat (:func:`_distinct_by_design`), or an integer input holding
    the size of an axis of another input (a length or an offset end such as ``npu_actual_q_len = [T1]``): values
    drawn from its range would point past that axis.
    """
    fwd = [t for t in plan.inputs if t["source"] == "forward"]
    reasons = []
    for t in fwd:
        d = t["desc"]
        if not d.get("integer") or d["dtype"] == "bool" or "max" not in d:
            continue
        if d.get("sorted"):
            reasons.append(f"{t['name']} is a sorted integer vector (offsets, lengths or block ids)")
            continue
        if _distinct_by_design(d):
            reasons.append(f"{t['name']} holds {math.prod(d['shape'])} distinct values (a permutation or unique "
                           f"slots) where values drawn from [{int(d['min'])}, {int(d['max'])}] would repeat")
            continue
        top = int(d["max"])
        if top < 2 or math.prod(d["shape"] or [1]) > 1024:
            continue
        hits = [f"{o['name']}.shape[{ax}]" for o in fwd if o is not t
                for ax, size in enumerate(o["desc"]["shape"]) if size == top]
        if hits:
            reasons.append(f"{t['name']} holds {top} = {hits[0]} (a length or offset tied to that shape)")
    for t in plan.inputs:  # a permutation drawn in __init__ (a buffer: torch.randperm(channels)) is an input too
        d = t["desc"]
        if t["source"] == "param" and d.get("integer") and d["dtype"] != "bool" and _distinct_by_design(d):
            t["distinct"] = True
            reasons.append(f"{t['name']} (drawn in __init__) holds {math.prod(d['shape'])} distinct values (a "
                           f"permutation) where values drawn from [{int(d['min'])}, {int(d['max'])}] would repeat; "
                           "make_inputs draws it as distinct values of that range")
    return reasons


def _ident(name: str, taken: set[str]) -> str:
    out = re.sub(r"\W", "_", name).strip("_") or "p"
    if out[0].isdigit() or out in taken:
        out = f"p_{out}"
    while out in taken:
        out += "_"
    taken.add(out)
    return out


class _Plan(BaseModel):
    """The SPEC being built: tensors with per-axis dim names and sizes."""

    inputs: list[dict[str, Any]] = Field(default_factory=list)
    """name, source (forward | param), param (dotted), shape (list of int | dim name), value spec."""
    dims: dict[str, int] = Field(default_factory=dict)
    dynamic: list[str] = Field(default_factory=list)
    consts: dict[int, Any] = Field(default_factory=dict)
    """Python values of ``get_inputs()`` (``eps``, ``top_k``) by position: passed to ``forward`` as they are."""
    peak: dict[str, Any] | None = None
    """What ``forward`` builds at the task's own sizes (:func:`_probe.meta_peak`), when it could run on the meta
    device."""
    guess: str = ""
    """``leading`` when the dynamic axis is round 5's leading-axis guess (no hint): a model that does not run so
    resized is planned again without it (:func:`_sized_axes`) before the task's own sizes are kept; ``sized`` when the
    dynamic axes are :func:`_sized_axes`' one dim per size (no hint): planned again with the leading axis alone when
    that does not run or its outputs' axes follow no dim (round 12, :func:`_second_plan`)."""


def _plan_inputs(desc: dict[str, Any], report: TaskImport, *, leading: bool = True, batch_only: bool = False) -> _Plan:
    """The SPEC's inputs, dims and dynamic axes from ``describe``'s finding; ``leading=False`` leaves round 5's
    leading-axis guess out, ``batch_only=True`` takes it also where only what forward builds is too large and leaves one
    dim per size out (the second plans of :func:`_random_path`)."""
    params = [p for p in desc["forward_params"] if p["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    values = desc["inputs"]
    if any(p["kind"] == "VAR_POSITIONAL" for p in desc["forward_params"]):
        names = [f"in{i}" for i in range(len(values))]
    else:
        if len(params) < len(values):
            raise TaskImportError(f"get_inputs() returns {len(values)} values, forward takes {len(params)}")
        names = [p["name"] for p in params[: len(values)]]
    plan = _Plan(peak=desc.get("peak"))
    for pos, (n, v) in enumerate(zip(names, values)):
        if v["kind"] == "scalar":  # eps, top_k, a dim: part of the op, like an init argument; golden passes it
            plan.consts[pos] = v["value"]
        elif v["kind"] != "tensor":
            raise TaskImportError(f"get_inputs() argument {n!r} is a {v.get('type')} ({v.get('repr', v.get('value'))}); "
                                  "only tensors (and Python numbers, kept as constants) can be kernel inputs")
    if plan.consts:
        report.notes.append("get_inputs() passes Python value(s) " + ", ".join(
            f"{names[i]} = {json.dumps(c)}" for i, c in plan.consts.items()) + ": constants of the op (golden() passes "
            "them to forward as the task does), not kernel inputs")
    positions = [i for i in range(len(values)) if i not in plan.consts]
    names, values = [names[i] for i in positions], [values[i] for i in positions]
    for d in desc["dropout"]:
        raise TaskImportError(f"module {d['module']} is dropout with p={d['p']:g} in training mode: the output is "
                              "random, so no golden can be compared")
    formula = desc.get("formula") or ""
    tensors = formula_tensors(formula)
    outputs_only = [n for n in formula_outputs(formula) if n not in names]
    axes = match_params(names, [len(v["shape"]) for v in values], tensors, outputs_only)
    dyn_hint = [a.upper() for a in desc.get("dynamic_axis", [])]
    for n, v in zip(names, values):  # no name match: the one same-rank formula tensor with the most dynamic indices
        if n in axes or not dyn_hint:
            continue
        scored = sorted(((sum(1 for i in idx if i in dyn_hint), name, idx) for name, lists in tensors.items()
                         for idx in lists if len(idx) == len(v["shape"])), key=lambda x: -x[0])
        if scored and scored[0][0] > 0 and (len(scored) == 1 or scored[1][0] < scored[0][0]):
            axes[n] = scored[0][2]
            report.unmapped.append(f"input {n}: no FORMULA tensor of that name; its axes are read from "
                                   f"{scored[0][1]}[{', '.join(i or '?' for i in scored[0][2])}] (same rank, most "
                                   "dynamic indices)")
    taken: set[str] = set()
    for pos, n, v in zip(positions, names, values):
        idx = axes.get(n, [None] * len(v["shape"]))
        shape: list[int | str] = []
        for ax, size in enumerate(v["shape"]):
            dim = idx[ax]
            if dim is not None and not dim.isidentifier():
                dim = None
            if dim is not None and plan.dims.setdefault(dim, size) != size:
                report.unmapped.append(f"FORMULA: index {dim} is {plan.dims[dim]} on one tensor and {size} on axis "
                                       f"{ax} of {n}; that axis keeps the fixed size")
                dim = None
            shape.append(dim if dim is not None else size)
        plan.inputs.append({"name": _ident(n, taken), "source": "forward", "shape": shape or [1], "desc": v,
                            "scalar": not shape, "pos": pos})
    if formula and len(axes) < len(names):
        missing = [n for n in names if n not in axes]
        report.unmapped.append(f"FORMULA names no tensor for input(s) {', '.join(missing)}; their axes are fixed sizes")
    plan.dynamic = [d for d in dict.fromkeys(dyn_hint) if d in plan.dims]
    lost = [d for d in dict.fromkeys(dyn_hint) if d not in plan.dims]
    leads = {t["shape"][0] for t in plan.inputs if t["source"] == "forward" and not t.get("scalar")}
    if not plan.dynamic and len(lost) == 1 and len(leads) == 1 and isinstance(plan.inputs[0]["shape"][0], int):
        # only when every forward input has the same leading size (else which one is dynamic is a guess)
        # KernelBench's convention: the one dynamic axis is the leading (batch / token) axis
        lead = plan.inputs[0]["shape"][0]
        for t in plan.inputs:
            if t["shape"] and t["shape"][0] == lead and not t.get("scalar"):
                t["shape"][0] = lost[0]
        plan.dims[lost[0]] = int(lead)
        plan.dynamic = lost
        report.unmapped.append(f"DYNAMIC_AXIS {lost[0]}: no input axis carries it in FORMULA; taken as the leading "
                               f"axis (size {lead}) of {', '.join(t['name'] for t in plan.inputs if t['shape'] and t['shape'][0] == lost[0])} "
                               "(KernelBench's convention), checked by running the model resized")
        lost = []
    if lost:
        lost = _lost_axes(plan, lost, desc.get("constants") or {}, report, _weight_sizes(desc))
    if lost:
        report.unmapped.append(f"DYNAMIC_AXIS {', '.join(lost)}: no input axis carries that index in FORMULA; not "
                               "dynamic in the op dir")
    if not desc.get("dynamic_axis"):
        why = (f"an input of {_largest_input(plan):,} elements is too large to verify at the task's sizes"
               if _largest_input(plan) > MAX_FIXED_ELEMENTS else
               f"forward would build {_built(plan.peak)} at the task's sizes, too large to verify"
               if plan.peak and too_large(plan.peak) else
               f"forward is {int(plan.peak['macs']):,} multiply-adds at the task's sizes (over {MAX_MACS:,} = 2^32), "
               "too many to verify every case" if plan.peak and _computes_too_much(plan) else
               f"forward would build {_built(plan.peak)} at the task's sizes, too large to verify" if plan.peak
               else "")
        sized = False
        if (leading and _leading_batch(plan, batch=batch_only)) or (
                not batch_only and not (sized := _sized_axes(plan, _weight_sizes(desc)))
                and leading and _leading_batch(plan, batch=True)):  # round 12: no axis over 64, a batch to shrink
            batch = plan.dynamic[0]
            report.unmapped.append(f"no DYNAMIC_AXIS hint, and {why}: the leading axis (size {plan.dims[batch]}) of "
                                   f"every tensor input, named {batch}, is taken as dynamic (KernelBench's batch_size "
                                   "convention), checked by running the model resized")
        elif sized:
            named = ", ".join(f"{plan.dims[d]} ({d})" for d in plan.dynamic)
            report.unmapped.append(f"no DYNAMIC_AXIS hint, and {why}, with no common leading axis small enough to "
                                   f"shrink alone: every input axis longer than {MAX_DYNAMIC} is taken as dynamic, "
                                   f"one dim per size: {named}, checked by running the model resized")
        else:
            report.unmapped.append("no DYNAMIC_AXIS hint: the op dir has no dynamic axis and no tail case")
    buffers = {b["name"] for b in desc.get("random_buffers", [])}
    for p in desc["parameters"] + desc.get("random_buffers", []):
        plan.inputs.append({"name": _ident(p["name"], taken), "source": "param", "param": p["name"],
                            "shape": list(p["shape"]) or [1], "desc": p, "scalar": not p["shape"],
                            "buffer": p["name"] in buffers})
    if desc.get("random_buffers"):
        report.notes.append("buffer(s) " + ", ".join(b["name"] for b in desc["random_buffers"]) + " are drawn at "
                            "random in __init__ (not parameters): inputs of the kernel too, handed to forward as the "
                            "parameters are")
    sampled = [t["name"] for t in plan.inputs if t["desc"].get("sampled")]
    if sampled:
        report.notes.append(f"input(s) {', '.join(sampled)}: too large at the task's sizes to run here; their value "
                            "ranges are read from get_inputs() run with its tensor factories cut down")
    varying = [t["name"] for t in plan.inputs if t["desc"].get("size_dependent")]
    if varying:
        report.unmapped.append(f"input(s) {', '.join(varying)}: get_inputs() gives other value statistics when its "
                               "factories are cut further (it computes across a cut axis, e.g. a softmax or a sum "
                               "over it), so the SPEC ranges are those of the cut run, not of the task's sizes")
    if any(t["scalar"] for t in plan.inputs):
        report.notes.append("0-d tensor(s) " + ", ".join(t["name"] for t in plan.inputs if t["scalar"]) + " are "
                            "declared with shape [1]; golden() hands the model 0-d tensors")
    return plan


def _lost_axes(plan: _Plan, lost: list[str], constants: dict[str, int], report: TaskImport,
               weights: frozenset[int] = frozenset()) -> list[str]:
    """Give ``DYNAMIC_AXIS`` letters that FORMULA does not use an axis (returned: the letters still without one).

    ``15_Matmul_for_lower_triangular_matrices`` says ``DYNAMIC_AXIS = ["N"]`` beside ``C[i, j] = sum_k A[i, k] *
    B[k, j]``: the hint was dropped and the 4096 x 4096 x 4096 product ran at its own size in every case (130 s to
    import, 6.9e10 multiply-adds a case for the emulator). The hint says an axis is dynamic; which one is read,
    in order, from

    1. a module constant of the letter's name (case aside: ``N = 4096``): every forward-input axis of that size
       is the one dynamic dim ``N`` (FORMULA's ``I``, ``K``, ``J`` of that size included: the task's square
       matrices stay square);
    2. when no hinted letter found an axis at all and the task is too large to verify as it is (:func:`_too_large`:
       elements, what forward builds, or :data:`MAX_MACS` multiply-adds), the forward-input axes longer than
       :data:`MAX_DYNAMIC`, one dim per distinct size, as :func:`_sized_axes` does without a hint (the letter names
       the dim when there is one size, a FORMULA letter keeps its name when it alone has that size, else ``D0``,
       ``D1`` ...). A task that fits stays at its sizes, as before: the real ``22_scatter_nd_sub`` (hint ``K``,
       10000 x 16 target) and the structured attention tasks, whose shapes are the task's own anyway.

    Each guess is in IMPORT.md and checked by running the model resized (which keeps the task's sizes when the
    model does not run so). The leading-axis convention (:func:`_plan_inputs`) is tried before this."""
    fwd = [t for t in plan.inputs if t["source"] == "forward" and not t.get("scalar")]

    def size(s: int | str) -> int:
        return s if isinstance(s, int) else plan.dims[s]

    def rename(by_size: dict[int, str]) -> list[str]:
        """Every forward-input axis (not already dynamic) of a size in ``by_size`` gets that dim; returns the
        FORMULA letters replaced."""
        replaced: list[str] = []
        for t in fwd:
            for ax, s in enumerate(t["shape"]):
                if s in plan.dynamic or size(s) not in by_size:
                    continue
                if isinstance(s, str) and s != by_size[size(s)] and s not in replaced:
                    replaced.append(s)
                t["shape"][ax] = by_size[size(s)]
        for old in replaced:
            if old not in by_size.values():
                plan.dims.pop(old, None)
        plan.dims.update({n: sz for sz, n in by_size.items()})
        plan.dynamic += [n for n in by_size.values() if n not in plan.dynamic]
        return replaced

    def where(dim: str) -> str:
        return ", ".join(t["name"] for t in fwd if dim in t["shape"])

    upper: dict[str, list[tuple[str, Any]]] = {}
    for name, number in constants.items():
        upper.setdefault(name.upper(), []).append((name, number))
    left = []
    for letter in lost:
        found = upper.get(letter, [])
        value = found[0][1] if len(found) == 1 else None
        if (not isinstance(value, int) or isinstance(value, bool) or value < 2
                or not any(size(s) == value and s not in plan.dynamic for t in fwd for s in t["shape"])):
            left.append(letter)
            continue
        replaced = rename({value: letter})
        report.unmapped.append(
            f"DYNAMIC_AXIS {letter}: FORMULA does not use it; the task's constant {found[0][0]} = {value} sizes the "
            f"axes of that size of {where(letter)}" + (f" (FORMULA's {', '.join(replaced)})" if replaced else "")
            + f", taken as the one dynamic axis {letter}, checked by running the model resized")
    if not left or plan.dynamic or not _too_large(plan):
        return left
    sizes = list(dict.fromkeys(size(s) for t in fwd for s in t["shape"] if size(s) > MAX_DYNAMIC))
    sizes = [s for s in sizes if s not in weights] or sizes  # as _sized_axes: a weight fixes its sizes
    if not sizes:
        return left
    letters = {sz: list(dict.fromkeys(s for t in fwd for s in t["shape"] if size(s) == sz)) for sz in sizes}
    free = (n for n in (f"D{i}" for i in range(len(plan.dims) + len(sizes) + 1)) if n not in plan.dims)
    by_size = {}
    for sz in sizes:
        own = letters[sz]
        by_size[sz] = (left[0] if len(sizes) == 1 and len(left) == 1 else
                       own[0] if len(own) == 1 and isinstance(own[0], str) else next(free))
    replaced = rename(by_size)
    named = ", ".join(f"{sz} ({n}, in {where(n)})" for sz, n in by_size.items())
    report.unmapped.append(
        f"DYNAMIC_AXIS {', '.join(left)}: FORMULA does not use {'it' if len(left) == 1 else 'them'} and no module "
        f"constant of {'that name' if len(left) == 1 else 'those names'} sizes an input axis; every input axis "
        f"longer than {MAX_DYNAMIC} is taken as dynamic, one dim per size: {named}"
        + (f" (FORMULA's {', '.join(replaced)} renamed)" if replaced else "")
        + ", checked by running the model resized")
    return []


def _weight_sizes(desc: dict[str, Any]) -> frozenset[int]:
    """The axis sizes of the model's parameters: an input axis of such a size is most likely the one a weight is
    built for (a Linear's in_features, an attention's embedding), which resizing breaks. KernelBench's
    ``ReLUSelfAttention`` without a hint (x: 16 x 1024 x 768, a 201 M-element score tensor at its sizes) was refused
    after ``_sized_axes`` made 768 dynamic too; the sequence (1024) alone runs resized (round 11). When every long
    axis has a weight's size, all of them are still tried."""
    return frozenset(int(n) for p in desc.get("parameters", []) for n in p["shape"])


def _largest_input(plan: _Plan) -> int:
    return max((math.prod(t["desc"]["shape"]) for t in plan.inputs if t["source"] == "forward"
                and not t.get("scalar")), default=0)


def _leading_batch(plan: _Plan, *, batch: bool = False) -> bool:
    """Without a DYNAMIC_AXIS hint, make the forward inputs' common leading axis dynamic when they are too large to
    verify at the task's own sizes (True: done). KernelBench's level1 files mostly carry no hint and are sized for GPU
    timing (``Frobenius_norm``: 16 x 64 x 256 x 256, 67 M elements): they were refused as too large, where the
    benchmark's own convention - ``batch_size`` first - gives an axis to shrink. Only when every tensor input of
    ``forward`` has that same leading size, which no FORMULA index names (a matmul's M and K differ: no guess);
    the traced run at the shrunk sizes checks the model accepts them (else :func:`_second_plan`, then the task's
    sizes). Since round 11 also when the inputs fit but ``forward`` is more multiply-adds than :data:`MAX_MACS`
    without building too much (a 1024-row GEMM with a 4096 x 4096 weight: the batch is the axis to shrink).

    ``batch`` (round 12): also when the inputs fit and only what ``forward`` builds is too large - the second plan
    after one dim per size (:func:`_sized_axes`) gave output axes that follow no dim: a convolution without padding,
    a strided pooling (``conv_standard_3D``: 16 x 3 x 64^3 in, 16 x 64 x 62^3 out; 62 is no dim of a SPEC)."""
    fwd = [t for t in plan.inputs if t["source"] == "forward" and not t.get("scalar")]
    builds = plan.peak is not None and too_large(plan.peak)
    if plan.dynamic or not fwd or (_largest_input(plan) <= MAX_FIXED_ELEMENTS and not (batch and builds)
                                   and (builds or not _computes_too_much(plan))):
        return False  # too large a build: _sized_axes
    leads = {t["shape"][0] for t in fwd}
    if len(leads) != 1 or not isinstance(next(iter(leads)), int) or next(iter(leads)) < 2:
        return False
    if _largest_input(plan) // next(iter(leads)) > MAX_FIXED_ELEMENTS:  # one row alone too large: _sized_axes
        return False
    name = next(n for n in ("B", "BATCH", "B0", "B1") if n not in plan.dims)
    for t in fwd:
        t["shape"][0] = name
    plan.dims[name] = int(next(iter(leads)))
    plan.dynamic = [name]
    plan.guess = "leading"
    return True


def _too_large(plan: _Plan) -> bool:
    """The task's own sizes are too large to verify: an input over :data:`MAX_FIXED_ELEMENTS`, or ``forward`` would
    build a tensor over :func:`_probe.too_large`'s bounds (a 1 M-element tall-skinny pair into a 1 G-element
    product)."""
    return (_largest_input(plan) > MAX_FIXED_ELEMENTS or (plan.peak is not None and too_large(plan.peak))
            or _computes_too_much(plan))


def _computes_too_much(plan: _Plan) -> bool:
    """More multiply-adds at the task's own sizes than :data:`MAX_MACS` (round 11; unknown: no)."""
    return plan.peak is not None and int(plan.peak.get("macs") or 0) > MAX_MACS


def _sized_axes(plan: _Plan, weights: frozenset[int] = frozenset()) -> bool:
    """Without a DYNAMIC_AXIS hint, when the task's sizes are too large to verify (:func:`_too_large`) and no common
    leading axis can be shrunk alone (:func:`_leading_batch`: a matmul's A and B lead with M and K; inputs small
    enough but a product that is not - a 1 M-element tall-skinny pair into 32768 x 32768, a 16 x 16384 batch's
    16384 x 16384 Gram matrix; batch rows that alone hold more than an input may), make
    every forward-input axis longer than :data:`MAX_DYNAMIC` dynamic, one dim per distinct size (the same size on two
    axes is one dim: a square matrix stays square, a K shared by A and B stays shared). These were refused as too
    large; the trace at the shrunk sizes and the tail case checks the model accepts them, and a model that does
    not (a weight sized by one of those axes) is refused as before. True: done."""
    fwd = [t for t in plan.inputs if t["source"] == "forward" and not t.get("scalar")]
    if plan.dynamic or not fwd or not _too_large(plan):
        return False
    sizes = list(dict.fromkeys(s for t in fwd for s in t["shape"] if isinstance(s, int) and s > MAX_DYNAMIC))
    sizes = [s for s in sizes if s not in weights] or sizes  # round 11: the model's weights fix those sizes
    if not sizes:
        return False
    free = (n for n in (f"D{i}" for i in range(len(plan.dims) + len(sizes) + 1)) if n not in plan.dims)
    names = {size: next(free) for size in sizes}
    for t in fwd:
        t["shape"] = [names.get(s, s) if isinstance(s, int) else s for s in t["shape"]]
    plan.dims.update({n: size for size, n in names.items()})
    plan.dynamic = list(names.values())
    plan.guess = "sized"
    return True


def _p0(plan: _Plan) -> list[dict[str, int]]:
    """P0 cases: each dynamic dim at min(size, 64), halved (largest first, not below 8) while an input holds more
    than :data:`MAX_ELEMENTS` (inputs without a dynamic dim do not count), and below 8 (down to 1) while one still
    holds more; then a tail case with + 13 (+2 per further dim, never a multiple of 16).

    The fixed axes can be large on their own (KernelBench's ``LayerNorm`` over 64 x 256 x 256 per batch row): the
    tail case's +13 then multiplied a first case that was already at its floor (8 rows of 4.2 M elements, 21 in the
    tail: 88 M elements, 6-9 GB in intake's golden run; 128 x 4096 x 4095 failed intake with a MemoryError). A tail
    dim whose case would hold more than :data:`MAX_FIXED_ELEMENTS` in one input is cut back to one more than the
    first case's (largest first); when even that does not fit, there is no tail case (a first case under 16 rows
    is itself a partial tile). :func:`_check_fixed_size` refuses a first case over that bound.
    """
    if not plan.dims:
        return []
    if not plan.dynamic:
        return [dict(plan.dims)]
    first, tail = dict(plan.dims), dict(plan.dims)
    for d in plan.dynamic:
        first[d] = min(plan.dims[d], MAX_DYNAMIC)

    def largest(dims: dict[str, int]) -> int:
        return max((math.prod(_concrete(t["shape"], dims)) for t in plan.inputs
                    if any(d in plan.dynamic for d in t["shape"])), default=0)

    for floor in (8, 1):
        while largest(first) > MAX_ELEMENTS or _builds_too_much(plan, first):
            shrinkable = [d for d in plan.dynamic if first[d] > floor]
            if not shrinkable:
                break
            d = max(shrinkable, key=lambda n: first[n])
            first[d] = max(floor, first[d] // 2)

    def untiled(n: int) -> int:
        return n + 1 if n % 16 == 0 else n

    for j, d in enumerate(plan.dynamic):
        tail[d] = untiled(first[d] + TAIL + 2 * j)
    while largest(tail) > MAX_FIXED_ELEMENTS or _builds_too_much(plan, tail):
        wide = [d for d in plan.dynamic if tail[d] > untiled(first[d] + 1)]
        if not wide:
            return [first]
        d = max(wide, key=lambda n: tail[n])
        tail[d] = untiled(first[d] + 1)
    return [first, tail]


def _builds_too_much(plan: _Plan, dims: dict[str, int]) -> bool:
    """``forward`` would build too much (:func:`_probe.too_large`) at ``dims``, by what it builds at the task's own
    sizes (``plan.peak``) scaled by how much smaller the dynamic axes are, linearly: exact for a tensor linear in
    them, low for one with a fixed part, high for one over two dynamic axes (attention's T x T: such a case may be
    cut more than it needed). A case past the task's own sizes is not estimated; the trace's meta run still checks
    every case exactly.

    An outer product ``x[B, 4096] -> y[B, 4096, 4096]`` has small inputs and 16.7 M output elements per row: its
    first case (B = 64, chosen by the inputs alone) would build 1 G elements, and the trace refused the task
    although one row fits (round 9)."""
    if plan.peak is None or not plan.dynamic:
        return False
    scale = math.prod(dims[d] / plan.dims[d] for d in plan.dynamic if plan.dims.get(d))
    if scale > 1.0:  # a tail case past the task's own sizes: no estimate here, the trace's meta run decides
        return False
    scaled = {"elements": plan.peak["elements"] * scale,
              "outputs": [[math.prod(o) * scale] for o in plan.peak.get("outputs", [])]}
    return too_large(scaled)


def _concrete(shape: list[int | str], dims: dict[str, int]) -> list[int]:
    return [s if isinstance(s, int) else dims[s] for s in shape]


def _trace_request(task: Path, plan: _Plan, p0: list[dict[str, int]]) -> dict[str, Any]:
    cases = []
    for dims in p0 or [{}]:
        ins: dict[int, dict[str, Any]] = {i: {"kind": "scalar", "value": c} for i, c in plan.consts.items()}
        for t in plan.inputs:
            if t["source"] != "forward":
                continue
            d = dict(t["desc"])
            d["shape"] = [] if t["scalar"] else _concrete(t["shape"], dims)
            d["normal"] = d.get("within_1sd", 0.0) > 0.64
            ins[t["pos"]] = d
        cases.append({"inputs": [ins[i] for i in sorted(ins)], "jitter": True})
    if cases:
        cases[0]["unread"] = _buffer_params(plan)
    return {"mode": "trace", "task": str(task), "cases": cases}


def _buffer_params(plan: _Plan) -> list[str]:
    """The random buffers among the plan's inputs (``Model`` names): the first traced case checks which of them
    ``forward`` never reads (``_probe._unread``)."""
    return [t["param"] for t in plan.inputs if t["source"] == "param" and t.get("buffer")]


def _drop_unread(plan: _Plan, case: dict[str, Any], report: TaskImport) -> None:
    """Take the random buffers whose values ``forward`` never reads (only their shape: ``torch.zeros_like(self.
    state)``) out of the kernel's inputs: they stay inside the golden with their seeded values, and the outputs are
    the same whatever they hold (the probe ran ``forward`` with each one redrawn). Round 4 left them as inputs a
    kernel had to take and ignore."""
    unread = set(case.get("unread") or [])
    if not unread:
        return
    plan.inputs = [t for t in plan.inputs if not (t["source"] == "param" and t.get("buffer") and t["param"] in unread)]
    report.notes.append(f"buffer(s) {', '.join(sorted(unread))} are drawn at random in __init__, but forward never "
                        "reads their values (the outputs are bit-identical with them redrawn): not kernel inputs; "
                        "golden.py keeps the model's own")


def _output_shapes(outs: list[list[dict[str, Any]]], plan: _Plan, p0: list[dict[str, int]]) -> list[list[int | str]]:
    """Name an output axis after the dynamic dim whose sizes over the cases it follows, else keep the size."""
    vectors = {tuple(c[d] for c in p0): d for d in plan.dynamic} if p0 else {}
    shapes = []
    for j, first in enumerate(outs[0]):
        shape: list[int | str] = []
        for ax in range(len(first["shape"])):
            vec = tuple(case[j]["shape"][ax] for case in outs)
            shape.append(vectors.get(vec, vec[0]) if len(set(vec)) > 1 else vec[0])
        shapes.append(shape)
    return shapes


TILED_POOL = ("pypto.reshape into the windows + pypto.mean / pypto.amax over them (windows that tile the axis: "
              "stride = kernel, no padding; a remainder shorter than the kernel is dropped, a pypto.view first)")
"""The route of a pooling call whose windows tile its axes; other pooling has the taps' route (``_ops.WINDOW_ROUTES``)."""
TILED_CONV = ("pypto.reshape of the input into its windows + pypto.matmul with the weight viewed [C_out, C_in * "
              "kernel] (+ add for the bias); windows that tile the input: stride = kernel, no padding or dilation, "
              "one group - a 1 x 1 convolution is a matmul over the channels")
TILED_UNFOLD = "pypto.reshape / pypto.transpose into the windows (they tile the axis: step = size, a view)"
"""Round 11: convolutions and ``unfold`` whose windows tile the input (``_probe._windowed``); others have the
longer route over the taps since round 12 (``_ops.WINDOW_ROUTES``)."""

ONE_ARG_WHERE = ("torch.where(cond) is the positions where cond holds (nonzero: a data-dependent count); a kernel "
                 "computes what they select at a fixed size - pypto.where with the mask over every row, or "
                 "pypto.gather / pypto.index_select at indices it has (a top-k's)")
"""Round 13: the route of a one-argument ``torch.where`` (Mixtral-style MoE loops: ``torch.where(selected == e)``),
which the inventory had called ``pypto.where``, a select of two tensors."""


def _refuse_no_route(peak: dict[str, Any] | None) -> None:
    """Refuse, before any case is traced, a task whose forward (run on the meta device at the task's sizes:
    :func:`_probe.meta_peak`) calls torch functions with no PyPTO route, as :func:`_inventory` words it. A
    convolution at KernelBench's sizes (``conv_standard_1D_dilated_strided``: 64 x 128 x 174758 out) was refused
    for its size, or traced for 30-50 s before its convolution was named. Pooling that tiles its axes has a route
    and is left to the trace (whose sizes decide it)."""
    if not peak:
        return
    problems = [f"forward calls torch {op}: {reason}" for op, tiled in peak.get("ops", {}).items() if not tiled
                for kind, reason in [classify(op)] if kind == "none"]
    if problems:
        raise TaskImportError("; ".join(problems))


def _inventory(calls: list[dict[str, Any]], report: TaskImport) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    counts: dict[tuple[str, str], int] = {}
    problems: list[str] = []
    for c in calls:
        kind, route = classify(c["op"])
        if c.get("tiled"):  # non-overlapping, unpadded windows (the probe's _tiled): a reshape and a reduction
            kind, route = "route", (TILED_CONV if c["op"].startswith("conv") else TILED_UNFOLD
                                    if c["op"] == "unfold" else TILED_POOL)
        if c.get("positions"):
            route = ONE_ARG_WHERE
        if kind == "plumbing":
            continue
        if kind == "none":
            problems.append(f"forward calls torch {c['op']}: {route}")
            continue
        if kind == "unknown":
            problems.append(f"forward calls torch {c['op']}, for which the importer knows no PyPTO route")
            continue
        if c.get("p", 0.0) > 0 and c.get("training", True):  # dropout's p, RReLU's spread of slopes
            problems.append(f"forward calls {c['op']} in training mode (nn.RReLU as KernelBench runs it): each "
                            f"negative element's slope is drawn at random on every call (a spread of {c['p']:g}), "
                            "so the output is random" if c["op"].startswith("rrelu") else
                            f"forward calls {c['op']} with {'p' if c['op'] == 'dropout' else 'dropout_p'}="
                            f"{c['p']:g} in training mode: the output is random")
            continue
        if c["op"] == "dropout":
            continue
        shapes = ",".join("[" + ",".join(map(str, s)) + "]" for s in c["in"]) or "scalar"
        outs = ",".join("[" + ",".join(map(str, s)) + "]" for s in c["out"]) or "scalar"
        key = (f"{c['op']} (PyPTO: {route})", f"{shapes} -> {outs}")
        if key not in counts:
            rows.append(key)
        counts[key] = counts.get(key, 0) + 1
    if problems:
        raise TaskImportError("; ".join(dict.fromkeys(problems)))
    return [(op + (f" x{counts[(op, sh)]}" if counts[(op, sh)] > 1 else ""), sh) for op, sh in rows]


# ------------------------------------------------------------------------------------------------ writing


def _flow(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False).strip().removesuffix("...").strip()


def _spec_text(task: Path, report: TaskImport, spec: dict[str, Any], desc: dict[str, Any],
               make: list[dict[str, Any]] | None = None) -> str:
    out = ["---"]
    for key, value in spec.items():
        if key in ("inputs", "outputs", "p0_shapes"):
            out.append(f"{key}:")
            out += ["  - " + _flow(v) for v in value]
        elif key == "tolerance":
            out.append(f"{key}:")
            out += [f"  {k}: {_flow(v)}" for k, v in value.items()]
        else:
            out.append(f"{key}: {_flow(value)}")
    out.append("---")
    shapes = ", ".join(f"{d.get('dtype')}{d.get('shape')}" if d["kind"] == "tensor" else
                       f"{d.get('type')} {json.dumps(d.get('value'))} (a constant)" for d in desc["inputs"])
    init = ", ".join((f"{v['name']}=" if "name" in v else "")
                     + (json.dumps(v.get("value")) if v["kind"] == "scalar" else v.get("repr", "?")) for v in desc["init"])
    prose = [
        "",
        f"# {report.op_name} (KernelBench task `{report.level + '/' if report.level else ''}{task.name}`)",
        "",
        "Imported by `python -m orchestrator import`; golden.py runs the task's `Model.forward` unchanged.",
        "",
        f"- FORMULA: `{desc.get('formula') or '(none)'}`",
        f"- DYNAMIC_AXIS: `{desc.get('dynamic_axis') or []}`",
        f"- get_inputs() shapes in the task: {shapes}",
        (f"- Model(**get_init_inputs()) with get_init_inputs() = dict({init})"
         if any("name" in v for v in desc["init"]) else f"- Model(*get_init_inputs()) with get_init_inputs() = [{init}]"),
        "- The model's parameters are inputs here (after the forward arguments), so that a kernel can read them.",
        f"- P0 cases shrink the dynamic axes to at most {MAX_DYNAMIC} and add a tail case; see IMPORT.md.",
    ]
    if make is not None:
        kept = [m["name"] for m in make if m["given"] is not None]
        perms = [m["name"] for m in make if m.get("distinct")]
        prose[-1] = ("- Inputs come from golden.py's `make_inputs`: it draws every input from the case's value band over "
                     f"its range, and {', '.join(perms)} (a permutation drawn in `__init__`) as distinct values of "
                     "its range, so the dynamic axes and the tail case stay; see IMPORT.md.") if not kept else ("- Inputs come from golden.py's `make_inputs`: it runs the task's own `get_inputs()` seeded from "
                     f"the case seed and keeps {', '.join(kept)} as it gives them (their structure: offsets, block "
                     "ids, lengths or indices consistent with the other inputs' shapes); every float input is drawn "
                     "from the case's value band over its range here. The shapes are the task's own; see IMPORT.md.")
    prose += [f"- Not the task's structure: {u}." for u in report.unstructured]
    prose += [f"- Fixed here, open in the task: {c}." for c in report.contract]
    prose += [f"- Output {o['name']} does not depend on the input values over the declared ranges "
              f"({report.constant_outputs.get(o['name'], 'the same in every case')}); it is marked `constant: true`, "
              "and the other outputs carry the check." for o in spec.get("outputs", []) if o.get("constant")]
    return "\n".join(out) + "\n" + "\n".join(prose) + "\n"


_MAKE_INPUTS = '''

# Inputs for each case (written by `python -m orchestrator import`: this task has structured inputs that values
# drawn independently from a range cannot express). Per SPEC input: "given" = its position in get_inputs(), kept
# as the task makes it (seeded from the case seed), else None = drawn here from the case's value band over "range".
_PTO_FORGE_MAKE = {make!r}


def make_inputs(case, rng):
    import random
    import numpy
    import torch
    from runtime.dtypes import to_numpy
    from runtime.opdir import band_values  # PTO Forge's value bands (docs/opdir.md), as its own inputs use them
    seed = int(rng.integers(0, 2**31 - 1))
    state = random.getstate(), numpy.random.get_state()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        random.seed(seed)
        numpy.random.seed(seed)
        try:
            given = list(get_inputs())
        finally:
            random.setstate(state[0])
            numpy.random.set_state(state[1])
    out = []
    for m in _PTO_FORGE_MAKE:
        shape = [s if isinstance(s, int) else case["dims"][s] for s in m["shape"]]
        if m["given"] is not None:  # a torch tensor: the golden process converts what make_inputs returns
            a = given[m["given"]].detach().reshape(shape)
            out.append(a != 0 if m["dtype"] == "bool" and a.dtype != torch.bool else a)
        elif m["dtype"] == "bool":
            out.append(rng.random(shape) < 0.5)
        elif m.get("distinct"):  # a permutation drawn in __init__: distinct values of its range, in random order
            lo, hi = (int(x) for x in m["range"])
            count = int(numpy.prod(shape))
            out.append((rng.permutation(hi - lo + 1)[:count] + lo).reshape(shape).astype(to_numpy(m["dtype"])))
        elif m.get("integer"):  # an integer input drawn from its range (labels, ids), as verification draws one
            lo, hi = (int(x) for x in m["range"])
            out.append(rng.integers(lo, hi + 1, size=shape).astype(to_numpy(m["dtype"])))
        else:
            dtype = to_numpy(m["dtype"])
            lo, hi = m["range"]
            v = band_values(lo, hi, m["normal"], case["band"], tuple(shape), rng).clip(lo, hi)
            out.append(v.astype(numpy.float64 if dtype == numpy.float64 else numpy.float32).astype(dtype))
    return out
'''


def _with_cpu_only(source: str) -> str:
    """The task's source with ``_probe.CPU_ONLY`` (``.cuda()`` is the identity; and ``_probe.CUDA_DEVICES`` when
    the task names a CUDA device: ``device="cuda"`` is the CPU) before its first statement, but after
    its ``from __future__`` imports, which must come first (``#!/usr/bin/env python3`` / docstring / ``from
    __future__ import annotations`` headers are common in pto_case files)."""

    shim = CPU_ONLY + ("\n" + CUDA_DEVICES if names_cuda(source) else "")
    try:
        body = pyast.parse(source).body
    except SyntaxError:  # the probe ran it, so it parses; keep the text as it is otherwise
        return shim + "\n" + source
    at = 0
    for node in body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            at = node.end_lineno or node.lineno
    lines = source.splitlines(keepends=True)
    return "".join(lines[:at]) + ("\n" if at else "") + shim + "\n" + "".join(lines[at:])


def _golden_text(task: Path, source: str, plan: _Plan, rows: list[tuple[str, str]], n_forward: int,
                 make: list[dict[str, Any]] | None = None, *, sorted_topk: bool = False, fresh: bool = False) -> str:
    """golden.py: the inventory, the task unchanged, the adapter. ``fresh``: forward builds state on its first call
    (a lazily made mask, see ``_probe._carried_state``), so each golden() call starts from the model's state as built,
    restored in place (a mask built at one case's size must not serve the next case; a copy of the model would keep
    closures bound to the original's submodules)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    head = ["# Golden function inventory", "# | # | Golden operation | Shape transformation |",
            "# |---|------------------|----------------------|"]
    head += [f"# | {i} | {op.replace('|', '/')} | {sh} |" for i, (op, sh) in enumerate(rows, 1)]
    head += [f"# Imported by `python -m orchestrator import` from the KernelBench task {task.name} (sha256 {digest}):",
             "# the task file follows unchanged; golden() at the end runs its Model.forward on torch CPU (training",
             "# mode, as KernelBench runs it) with the op dir's inputs and the model's parameters as inputs.", "", ""]
    fwd = [t for t in plan.inputs if t["source"] == "forward"]
    prm = [t for t in plan.inputs if t["source"] == "param"]
    casts = {t["name"]: t["value"]["torch_dtype"] for t in plan.inputs if t["value"].get("torch_dtype")}
    def conv(t: dict[str, Any]) -> str:
        text = f"_pto_forge_tensor({t['name']}, {casts.get(t['name'])!r})"
        return text + ".reshape(())" if t["scalar"] else text

    by_pos = {t["pos"]: conv(t) for t in fwd} | {i: repr(c) for i, c in plan.consts.items()}
    args = ", ".join(by_pos[i] for i in sorted(by_pos))
    params = ", ".join(f"{t['param']!r}: {conv(t)}" for t in prm)
    fresh_line = "\n    model = _pto_forge_fresh(model)" if fresh else ""
    adapter = f'''

# --- PTO Forge adapter (written by `python -m orchestrator import`) ---
_pto_forge_model = None


def _pto_forge_tensor(a, dtype=None):
    import numpy
    import torch
    if a.dtype.name == "bfloat16":
        t = torch.from_numpy(numpy.ascontiguousarray(a).view(numpy.int16).copy()).view(torch.bfloat16)
    else:
        t = torch.from_numpy(numpy.ascontiguousarray(a).copy())
    return t.to(getattr(torch, dtype)) if dtype else t


def _pto_forge_module():
    global _pto_forge_model
    if _pto_forge_model is None:
        import torch
        torch.manual_seed(0)
        init = get_init_inputs()
        _pto_forge_model = Model(**init) if isinstance(init, dict) else Model(*init)
    return _pto_forge_model


def golden({", ".join(t["name"] for t in plan.inputs)}):
    import torch
    from torch.func import functional_call
    model = _pto_forge_module(){fresh_line}
    with torch.no_grad(){", _pto_forge_sorted_topk()" if sorted_topk else ""}:
        out = functional_call(model, {{{params}}}, ({args}{"," if len(by_pos) == 1 else ""}))
    return out
'''
    if fresh:
        given = sorted(t["param"] for t in prm)
        adapter += f'''
_pto_forge_built = None


def _pto_forge_fresh(model):
    # forward builds state on its first call (a mask or table made from the shapes): every case starts from the
    # model's state as built, so a value made at one case's size never serves another case (the parameters that
    # are inputs are not copied: functional_call swaps the case's in)
    global _pto_forge_built
    if _pto_forge_built is None:
        _pto_forge_built = _pto_forge_snapshot(model, {given!r})
    _pto_forge_restore(_pto_forge_built)
    return model
''' + FRESH_STATE
    if sorted_topk:
        adapter += "\n" + SORTED_TOPK
    if make is not None:
        adapter += _MAKE_INPUTS.format(make=make)
    return "\n".join(head) + _with_cpu_only(source).rstrip() + "\n" + adapter


def _import_md(task: Path, report: TaskImport) -> str:
    lines = [f"# Imported KernelBench task: {report.op_name}", "", f"Source: `{report.level}/{task.name}`.", "",
             "## Not mapped", ""]
    lines += [f"- {u}" for u in report.unmapped] or ["- nothing"]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(lines) + "\n"


def import_task(task: str | Path, dest: str | Path, *, force: bool = False, timeout: float = 300.0,
                intake_timeout: float = 120.0) -> TaskImport:
    """Import a KernelBench-format task file into a new op dir (see the module docstring).

    A task with structured integer inputs (:func:`_structured_reasons`), or whose model or golden fails on
    integer inputs drawn independently, gets a ``make_inputs`` that takes those inputs from its own
    ``get_inputs()`` (:func:`_structured_path`).

    Raises:
        TaskImportError: the task cannot be imported (why, in one line), or ``dest`` holds files that would be
            overwritten (without ``force``). Nothing is written then.
    """
    task = Path(task).resolve()
    dest = Path(dest)
    if not is_task_file(task):
        raise TaskImportError(f"{task}: not a KernelBench task file (class Model and get_inputs())")
    if dest.exists() and not dest.is_dir():
        raise TaskImportError(f"{dest} is a file; give the operator directory to create")
    names = ("SPEC.md", "golden.py", "IMPORT.md")
    existing = [n for n in names if (dest / n).exists()]
    if existing and not force:
        raise TaskImportError(f"{dest} already holds {', '.join(existing)}; import never overwrites (use --force)")
    source = task.read_text(encoding="utf-8")
    desc = _probe({"mode": "describe", "task": str(task)}, timeout)
    if desc.get("huge_parameter"):
        huge = desc["huge_parameter"]
        raise TaskImportError(
            f"the model's parameter {huge['name']} (a kernel must be given it as an input) holds {huge['elements']:,} "
            f"elements ({' x '.join(map(str, huge['shape']))}), over the {MAX_FIXED_ELEMENTS:,}-element (2^24) budget "
            "for one input of a case verified on the CPU emulator (the model was not built: sizes from the meta "
            "device); smaller get_init_inputs() sizes would fit")
    if desc.get("random_attributes"):
        held = ", ".join(f"self.{n}" for n in desc["random_attributes"])
        raise TaskImportError(f"the model holds tensor attribute(s) {held} drawn at random in __init__ that are "
                              "neither parameters nor buffers: a kernel cannot be given them (make them "
                              "nn.Parameter or forward inputs)")

    _refuse_no_route(desc.get("peak"))

    def fresh() -> tuple[TaskImport, _Plan]:
        report = TaskImport(task=task.name, level=task.parent.name, op_name=task_op_name(task))
        return report, _plan_inputs(desc, report)

    report, plan = fresh()
    reasons = _structured_reasons(plan)
    if reasons and len(reasons) == sum(1 for t in plan.inputs if t.get("distinct")):
        # only permutations drawn in __init__: make_inputs draws every input itself, at the case's sizes
        return _random_path(task, source, desc, plan, report, dest, existing, timeout, intake_timeout, reasons)
    if not reasons:
        try:
            return _random_path(task, source, desc, plan, report, dest, existing, timeout, intake_timeout)
        except _InputsRejected as exc:
            ints = [t["name"] for t in plan.inputs if t["source"] == "forward" and t["desc"].get("integer")
                    and t["desc"]["dtype"] != "bool"]
            if not ints:
                raise TaskImportError(str(exc)) from None
            first = str(exc)
            reasons = [f"with integer input(s) {', '.join(ints)} drawn independently from their ranges: {first}"]
        report, plan = fresh()
        try:
            return _structured_path(task, source, desc, plan, report, dest, existing, timeout, intake_timeout,
                                    reasons)
        except TaskImportError as exc:
            raise TaskImportError(f"{first} (and with make_inputs taking {', '.join(ints)} from get_inputs(): "
                                  f"{exc})") from None
    return _structured_path(task, source, desc, plan, report, dest, existing, timeout, intake_timeout, reasons)


def _value_specs(plan: _Plan, report: TaskImport, kept: set[str] | None = None) -> None:
    """dtype / range / distribution of every input but ``kept`` ones (those come from ``get_inputs()``)."""
    for t in plan.inputs:
        label = f"{'parameter ' + t['param'] if t['source'] == 'param' else 'input ' + t['name']}"
        if t["name"] not in (kept or set()):
            t["value"] = _value_spec(label, t["desc"], report)


def _random_path(task: Path, source: str, desc: dict[str, Any], plan: _Plan, report: TaskImport, dest: Path,
                 existing: list[str], timeout: float, intake_timeout: float,
                 permutations: list[str] | None = None) -> TaskImport:
    """Every input drawn by PTO Forge from its SPEC range; the dynamic axes shrunk and given a tail case.

    ``permutations``: why some parameter is a permutation drawn in ``__init__`` (a random channel shuffle buffer). Its
    values must stay distinct, which a SPEC range cannot say, so golden.py gets a ``make_inputs`` - but one that draws
    every input itself at the case's sizes (:func:`_drawn_make`): nothing comes from ``get_inputs()``, so, unlike
    :func:`_structured_path` (round 4's route for these), the dynamic axes and the tail case stay."""
    _value_specs(plan, report)
    p0 = _p0(plan)
    _check_fixed_size(plan, p0, structured=False)
    runs = p0
    if plan.dynamic and len(p0) == 1:  # no room for a tail case: one more run (traced only) names the output axes
        runs = p0 + [{**p0[0], **{d: p0[0][d] + 1 + j for j, d in enumerate(plan.dynamic)}}]
    replanned = False
    try:
        traced = _probe(_trace_request(task, plan, runs), timeout)
    except _ModelRefused:
        raise
    except TaskImportError as exc:
        if not plan.dynamic:
            raise _InputsRejected(str(exc)) from None
        second = _second_plan(task, desc, plan, report, timeout, str(exc))
        if second is None:
            report.unmapped.append(f"the model did not run with the dynamic axes resized ({exc}); the op dir keeps "
                                   "get_inputs()' sizes and has no tail case")
            named = ", ".join(f"{d}={runs[0][d]}" for d in plan.dynamic if runs and d in runs[0])
            try:
                p0 = runs = _fixed(plan)
            except TaskImportError as fixed:  # round 12: say why the dynamic axes were given up
                raise TaskImportError(f"{fixed} (resized to {named or 'other sizes'}, the model did not run: "
                                      f"{exc})") from None
            traced = _trace_fixed(task, plan, p0, timeout)
        else:
            report, plan, p0, runs, traced = second
            replanned = True
    outs = [c["outputs"] for c in traced["cases"]]
    loose = _unnamed_axes(outs, plan, runs)
    if loose and plan.guess == "sized" and not replanned:  # round 12: a window's output size (L - k + 1, L // 2) follows no dim
        second = _second_plan(task, desc, plan, report, timeout, f"gave {'; '.join(loose)}, which no dim follows")
        if second is not None and not _unnamed_axes([c["outputs"] for c in second[4]["cases"]], second[1],
                                                     second[3]):
            report, plan, p0, runs, traced = second
            outs = [c["outputs"] for c in traced["cases"]]
            loose = []
    _drop_unread(plan, traced["cases"][0], report)
    if loose:
        report.unmapped.append(f"{'; '.join(loose)}, which no dynamic axis follows (a product such as B * S): a SPEC "
                               "shape names an axis by one dim, so the op dir keeps get_inputs()' sizes and has no "
                               "tail case")
        try:
            p0 = runs = _fixed(plan)
        except TaskImportError as exc:  # round 12: say why the dynamic axes were given up
            raise TaskImportError(f"{exc} (resized, {'; '.join(loose)}, which no dynamic axis follows: a SPEC "
                                  "shape names an axis by one dim)") from None
        traced = _trace_fixed(task, plan, p0, timeout)
        outs = [c["outputs"] for c in traced["cases"]]
    _refuse_zero_outputs(outs)
    make = _drawn_make(plan) if permutations else None
    if permutations:
        report.unmapped.append(f"{'; '.join(permutations)}; make_inputs draws every input at the case's sizes (none "
                               "is taken from get_inputs()), so the dynamic axes and the tail case stay")
    return _write(task, source, desc, plan, p0, outs, traced["cases"][0]["calls"], report, dest, existing,
                  intake_timeout, make, runs=runs, lazy=traced.get("lazy"))


def _second_plan(task: Path, desc: dict[str, Any], plan: _Plan, report: TaskImport, timeout: float,
                 failed: str) -> tuple[TaskImport, _Plan, list[dict[str, int]], list[dict[str, int]],
                                       dict[str, Any]] | None:
    """When the model did not run with round 5's leading-axis guess resized, the plan without it (every input axis
    longer than :data:`MAX_DYNAMIC` dynamic, one dim per size: :func:`_sized_axes`), traced; None when there is
    no such plan or it did not run either (the caller keeps the task's own sizes).

    KernelBench's ``HingeLoss`` multiplies predictions ``[32768, 32768]`` by targets ``[32768]`` (broadcast over
    the last axis): the leading guess gave ``[B, 32768] * [B]``, which does not run, and the task was refused at
    its own sizes; one dim for the size 32768 runs. A square 4096 x 4096 product without a hint (too many
    multiply-adds, :data:`MAX_MACS`) leads with the same size on A and B too; its A ``[B, 4096]`` @ B ``[B, 4096]``
    does not run.

    Round 12: the other way round too. One dim per size (``plan.guess == "sized"``) whose model does not run resized,
    or whose outputs' axes follow no dim (``failed`` then says which), is planned again with round 5's leading axis
    alone, also where only what forward builds is too large (``_leading_batch(batch=True)``): a convolution without
    padding over 16 x 3 x 64^3 builds 16 x 64 x 62^3 - one dim for 64 leaves 62 unnamed, a batch row fits."""
    if plan.guess not in ("leading", "sized"):
        return None
    again = TaskImport(task=report.task, level=report.level, op_name=report.op_name)
    if plan.guess == "leading":
        other = _plan_inputs(desc, again, leading=False)
        why = f"the leading-axis guess did not run resized ({failed}); planned without it"
    else:
        other = _plan_inputs(desc, again, batch_only=True)
        why = (f"one dim per size ({', '.join(plan.dynamic)}) {failed}; planned with the leading axis alone"
               if failed.startswith("gave ") else
               f"one dim per size ({', '.join(plan.dynamic)}) did not run resized ({failed}); planned with the "
               "leading axis alone")
        if other.guess != "leading":
            return None
    if not other.dynamic:
        return None
    again.unmapped.insert(0, why)
    _value_specs(other, again)
    p0 = _p0(other)
    try:
        _check_fixed_size(other, p0, structured=False)
    except TaskImportError:
        return None
    runs = p0
    if len(p0) == 1:
        runs = p0 + [{**p0[0], **{d: p0[0][d] + 1 + j for j, d in enumerate(other.dynamic)}}]
    try:
        traced = _probe(_trace_request(task, other, runs), timeout)
    except _ModelRefused:
        raise
    except TaskImportError:
        return None
    return again, other, p0, runs, traced


def _drawn_make(plan: _Plan) -> list[dict[str, Any]]:
    """``make_inputs`` entries that draw every input (none ``given``): floats from the case's value band over their
    range, integers uniformly from theirs, permutations (``distinct``) as distinct values of theirs."""
    make = []
    for t in plan.inputs:
        v = t["value"]
        entry: dict[str, Any] = {"name": t["name"], "given": None, "shape": t["shape"], "dtype": v["dtype"]}
        if v["dtype"] != "bool":
            entry["range"] = [float(x) for x in v["range"]]
            entry["normal"] = v.get("distribution") == "normal"
            if v["dtype"].startswith(("int", "uint")):
                entry["integer"] = True
        if t.get("distinct"):
            entry["distinct"] = True
        make.append(entry)
    return make


def _fixed(plan: _Plan) -> list[dict[str, int]]:
    """No dynamic axis: the one P0 case at get_inputs()' sizes (refused here when those are too large)."""
    plan.dynamic = []
    p0 = _p0(plan)
    _check_fixed_size(plan, p0, structured=False)
    return p0


def _trace_fixed(task: Path, plan: _Plan, p0: list[dict[str, int]], timeout: float) -> dict[str, Any]:
    try:
        return _probe(_trace_request(task, plan, p0), timeout)
    except _ModelRefused:
        raise
    except TaskImportError as again:
        raise _InputsRejected(str(again)) from None


def _unnamed_axes(outs: list[list[dict[str, Any]]], plan: _Plan, runs: list[dict[str, int]]) -> list[str]:
    """Output axes whose size changes over the traced cases but follows no dynamic dim (one phrase each).

    MoE init routing returns ``x.index_select(0, order // k)``: T * k rows, 512 at T = 64 and 616 at T = 77. The
    axis was written with the first case's 512 and intake refused the tail case; a task without integer inputs
    (which retry through ``make_inputs``) was refused altogether."""
    if len(runs) < 2 or len(outs) < 2:
        return []
    vectors = {tuple(c[d] for c in runs) for d in plan.dynamic}
    found = []
    for j, first in enumerate(outs[0]):
        for ax in range(len(first.get("shape", []))):
            vec = tuple(case[j]["shape"][ax] for case in outs)
            if len(set(vec)) > 1 and vec not in vectors:
                found.append(f"output {j} axis {ax} is {', '.join(map(str, vec))} over the cases")
    return found


def _structured_path(task: Path, source: str, desc: dict[str, Any], plan: _Plan, report: TaskImport, dest: Path,
                     existing: list[str], timeout: float, intake_timeout: float, reasons: list[str]) -> TaskImport:
    """golden.py gets a ``make_inputs`` that runs the task's ``get_inputs()`` seeded from the case seed, keeps its
    integer / bool inputs (the structure) and draws every float input from the case's value band.

    ``get_inputs()`` makes its tensors at the task's own sizes, so no axis can vary: the one P0 shape is the
    task's. The import checks that ``make_inputs`` can reproduce the kept inputs: the same seed twice gives the
    same bytes (no unseeded generator), another seed the same shapes.
    """
    fwd = [t for t in plan.inputs if t["source"] == "forward"]
    kept = {t["name"] for t in fwd if _kept(t["desc"])}
    _value_specs(plan, report, kept)
    plan.dynamic = []
    p0 = _p0(plan)
    _check_fixed_size(plan, p0, structured=True)
    a, b = STRUCTURE_SEEDS
    traced = _probe({"mode": "trace", "task": str(task),
                     "cases": [{"seed": a, "jitter": True, "unread": _buffer_params(plan)}, {"seed": b, "run": False},
                               {"seed": a, "run": False}]}, timeout)
    _drop_unread(plan, traced["cases"][0], report)
    first, other, again = (c["inputs"] for c in traced["cases"])
    varies = []
    for t in fwd:
        i = t["pos"]
        want = [1] if t["scalar"] else _concrete(t["shape"], p0[0] if p0 else {})
        for got in (first[i], other[i], again[i]):
            if got.get("kind") != "tensor" or (got["shape"] or [1]) != want:
                raise TaskImportError(f"input {t['name']}: get_inputs() gives {got.get('dtype')}{got.get('shape')} "
                                      f"under one seed and {want} under another; SPEC.md needs one shape per case, "
                                      "so a make_inputs cannot reproduce it")
        if t["name"] not in kept:
            continue
        if first[i]["digest"] != again[i]["digest"]:
            raise TaskImportError(f"input {t['name']}: get_inputs() gives different values for the same seed (it "
                                  "draws from a generator that is not seeded through torch, numpy or random), so a "
                                  "make_inputs cannot reproduce it")
        if first[i]["digest"] != other[i]["digest"]:
            varies.append(t["name"])
        if t["desc"]["dtype"] == "bool" or not t["desc"].get("integer"):
            t["value"] = {"dtype": "bool"} if t["desc"]["dtype"] == "bool" else \
                {"dtype": "bool", "torch_dtype": t["desc"]["dtype"]}
            continue
        lo = int(min(first[i]["min"], other[i]["min"]))
        hi = int(max(first[i]["max"], other[i]["max"]))
        t["value"] = {"dtype": _dtype(t["desc"]["dtype"]), "range": [lo, hi if hi > lo else lo + 1]}
    why = "; ".join(reasons)
    taken = ", ".join(t["name"] for t in fwd if t["name"] in kept)
    report.unmapped.append(f"shapes not varied: {why}; make_inputs "
                           + (f"takes {taken} from" if taken else "runs") + " the task's own get_inputs(), whose "
                           "sizes are the task's constants, so the one P0 shape is the task's own")
    fixed = [t["name"] for t in fwd if t["name"] in kept and t["name"] not in varies]
    drawn = [t["name"] for t in plan.inputs if t["name"] not in kept and not t.get("distinct")]
    perms = [t["name"] for t in plan.inputs if t.get("distinct")]
    report.notes.append("make_inputs: get_inputs() runs seeded from the case seed (torch, numpy and random); "
                        + (f"{', '.join(varies)} change with the seed; " if varies else "")
                        + (f"{', '.join(fixed)} are the same for every seed (get_inputs() builds them without "
                           "randomness or reseeds); " if fixed else "")
                        + (f"{', '.join(perms)} drawn as distinct values of the range; " if perms else "")
                        + (f"input(s) {', '.join(drawn)} are drawn from the case's value band over their "
                           "range (normal / small / large / offset), not taken from get_inputs()" if drawn else
                           "no float input to vary: every case has the same inputs"))
    if not drawn and not varies and not perms:
        raise TaskImportError("every input is kept from get_inputs() and none changes with the seed: every "
                              "verification case would be the same")
    make = []
    for t in plan.inputs:
        v = t["value"]
        idx = t["pos"] if t["name"] in kept else None
        entry: dict[str, Any] = {"name": t["name"], "given": idx, "shape": t["shape"], "dtype": v["dtype"]}
        if idx is None and v["dtype"] != "bool":
            entry["range"] = [float(x) for x in v["range"]]
            entry["normal"] = v.get("distribution") == "normal"
        if t.get("distinct"):
            entry["distinct"] = True
        make.append(entry)
    c0 = traced["cases"][0]
    return _write(task, source, desc, plan, p0, [c0["outputs"]], c0["calls"], report, dest, existing,
                  intake_timeout, make, lazy=traced.get("lazy"))


def _output_names(lhs: list[str], returned: list[str | None] | None, report: TaskImport) -> list[str]:
    """FORMULA's left-hand names as output names, in ``forward``'s return order.

    FORMULA lists its statements in the order they compute (``x = x1 + x2; y = norm(x) * gamma``), which need not
    be the order ``forward`` returns them (``return y, x``): named in FORMULA's order, SPEC.md swapped the outputs'
    meaning, and a kernel that returned what each name says failed. The names ``forward``'s ``return`` statement
    uses (``_probe._return_names``) reorder them; when they share some names but not all and disagree on an order,
    the outputs get plain names (``out0`` ...) rather than a guess.
    """
    if lhs == returned:
        return lhs
    if returned and all(n in lhs for n in returned) and len(set(returned)) == len(returned) < len(lhs):
        # FORMULA names intermediates too (``probs = softmax(logits); weights, ids = topk(probs)``): the outputs
        # are the names forward returns
        report.notes.append(f"outputs named {', '.join(str(n) for n in returned)} (forward returns them; FORMULA "
                            f"also names {', '.join(n for n in lhs if n not in returned)})")
        return [str(n) for n in returned]
    if not returned or len(returned) != len(lhs):
        return lhs
    if sorted(lhs) == sorted(n for n in returned if n):
        report.notes.append(f"outputs named after FORMULA ({', '.join(lhs)}) in the order forward returns them "
                            f"({', '.join(str(n) for n in returned)})")
        return [str(n) for n in returned]
    common = [n for n in lhs if n in returned]
    if any(lhs.index(n) != returned.index(n) for n in common):
        report.unmapped.append(f"FORMULA names the outputs {', '.join(lhs)}, forward returns "
                               f"{', '.join(n or '(an expression)' for n in returned)}: the order is not certain, so "
                               "the outputs are named out0, out1, ...")
        return []
    return lhs


def _returned_names(returned: list[str | None] | None, inputs: set[str], count: int,
                    report: TaskImport, formula_names: set[str] | None = None,
                    reassigned: set[str] | None = None) -> list[str]:
    """The variables ``forward`` returns as output names, when FORMULA's left-hand sides cannot name every output:
    all of them plain variables, distinct, and none an input's name (``return y, x.to(dt), rstd`` of an add +
    RMSNorm whose FORMULA names only x and y: SPEC.md said out0, out1, out2 and a kernel had to guess which is the
    residual). Empty when they cannot.

    Nor when a returned variable is assigned more than once in ``forward`` and FORMULA names a tensor so too
    (``formula_names``, ``reassigned``): ``s = exp(x - m); s = s / t; return s, m, t`` returns the normalised s while
    FORMULA's ``s`` is the exp, and the SPEC named the softmax output after the wrong formula (round 4)."""
    if not returned or len(returned) != count or any(n is None for n in returned):
        return []
    names = [str(n) for n in returned]
    if len(set(names)) != count or any(n in inputs for n in names):
        return []
    clash = [n for n in names if n in (formula_names or set()) and n in (reassigned or set())]
    if clash:
        report.unmapped.append(f"forward returns {', '.join(names)}, but {', '.join(clash)} is assigned more than "
                               "once in forward and FORMULA names a tensor so too (perhaps an earlier value): the "
                               "outputs are named out0, out1, ...")
        return []
    report.notes.append(f"outputs named after the variables forward returns ({', '.join(names)}); FORMULA does not "
                        "name each of them")
    return names


_CHOOSERS = frozenset({"topk", "sort", "argsort", "argmax", "argmin", "kthvalue", "max", "min", "mode", "median",
                       "cummax", "cummin"})
"""torch calls that return indices picked among values: which of two equal values they pick is torch's choice."""


def _picks_among_ties(calls: list[dict[str, Any]], out_dtypes: list[str]) -> bool:
    """An integer output and a call of :data:`_CHOOSERS` (as the gym import decides ``ties: unspecified``): with
    ``judged`` ties, verification's tied special cases held a correct kernel to torch's own tie-break."""
    ints = any(d.startswith(("int", "uint")) for d in out_dtypes)
    return ints and any(c["op"] in _CHOOSERS and not c.get("stable") for c in calls)


def _case_tolerance(primary: str, out_dtypes: list[str], report: TaskImport) -> dict[str, float]:
    """The case's tolerance: its dtype's (:data:`TOLERANCE`), but never tighter than that of a float output's own
    dtype. Verification compares every float output at the case's tolerance, and an fp32 case whose output is bf16
    (a quantised matmul that returns ``.to(torch.bfloat16)``) held a bf16 result to 1e-4: one rounding step of a
    correct kernel (2^-8 relative) failed it."""
    tol = dict(TOLERANCE.get(primary, TOLERANCE["fp32"]))
    loose = [d for d in dict.fromkeys(out_dtypes) if d in TOLERANCE and TOLERANCE[d]["rtol"] > tol["rtol"]]
    if loose:
        widest = max(loose, key=lambda d: TOLERANCE[d]["rtol"])
        tol = dict(TOLERANCE[widest])
        report.notes.append(f"output(s) in {', '.join(loose)}: the {primary} cases are compared at {widest}'s "
                            f"tolerance (atol {tol['atol']:g}, rtol {tol['rtol']:g}), the precision of the result")
    return tol


_QUANTISED = ("int8", "uint8", "int16")
"""Integer output dtypes that a quantisation writes (``round(y / scale).to(int8)``); ids and indices are int32/int64."""


def _rounded_tolerance(calls: list[dict[str, Any]], out_dtypes: list[str], report: TaskImport) -> dict[str, Any]:
    """``{int8: {atol: 1, rtol: 0}}`` for a quantised output: forward rounds (``round``) and returns int8 / uint8 /
    int16. An integer output is compared exactly unless its dtype has a tolerance entry (docs/verification.md), and
    ``round(y / scale)`` of a y that a kernel computes in another order lands one step away wherever y / scale sits
    within rounding error of a half: a 64 x 4096 RMSNorm quant has several such elements in every case, so a correct
    kernel failed. One quantisation step is the contract's resolution.

    A quantisation that truncates instead (``(x * 127 / amax).to(torch.int8)``, no ``round``: the probe marks a
    float -> int8 / uint8 / int16 conversion ``quantises``) flips one step at every integer the same way; round 3
    compared it exactly (round 4)."""
    if not any(c["op"] in ("round", "round_") or c.get("quantises") for c in calls):
        return {}
    quantised = [d for d in dict.fromkeys(out_dtypes) if d in _QUANTISED]
    if quantised:
        report.notes.append(f"output(s) in {', '.join(quantised)} are rounded quantisations (or truncating casts): "
                            "compared within one step (atol 1), since a kernel's scale can put a value on the other "
                            "side of a step")
    return {d: {"atol": 1, "rtol": 0} for d in quantised}


def _step_tolerance(tol: dict[str, Any], outs: list[list[dict[str, Any]]], report: TaskImport) -> dict[str, Any]:
    """``tol`` with its atol raised to the largest step a float16 / bfloat16 output jumped by when its inputs moved
    by a few units of their rounding (the probe's ``jump``, measured only where ``forward`` rounds: ``round``,
    ``floor``, ``ceil``, ``trunc``, ``//``).

    A fake quantisation returned as a float (``clamp(round(x / s), -128, 127) * s`` in fp16) is a staircase, and a
    kernel that computes ``x / s`` in fp32 lands on the neighbouring step wherever the half-precision quotient sat
    within its rounding of a half: measured (session 39, 256 x 4096 randn, s = 0.02 / 0.05) 0.5% of the fp16
    elements and 4-5% of the bf16 ones, each a whole step (0.02) off against a tolerance of 0.01 + 0.01 * |y|:
    every case of a correct kernel failed. One step is the op's resolution. In half precision the SPEC's own
    tolerance is already half a step for values near 1, so this loosens little; fp32 keeps its 1e-4 (the same
    division flips 0 of 1M elements there, a multiply by the inverse 2 of 1M) - a kernel that skipped the rounding
    would pass a one-step tolerance, and in fp32 that is the larger risk."""
    jump = max((float(o.get("jump", 0.0)) for case in outs for o in case
                if str(o.get("dtype")) in ("float16", "bfloat16")), default=0.0)
    if not math.isfinite(jump) or jump <= float(tol["atol"]):
        return tol
    step = _sig(jump, True)
    report.notes.append(f"a float16 / bfloat16 output is a staircase (forward rounds): it jumps by up to {step:g} "
                        "when the inputs move by a few units of their rounding, so the case's atol is that step (a "
                        "kernel rounding in another precision lands on the neighbouring step)")
    return {**tol, "atol": step}


def _check_fixed_size(plan: _Plan, p0: list[dict[str, int]], *, structured: bool) -> None:
    """Refuse an op dir one of whose cases has an input over :data:`MAX_FIXED_ELEMENTS` (no dynamic axis, or fixed
    axes that are that large on their own): before any child builds inputs of those sizes (a 4096 x 393216 float64
    draw is 12.9 GB), not after.

    When the largest input has no dynamic axis at all (a 1024 x 8192 -> 8192 Gemm chain's 8192 x 8192 weight), the
    dynamic axes are not why: the message said "even with the dynamic axes at their smallest (B=64)", which sent the
    user to DYNAMIC_AXIS. It names that input, its axes and sizes, the budget, and what the user can change
    (:func:`_fixed_input_too_large`)."""
    sizes = [(math.prod(_concrete(t["shape"], dims)), j, dims) for dims in p0 or [{}] for j, t in enumerate(plan.inputs)]
    biggest, j, dims = max(sizes, key=lambda s: s[0], default=(0, -1, {}))
    if not plan.dynamic and plan.peak is not None and too_large(plan.peak):  # the task's own sizes: known already
        raise TaskImportError(f"forward would build {_built(plan.peak)} at get_inputs()' sizes, too large to run "
                              "every case here, and no dynamic axis could be tied to an input to shrink it")
    if biggest <= MAX_FIXED_ELEMENTS:
        return
    t = plan.inputs[j]
    name = t["name"] + (", a buffer drawn at random in __init__, which a kernel must be given" if t.get("buffer")
                        else "")
    if plan.dynamic and not structured and not any(d in plan.dynamic for d in t["shape"]):
        raise TaskImportError(_fixed_input_too_large(t, dims, biggest, plan.dynamic))
    smallest = ", ".join(f"{d}={p0[0][d]}" for d in plan.dynamic) if plan.dynamic and p0 else ""
    why = ("the structured inputs tie the sizes to get_inputs()' own" if structured else
           f"even with the dynamic axes at their smallest ({smallest}) the sizes" if smallest else
           "no dynamic axis could be tied to an input, and get_inputs()' sizes")
    raise TaskImportError(f"{why} ({biggest:,} elements in one input) are too large to verify every case on the "
                          f"CPU emulator (the largest input: {name}; the budget is {MAX_FIXED_ELEMENTS:,} elements, "
                          f"2^{MAX_FIXED_ELEMENTS.bit_length() - 1}, in one input: give the task smaller sizes"
                          f"{', or name another of its axes in DYNAMIC_AXIS' if smallest else ''})")


def _fixed_input_too_large(t: dict[str, Any], dims: dict[str, int], elements: int, dynamic: list[str]) -> str:
    """One line: input ``t``, none of whose axes is dynamic, holds ``elements`` (over the budget) in every case."""
    sizes = _concrete(t["shape"], dims)
    axes = " x ".join(f"{d}={n}" if isinstance(d, str) else str(n) for d, n in zip(t["shape"], sizes))
    side = int(math.isqrt(MAX_FIXED_ELEMENTS))
    bound = f"at most {MAX_FIXED_ELEMENTS:,} elements in it, {side} x {side}"
    if t["source"] == "param":
        what = (f"{t['name']}, a buffer the model draws at random in __init__ (a kernel must be given it)"
                if t.get("buffer") else f"{t['name']}, the model's parameter {t.get('param') or t['name']} (a "
                "kernel must be given it as an input)")
        fix = f"build the model with smaller sizes ({bound}) in get_init_inputs() or the module constants it reads"
    else:
        what = f"{t['name']}, an input of forward none of whose axes is in DYNAMIC_AXIS"
        fix = f"give get_inputs() smaller sizes ({bound}) or name one of its axes in DYNAMIC_AXIS"
    return (f"{what} holds {elements:,} elements ({axes}) in every case, over the {MAX_FIXED_ELEMENTS:,}-element "
            f"(2^{MAX_FIXED_ELEMENTS.bit_length() - 1}) budget for one input of a case verified on the CPU emulator; "
            f"the dynamic axes ({', '.join(dynamic)}) do not shrink it (its axes are fixed sizes): to import the "
            f"task, {fix}")


_INDEPENDENT = (("golden output is all zeros in every case", "all zeros in every case"),
                ("golden output is constant", "the same value everywhere in every case"),
                ("it does not depend on the inputs", "the same for two seeds"))
"""Intake's messages for an output that does not follow the inputs (``runtime.opdir._intake``), and how IMPORT.md
says it."""


NARROWINGS = 3
"""How many times :func:`_narrow` halves the float inputs' ranges before a NaN golden refuses the task."""


def _nan_bands(problems: list[Any]) -> set[str]:
    """The value bands (``large``, ``offset`` ...) of the cases whose golden output intake found NaN in; empty when
    another problem is among them."""
    bands = set()
    for p in problems:
        found = re.search(r"case \S+-(\w+): golden output contains NaN", str(p))
        if not found:
            return set()
        bands.add(found.group(1))
    return bands


def _narrowable(t: dict[str, Any]) -> bool:
    """A float input with a range: what :func:`_narrow` may narrow."""
    return not (t.get("dtype") == "bool" or "range" not in t or str(t.get("dtype", "")).startswith(("int", "uint")))


MAX_SINGLE_NARROWINGS = 8
"""With more float inputs than this, :func:`_narrow_attempts` does not try them one at a time (an intake run each)."""


def _narrow_attempts(names: list[str]) -> list[list[str]]:
    """The sets of inputs :func:`_write` narrows in turn at one narrowing, until intake passes: each input alone,
    then all of them.

    Round 8 halved every float input's range at once. The range is also the normal band's (sigma = width / 6), so
    an input whose values cannot make ``forward`` leave its domain (Mamba2's ``X``, ``B`` and ``C``: only ``exp`` of
    the cumsum of ``A`` overflows) lost half of the task's own spread in every case. One input alone that keeps
    every case finite is narrowed alone; only when none does are all narrowed, as before."""
    singles = [[n] for n in names] if 1 < len(names) <= MAX_SINGLE_NARROWINGS else []
    return [*singles, list(names)]


def _narrow(inputs: list[dict[str, Any]], report: TaskImport, bands: set[str], times: int,
            only: list[str] | None = None, base: dict[str, list[float]] | None = None) -> None:
    """Halve float inputs' ranges around their centres: ``forward`` gives NaN in a value band that is not the
    task's own distribution (``normal``), so its domain is narrower than the samples' extremes jointly reach.
    ``only``: just these inputs (the others keep their ranges); ``base``: the ranges as first written, which the
    narrowed ones get ``times`` halvings of (without it, the current ranges are halved once).

    KernelBench's ``Mamba2ReturnFinalState`` takes ``exp`` of a 64-long cumsum of ``A = randn``: randn's walk stays
    within exp's range, but the ``large`` band puts every value at 2.25 to 3 sigma, the walk reaches 120 and the
    ``einsum`` adds inf to -inf. It was refused ("the written op dir fails intake: ... golden output contains NaN").
    The normal band keeps the task's distribution shape over the narrower range; IMPORT.md says by how much, and
    which inputs keep theirs."""
    names, kept = [], []
    for t in inputs:
        if not _narrowable(t):
            continue
        if base is not None and t["name"] in base:
            t["range"] = list(base[t["name"]])
        if only is not None and t["name"] not in only:
            kept.append(t["name"])
            continue
        lo, hi = (float(x) for x in t["range"])
        centre, half = (lo + hi) / 2, (hi - lo) / (2 ** (times + 1) if base is not None else 4)
        t["range"] = [_sig(centre - half, False), _sig(centre + half, True)]
        names.append(t["name"])
    report.unmapped = [u for u in report.unmapped if not u.startswith("golden output contains NaN")]
    report.unmapped.append(f"golden output contains NaN in the {', '.join(sorted(bands))} band(s) of the declared "
                           "ranges but not in the normal band (forward's domain is narrower than the samples' "
                           f"extremes jointly reach): the ranges of {', '.join(names)} are halved around their "
                           f"centres{f' ({times} times: 1/{2 ** times} of the width)' if times > 1 else ''}"
                           + (f"; {', '.join(kept)} keep theirs (every case is finite with only "
                              f"{'this one' if len(names) == 1 else 'these'} narrowed)" if kept else ""))


def _input_independent(problems: list[Any], outputs: list[dict[str, Any]], *,
                       refuse_all: bool = True) -> dict[str, str] | None:
    """The outputs intake refused only because they do not depend on the input values, when some other output
    does: output name -> why. None when another problem is among them, or when every output is such a one.

    MoE gating returns ``row_idx = arange(k) * T + arange(T)[:, None]`` beside its weights and ids: computed from
    the shapes alone, a real output of the op (the Ascend kernel writes it), and intake refused the whole task as a
    golden that ignores its inputs. A task whose every output is input-independent (KernelBench's
    ``Gemm_Max_Subtract_GELU`` subtracts a row's mean from the row's one value: zeros) has nothing a verification
    could check, and is refused (:func:`_constant_task`)."""
    found: dict[str, str] = {}
    for p in problems:
        field = str(getattr(p, "field", "") or "")
        why = next((say for text, say in _INDEPENDENT if text in str(getattr(p, "message", ""))), None)
        if not field.startswith("outputs.") or why is None:
            return None
        found.setdefault(field.removeprefix("outputs."), why)
    names = [o["name"] for o in outputs]
    if not found or any(n not in names for n in found):
        return None
    if len(found) == len(names) and refuse_all:  # round 13: the caller may first widen the inputs' tails
        raise TaskImportError(_constant_task(found))
    return found


def _varies_when_traced(fixed: dict[str, str], outputs: list[dict[str, Any]],
                        outs: list[list[dict[str, Any]]]) -> list[str]:
    """The outputs intake found input-independent (``fixed``) whose traced values - inputs drawn as ``get_inputs()``
    draws them, a ``randn`` unclipped - were not one value (round 13). ``(x > 3.5).any(dim=1)`` over 8192 ``randn``
    values per row is True in 85% of the rows, and always False over a SPEC range clipped at 3 sigma: the op dir
    had marked it ``constant: true``, so a kernel writing False passed."""
    names = [o["name"] for o in outputs]
    varied = []
    for name in fixed:
        j = names.index(name) if name in names else -1
        seen = [(o.get("min"), o.get("max")) for case in outs if 0 <= j < len(case) for o in [case[j]]]
        if any(lo is not None and lo != hi for lo, hi in seen) or len(set(seen)) > 1:
            varied.append(name)
    return varied


def _widened_note(outputs: list[str], wide: list[str]) -> str:
    return (f"output(s) {', '.join(outputs)} are the same in every case for inputs drawn within 3 sigma (the SPEC's "
            "normal ranges) but not for inputs drawn as get_inputs() draws them, whose tails reach past it: "
            f"{'; '.join(wide)} (a wider normal, sigma = range / 6), so that a kernel writing the constant fails")


def _widen_tails(inputs: list[dict[str, Any]], plan: _Plan) -> list[str]:
    """Widen each SPEC input drawn as a normal within 3 sigma (:func:`_value_spec`) to its ``get_inputs()`` sample's
    extremes, where they reach past it; what was widened, as ``name [lo, hi]`` (round 13: see
    :func:`_varies_when_traced`)."""
    described = {t["name"]: t.get("desc") or {} for t in plan.inputs}
    said = []
    for t in inputs:
        d = described.get(t["name"], {})
        if t.get("distribution") != "normal" or "min" not in d or "max" not in d:
            continue
        lo, hi = _sig(min(float(d["min"]), t["range"][0]), False), _sig(max(float(d["max"]), t["range"][1]), True)
        if [lo, hi] != list(t["range"]):
            t["range"] = [lo, hi]
            said.append(f"input {t['name']} drawn over [{lo:g}, {hi:g}]")
    return said


def _constant_task(found: dict[str, str]) -> str:
    said = "; ".join(f"{n}: {why}" for n, why in found.items())
    return (f"every output of forward is independent of the input values ({said}): the task computes a constant "
            "(e.g. a row's mean subtracted from that row's only value), so a kernel that writes the constant would "
            "pass and verification could not check anything")


_TINY = {"float32": 1.1754944e-38, "bfloat16": 1.1754944e-38, "float16": 5.9604645e-08, "float64": 2.2250739e-308}
"""Per torch float dtype, the magnitude below which an output counts as zero: float32 / bfloat16 / float64's smallest
normal number (below it live only the remainders of a product that underflowed), but float16's smallest subnormal,
i.e. only an exact zero. float16's subnormals (6e-8 .. 6e-5) hold real results: a softmax over a 32768-long row at a
temperature of 100 gives probabilities of about 3e-5, and its smallest *normal* (6.1e-5) refused that task as
"all zeros" (round 4)."""


def _refuse_zero_outputs(outs: list[list[dict[str, Any]]]) -> None:
    """Refuse a task whose every output is all zeros in every traced case (inputs drawn as get_inputs() draws them).

    KernelBench's ``50_Product_reduction_over_a_dimension`` multiplies 256 ``randn`` values: the product underflows
    to 0 in float32 for the task's own inputs, and overflows to inf in verification's large band. Intake passed it
    (not zero in *every* band), and a kernel writing zeros passed the cases drawn like the task's."""
    def zero(o: dict[str, Any]) -> bool:  # below the dtype's smallest normal number: 0 or an underflow remainder
        tiny = _TINY.get(str(o.get("dtype")))
        return (o.get("kind") == "tensor" and tiny is not None and "min" in o and
                max(abs(float(o["min"])), abs(float(o["max"]))) < tiny)

    if outs and outs[0] and all(zero(o) for case in outs for o in case):
        raise TaskImportError("every output of forward is all zeros for inputs drawn as get_inputs() draws them, in "
                              "every traced case (a product of many values that underflows in float32, or a chain "
                              "that cancels: a row's mean subtracted from the row's only value): a kernel writing "
                              "zeros would pass, so verification could not check anything")


def _write(task: Path, source: str, desc: dict[str, Any], plan: _Plan, p0: list[dict[str, int]],
           outs: list[list[dict[str, Any]]], calls: list[dict[str, Any]], report: TaskImport, dest: Path,
           existing: list[str], intake_timeout: float, make: list[dict[str, Any]] | None = None,
           runs: list[dict[str, int]] | None = None, lazy: list[str] | None = None) -> TaskImport:
    """SPEC.md, golden.py and IMPORT.md from the plan and the traced run; intake on them in a private directory;
    then (only if intake passes) into ``dest``. ``runs``: the dims of the traced cases (``outs``) when they are not
    ``p0`` (a first case alone, too large for a tail case, is traced with one more size to name its output axes:
    a 1-row case's output [1, 1, 4095] was written as a fixed shape, and a correct kernel failed at other sizes)."""
    from runtime.opdir import intake
    from runtime.sandbox import private_dir

    _check_fixed_size(plan, p0, structured=any(m["given"] is not None for m in make or []))
    for j, o in enumerate(outs[0]):
        if o["kind"] != "tensor":
            raise TaskImportError(f"forward returns a {o.get('type')} as output {j}; only tensors can be compared")
    rows = _inventory(calls, report)
    out_shapes = _output_shapes(outs, plan, runs or p0)
    fwd_in = [t for t in plan.inputs if t["source"] == "forward"]
    float_dtypes = [t["value"]["dtype"] for t in plan.inputs if t["value"]["dtype"] in TOLERANCE]
    primary = float_dtypes[0] if float_dtypes else "fp32"
    lhs = formula_outputs(desc.get("formula") or "")
    taken = {t["name"] for t in plan.inputs}
    before = len(report.unmapped)
    out_names = _output_names([n for n in lhs if n not in taken], desc.get("returns"), report) \
        if len(outs[0]) > 1 else []
    if len(out_names) != len(outs[0]) and len(outs[0]) > 1:
        out_names = _returned_names(desc.get("returns"), taken, len(outs[0]), report,
                                    set(formula_tensors(desc.get("formula") or "")) | set(lhs),
                                    set(desc.get("reassigned") or []))
        if out_names:  # named after all: FORMULA's uncertain order no longer matters
            del report.unmapped[before:]
    if len(out_names) != len(outs[0]):
        out_names = ["out"] if len(outs[0]) == 1 else [f"out{j}" for j in range(len(outs[0]))]
    out_names = [_ident(n, taken) for n in out_names]
    inputs = []
    for t in plan.inputs:
        v = t["value"]
        entry: dict[str, Any] = {"name": t["name"], "shape": t["shape"],
                                 "dtype": "T" if v["dtype"] == primary else v["dtype"]}
        if "range" in v:
            entry["range"] = v["range"]
        if v.get("distribution"):
            entry["distribution"] = v["distribution"]
        inputs.append(entry)
    outputs: list[dict[str, Any]] = []
    for name, shape, o in zip(out_names, out_shapes, outs[0]):
        dt = _dtype(o["dtype"])
        outputs.append({"name": name, "shape": shape, "dtype": "T" if dt == primary else dt})
    spec: dict[str, Any] = {"op_name": report.op_name, "inputs": inputs, "outputs": outputs}
    spec["dynamic_axes"] = plan.dynamic
    if p0:
        spec["p0_shapes"] = p0
    spec["supported_dtypes"] = [primary]
    spec["tolerance"] = {primary: _case_tolerance(primary, [_dtype(o["dtype"]) for o in outs[0]], report)}
    spec["tolerance"][primary] = _step_tolerance(spec["tolerance"][primary], outs, report)
    spec["tolerance"].update(_rounded_tolerance(calls, [_dtype(o["dtype"]) for o in outs[0]], report))
    spec["seeds"] = [0, 1, 2]
    if _picks_among_ties(calls, [o["dtype"] for o in outs[0]]):
        spec["ties"] = "unspecified"
        report.notes.append("SPEC.md declares `ties: unspecified`: forward returns indices chosen by a top-k, sort, "
                            "argmax, max/min over an axis or a running max/min (cummax), whose tie-break the task does "
                            "not fix (KernelBench draws random floats, which do not tie): verification draws no tied "
                            "inputs (docs/opdir.md)")
    report.dynamic_axes, report.p0_shapes = list(plan.dynamic), p0
    if len(fwd_in) < len(plan.inputs):
        report.notes.append(f"{len(plan.inputs) - len(fwd_in)} model parameter(s) are inputs after the forward "
                            "arguments: " + ", ".join(t["name"] for t in plan.inputs if t["source"] == "param"))
    unsorted = any(c.get("unsorted") for c in calls)
    if unsorted:
        report.contract.append("forward calls topk(sorted=False), whose order of the k results torch leaves "
                               "unspecified (its CPU partial sort's, which no kernel can know); golden.py runs it "
                               "sorted, so each row's k results come in the order topk(sorted=True) gives them (the "
                               "ranked values descending; ascending with largest=False)")
        report.notes.append(report.contract[-1])
    if lazy:
        report.notes.append(f"forward builds {', '.join('self.' + n for n in lazy)} on its first call and the next "
                            "call's outputs do not depend on it (state made from the shapes or constants, as if "
                            "__init__ had made it): golden.py starts every case from the model's state as built")
    golden_text = _golden_text(task, source, plan, rows, len(fwd_in), make, sorted_topk=unsorted, fresh=bool(lazy))
    narrowed, constants_tried, widened = 0, False, False
    wide: list[str] = []
    undo: tuple[dict[str, list[Any]], dict[str, str], str] | None = None
    """After widening (round 13): the ranges before, what intake found constant then, and the note said."""
    attempts: list[list[str]] = []  # at the current narrowing: the sets of inputs still to try narrowing alone
    base = {t["name"]: list(t["range"]) for t in spec["inputs"] if _narrowable(t)}
    with private_dir("forge-task-opdir-") as tmp:
        while True:
            files = {"SPEC.md": _spec_text(task, report, spec, desc, make), "golden.py": golden_text}
            for name, text in files.items():
                (tmp / name).write_text(text, encoding="utf-8")
            try:
                checked = intake(tmp, timeout=intake_timeout)
            except Exception as exc:  # noqa: BLE001 - intake itself failed on the written op dir: say so, write nothing
                raise TaskImportError(f"intake failed on the written op dir: {type(exc).__name__}: "
                                      f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
            if checked.ok:
                break
            bands = _nan_bands(checked.problems)
            if make is None and bands and "normal" not in bands and (attempts or narrowed < NARROWINGS):
                if not attempts:
                    narrowed += 1
                    attempts = _narrow_attempts(list(base))
                _narrow(spec["inputs"], report, bands, narrowed, only=attempts.pop(0), base=base)
                continue
            fixed = (_input_independent(checked.problems, outputs, refuse_all=False) if not constants_tried
                     else None)
            constants_tried = True
            if undo is not None:  # after widening: keep it where an output now varies, else put the ranges back
                helped = [n for n in undo[1] if fixed is not None and n not in fixed]
                at = report.unmapped.index(undo[2])
                if helped:
                    report.unmapped[at] = _widened_note(helped, wide)
                else:
                    for t in spec["inputs"]:
                        t["range"] = undo[0].get(t["name"], t.get("range"))
                    del report.unmapped[at]
                    fixed = undo[1]
                undo = None
            if fixed is None:
                first = str(checked.problems[0]) if checked.problems else "intake failed"
                raise _InputsRejected(f"the written op dir fails intake: {first}")
            varied = [] if widened else _varies_when_traced(fixed, outputs, outs)
            clipped = {t["name"]: list(t["range"]) for t in spec["inputs"] if "range" in t}
            if varied and (wide := _widen_tails(spec["inputs"], plan)):
                widened, constants_tried = True, False  # intake again over the samples' own extremes
                report.unmapped.append(_widened_note(varied, wide))
                undo = (clipped, fixed, report.unmapped[-1])
                continue
            if len(fixed) == len(outputs):
                raise TaskImportError(_constant_task(fixed))
            for o in outputs:
                if o["name"] in fixed:
                    o["constant"] = True
            report.constant_outputs.update(fixed)
            said = "; ".join(f"{n}: {why}" for n, why in fixed.items())
            # why is intake's observation, not a proof: from the shapes alone (MoE row_idx), or fixed by the chain
            # over the declared ranges (relu(-exp(y)) is 0 for every y) - SPEC.md says what was seen, not a cause
            report.unmapped.append(f"output(s) {', '.join(fixed)} do not depend on the input values ({said}): "
                                   "computed from the shapes alone, or fixed by forward over the inputs' declared "
                                   "ranges, so SPEC.md marks them `constant: true` (a kernel must still write them; "
                                   "the other outputs carry the check)")
        report.cases = len(checked.cases)
        report.notes += [f"intake: {n}" for n in checked.notes]
        files["IMPORT.md"] = _import_md(task, report)
        try:
            dest.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (dest / name).write_text(text, encoding="utf-8")
                report.written.append(name)
        except OSError as exc:
            raise TaskImportError(f"{dest}: cannot write the operator directory ({exc.strerror or exc})") from None
    if existing:
        report.notes.append(f"replaced (--force): {', '.join(existing)}")
    shutil.rmtree(dest / "__pycache__", ignore_errors=True)
    return report
