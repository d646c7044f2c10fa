"""``python -m orchestrator import <gym op folder | test_<op>.py> <new op dir>``: a gym operator as a PTO Forge op dir.

What it reads (the gym's layout): ``SPEC.md`` (gym front matter: ``op_name``, ``supported_dtypes``, ``p0_shapes``
in any of its forms, one ``tolerance {atol, rtol}``, extra keys = attributes), ``<op>_golden.py`` (a torch
``<op>_golden(...)`` and ``_make_inputs(device)``), ``test_<op>.py`` (which impl entry the test calls) and
``<op>_impl.py`` (the jit kernels and their host entry).

What it writes (never over existing files unless ``force``):

* ``SPEC.md`` in PTO Forge's format: inputs and outputs with named dims (a dim that differs between the gym's
  cases is a named, dynamic dim; one that never differs is a fixed size), cases from the gym's shapes, the
  one tolerance for every supported dtype, attributes typed from the gym's keyword arguments, value ranges
  from the gym's own input samples; then the gym SPEC's prose;
* ``golden.py``: the gym golden unchanged plus ``golden(...)``, which feeds it torch tensors (torch goldens
  are allowed: the golden runner converts their outputs);
* ``<op>_impl.py``: the gym impl unchanged plus ``<op>_wrapper(...)``, the one entry the verifier calls
  (inputs positional, attributes as keywords), dispatching to the gym's host entry.

The gym golden runs once, in its own process (it needs torch), to learn shapes, dtypes, value ranges and
output count. Everything that cannot be mapped is reported line by line (:class:`ImportReport`).
"""

from __future__ import annotations

import ast
import json
import logging
import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from orchestrator.adapters.gym._layout import GymLayoutError, GymOp, locate
from orchestrator.adapters.gym._observed import TO_TORCH, spec_document
from orchestrator.adapters.gym._real import RealGymError, import_real
from runtime import pyast
from runtime.dtypes import DTypeError, canonical_name
from runtime.frontmatter import split_front_matter

__all__ = ["GymImportError", "ImportReport", "import_gym_op"]

log = logging.getLogger(__name__)

_PROBE = Path(__file__).with_name("_probe.py")
_ALLOWED_IMPORTS = {"pypto", "numpy", "math", "torch", "dataclasses", "typing", "functools"}
_TORCH_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int8": "int8",
                 "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool"}
_KNOWN_GYM_KEYS = {"schema_version", "op_name", "supported_dtypes", "p0_shapes", "tolerance"}


class GymImportError(ValueError):
    """The gym operator cannot be imported at all (one clear message; nothing was written).

    ``test_rc`` / ``test_output``: how the gym's own test ended under the emulator when the import ran it."""

    def __init__(self, message: str, *, test_rc: int | None = None, test_output: str = "") -> None:
        super().__init__(message)
        self.test_rc, self.test_output = test_rc, test_output


@dataclass
class ImportReport:
    """What the import wrote, and every line it could not map (shown to the user, also in IMPORT.md)."""

    op_name: str
    written: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    test_rc: int | None = None
    """Real gym layout: the exit status of the gym's own test, run on the emulator by the import."""
    test_output: str = ""
    """... and the tail of what it printed (stdout, then stderr)."""


@dataclass
class _Gym:
    folder: Path
    op: str
    spec_path: Path | None
    spec: dict[str, Any]
    prose: str
    golden: Path
    golden_fn: str
    impl: Path | None
    test: Path | None


# ------------------------------------------------------------------------------------------------ reading


def _front_matter(text: str, path: Path | None = None) -> tuple[dict[str, Any], str]:
    """The gym SPEC's YAML front matter and its prose. Broken YAML is the user's to fix: one line naming the
    SPEC.md line (the front matter starts on line 2), never a parser traceback."""
    fm = split_front_matter(text)
    if fm.problem == "yaml":
        where = f"{path or 'SPEC.md'}" + (f":{fm.error_line}" if fm.error_line is not None else "")
        raise GymImportError(f"{where}: the SPEC {fm.message}") from None
    if fm.problem in ("missing", "unclosed"):
        return {}, text
    return fm.data or {}, fm.body


def _locate(source: Path) -> _Gym:
    if not source.exists():
        raise GymImportError(f"{source} does not exist (give a gym op folder or its test_<op>.py)")
    test: Path | None = None
    if source.is_file():
        if source.name.startswith("test_") and source.suffix == ".py":
            folder, test = source.parent, source
        elif source.name == "SPEC.md" or source.name.endswith(("_impl.py", "_golden.py")):
            folder = source.parent  # another file of the op folder: the folder is meant
        else:
            raise GymImportError(f"{source.name}: give a gym op folder or its test file test_<op>.py")
    else:
        folder = source
    spec_path = next((p for p in (folder / "SPEC.md", folder / "docs" / "SPEC.md") if p.is_file()), None)
    try:
        spec, prose = _front_matter(spec_path.read_text(encoding="utf-8"), spec_path) if spec_path else ({}, "")
    except (OSError, UnicodeDecodeError) as exc:
        raise GymImportError(f"{spec_path}: cannot read it ({exc})") from None
    goldens = sorted(folder.glob("*_golden.py")) or sorted(folder.glob("golden.py"))
    op = str(spec.get("op_name") or "")
    if not op and test is not None:
        op = test.stem[len("test_"):]
    if not op and len(goldens) == 1:
        op = goldens[0].stem.removesuffix("_golden")
    if not op:
        raise GymImportError(f"{folder}: cannot tell the operator name (no op_name in SPEC.md, no single "
                             "*_golden.py)")
    golden = next((g for g in goldens if g.stem in (f"{op}_golden", "golden")), goldens[0] if goldens else None)
    if golden is None:
        raise GymImportError(f"{folder}: no <op>_golden.py (the reference the gym tests compare against)")
    fn = f"{op}_golden" if golden.stem != "golden" else "golden"
    if test is None:
        test = next(iter(sorted(folder.glob(f"test_{op}.py")) or sorted(folder.glob("test_*.py"))), None)
    impl = next(iter(sorted(folder.glob(f"{op}_impl.py")) or sorted(folder.glob("*_impl.py"))), None)
    return _Gym(folder, op, spec_path, spec, prose, golden, fn, impl, test)


def _probe(gym: _Gym, timeout: float) -> dict[str, Any]:
    """Run the gym golden on its own ``_make_inputs`` in a child through the project's one process runner (the
    allow-listed environment: vendor code never sees the user's secrets)."""
    from runtime.sandbox import Limits, private_dir, run_process

    limits = Limits(wall_s=timeout, cpu_s=int(timeout) + 30, memory_bytes=None, max_open_files=1024,
                    max_file_bytes=None, max_processes=None)
    with private_dir("forge-gym-golden-") as work:
        proc = run_process([sys.executable, "-s", "-B", str(_PROBE), str(gym.golden), gym.golden_fn,
                            str(gym.folder)], work=work, limits=limits, profile="trusted", output_cap=8 << 20)
    if proc.timed_out:
        raise GymImportError(f"{gym.golden.name}: running the gym golden took longer than {timeout:g} s")
    stdout, stderr = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    line = next((ln for ln in stdout.splitlines() if ln.startswith("GYM_PROBE ")), None)
    if proc.returncode != 0 or line is None:
        tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
        if "No module named 'torch'" in stderr:
            tail = "torch is not installed (gym goldens are torch; pip install torch==2.13.0 for a CPU build)"
        raise GymImportError(f"{gym.golden.name}: running {gym.golden_fn} on its _make_inputs failed: {tail}")
    return json.loads(line[len("GYM_PROBE "):])


# ------------------------------------------------------------------------------------------------ mapping


def _dtype(name: str) -> str:
    return _TORCH_DTYPES.get(name, name)


def _output_names(gym: _Gym, count: int, inputs: list[str]) -> list[str]:
    """Names from the golden's ``return a, b`` (or ``return y.to(...)``), else y / out0.."""
    tree = pyast.parse(gym.golden.read_text(encoding="utf-8"))
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == gym.golden_fn), None)
    names: list[str] = []
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None] if fn else []
    if returns:
        value = returns[-1].value
        elts = value.elts if isinstance(value, ast.Tuple) else [value]
        for e in elts:
            while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
                e = e.func.value
            names.append(e.id if isinstance(e, ast.Name) else "")
    if len(names) != count or not all(names) or len(set(names)) != count:
        names = ["y"] if count == 1 else [f"out{i}" for i in range(count)]
    return [f"{n}_out" if n in inputs else n for n in names]


def _range(descs: list[dict[str, Any]]) -> list[float] | None:
    lo = min((d["min"] for d in descs if "min" in d), default=None)
    hi = max((d["max"] for d in descs if "max" in d), default=None)
    if lo is None or hi is None:
        return None
    if any(d.get("integer") for d in descs):
        lo_i, hi_i = math.floor(lo), math.ceil(hi)
        return [float(lo_i), float(hi_i if hi_i > lo_i else lo_i + 1)]
    lo_r = 0.0 if lo >= 0 else math.floor(lo * 2) / 2
    hi_r = math.ceil(hi * 2) / 2
    if hi_r <= lo_r:
        hi_r = lo_r + 0.5
    return [lo_r, hi_r]


def _build_spec(gym: _Gym, probe: dict[str, Any], report: ImportReport) -> tuple[dict[str, Any], list[str],
                                                                              dict[str, Any]]:
    """(our SPEC front matter, input names, attributes {name: (type, value)})."""
    cases = probe["cases"]
    if not cases:
        raise GymImportError(f"{gym.golden.name}: _make_inputs returned no case")
    n_in = len(cases[0]["inputs"])
    if any(len(c["inputs"]) != n_in or len(c["outputs"]) != len(cases[0]["outputs"]) for c in cases):
        raise GymImportError(f"{gym.golden.name}: the cases of _make_inputs differ in their number of inputs or "
                             "outputs; import needs one signature")
    params = probe["params"]
    positional = [p for p in params if p["kind"] in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")]
    in_names = [p["name"] for p in positional[:n_in]]
    if len(in_names) < n_in:
        in_names += [f"in{i}" for i in range(len(in_names), n_in)]
    tensors_in = [i for i in range(n_in) if cases[0]["inputs"][i]["kind"] == "tensor"]
    for i in range(n_in):
        if i not in tensors_in:
            report.unmapped.append(f"{gym.golden.name}: positional argument {in_names[i]!r} of _make_inputs is not "
                                   "a tensor; it is not an input of the op dir (make it a keyword argument)")
    # attributes: golden defaults after the inputs, overridden by the cases' keyword arguments
    attrs: dict[str, Any] = {}
    for p in params[n_in:]:
        d = p.get("default")
        if d and d["kind"] == "scalar":
            attrs[p["name"]] = d["value"]
    first_kwargs = cases[0]["kwargs"]
    for k, d in first_kwargs.items():
        if d["kind"] != "scalar":
            report.unmapped.append(f"{gym.golden.name}: keyword argument {k!r} is a {d['type']} ({d.get('repr', '')}); "
                                   "only scalar attributes map to SPEC attributes")
            continue
        attrs[k] = d["value"]
        if any(c["kwargs"].get(k) != d for c in cases[1:]):
            report.unmapped.append(f"{gym.golden.name}: attribute {k!r} differs between the gym's cases; the op dir "
                                   f"uses {d['value']!r} (one value per op dir)")
    for k, v in gym.spec.items():
        if k in _KNOWN_GYM_KEYS:
            continue
        if k in attrs:
            if attrs[k] != v:
                report.unmapped.append(f"SPEC.md: {k}: {v!r} differs from the golden's {attrs[k]!r}; the golden's "
                                       "value is kept")
        elif isinstance(v, bool | int | float | str):
            attrs[k] = v
        else:
            report.unmapped.append(f"SPEC.md: key {k!r} ({type(v).__name__}) is not a scalar attribute; dropped")
    # dtypes: the case dtype is the dtype of the first float tensor input
    def case_dtype(c: dict[str, Any]) -> str:
        for i in tensors_in:
            d = c["inputs"][i]
            if not d.get("integer", False):
                return _dtype(d["dtype"])
        return _dtype(c["inputs"][tensors_in[0]]["dtype"]) if tensors_in else "fp32"

    observed = list(dict.fromkeys(case_dtype(c) for c in cases))
    supported: list[str] = []
    for d in gym.spec.get("supported_dtypes") or observed:
        try:
            supported.append(canonical_name(str(d)))
        except DTypeError:
            report.unmapped.append(f"SPEC.md: supported dtype {d!r} is not one PTO Forge knows; dropped")
    supported = list(dict.fromkeys(supported)) or observed
    for d in observed:
        if d not in supported:
            report.notes.append(f"_make_inputs uses dtype {d}, which SPEC.md does not list; added")
            supported.append(d)
    missing = [d for d in supported if d not in observed]
    if missing:
        report.notes.append(f"supported dtype(s) {', '.join(missing)} have no case in _make_inputs; the op dir "
                            "generates their inputs from the SPEC ranges")

    def dtype_of(kind: str, i: int) -> str:
        names = {(_dtype(c[kind][i]["dtype"]), case_dtype(c)) for c in cases}
        if all(a == b for a, b in names):
            return "T"
        concrete = {a for a, _ in names}
        if len(concrete) > 1:
            report.unmapped.append(f"{kind[:-1]} {i}: dtype varies ({', '.join(sorted(concrete))}) but not with the "
                                   "case dtype; using the first")
        return sorted(concrete)[0]

    # shapes: one vector of sizes per (tensor, axis) over the distinct shape signatures of the cases
    sigs: list[tuple] = []
    for c in cases:
        sig = tuple(tuple(c["inputs"][i]["shape"]) for i in tensors_in) + tuple(
            tuple(o["shape"]) if o["kind"] == "tensor" else () for o in c["outputs"])
        if sig not in sigs:
            sigs.append(sig)
    n_out = len(cases[0]["outputs"])
    out_names = _output_names(gym, n_out, in_names)
    labels = [in_names[i] for i in tensors_in] + out_names
    dims: dict[tuple, str] = {}
    dynamic: list[str] = []
    shapes: list[list[Any]] = []
    for t, label in enumerate(labels):
        ranks = {len(s[t]) for s in sigs}
        if len(ranks) != 1:
            raise GymImportError(f"tensor {label!r} changes rank between the gym's cases; import needs one rank")
        shape: list[Any] = []
        for ax in range(ranks.pop()):
            vec = tuple(s[t][ax] for s in sigs)
            if len(set(vec)) == 1:
                shape.append(vec[0])
                continue
            if vec not in dims:
                name = re.sub(r"\W", "", label.upper()) + str(ax)
                dims[vec] = name
                if t < len(tensors_in):
                    dynamic.append(name)
                else:
                    report.unmapped.append(f"output {label!r} axis {ax} varies in a way no input axis does; bound by "
                                           f"the P0 shapes only (a derived tail case may not fit)")
            shape.append(dims[vec])
        shapes.append(shape)
    p0 = [{name: vec[k] for vec, name in dims.items()} for k in range(len(sigs))] if dims else []
    declared = gym.spec.get("p0_shapes")
    if declared is not None:
        report.notes.append(f"SPEC.md p0_shapes {json.dumps(declared)} was cross-read with _make_inputs: "
                            f"{len(sigs)} distinct shape case(s)")
    inputs = []
    for t, i in enumerate(tensors_in):
        entry: dict[str, Any] = {"name": in_names[i], "shape": shapes[t], "dtype": dtype_of("inputs", i)}
        rng = _range([c["inputs"][i] for c in cases])
        if rng is not None:
            entry["range"] = rng
        inputs.append(entry)
    report.notes.append("input value ranges were inferred from the gym's _make_inputs samples (uniform inside "
                        "them); edit SPEC.md if an input has a narrower domain")
    outputs = [{"name": out_names[j], "shape": shapes[len(tensors_in) + j], "dtype": dtype_of("outputs", j)}
               for j in range(n_out)]
    tol = gym.spec.get("tolerance")
    if isinstance(tol, dict) and {"atol", "rtol"} <= set(tol):
        tolerance = {d: {"atol": float(tol["atol"]), "rtol": float(tol["rtol"])} for d in supported}
    elif isinstance(tol, dict) and all(isinstance(v, dict) for v in tol.values()):
        tolerance = {}
        for k, v in tol.items():
            try:
                tolerance[canonical_name(str(k))] = {"atol": float(v["atol"]), "rtol": float(v["rtol"])}
            except (DTypeError, KeyError, TypeError, ValueError):
                report.unmapped.append(f"SPEC.md: tolerance entry {k!r} is not {{atol, rtol}}; dropped")
    else:
        tolerance = {}
        if tol is not None:
            report.unmapped.append(f"SPEC.md: tolerance {tol!r} is not {{atol, rtol}} (custom metrics such as "
                                   "mare/mere/rmse have no PTO Forge equivalent); using 1e-3/1e-3")
    for d in supported:
        tolerance.setdefault(d, {"atol": 1e-3, "rtol": 1e-3})
    spec = spec_document(gym.op, inputs, outputs, dynamic, p0, supported, tolerance, attrs)
    return spec, [in_names[i] for i in tensors_in], spec.get("attributes", {})


# ------------------------------------------------------------------------------------------------ writing


def _yaml_spec(spec: dict[str, Any]) -> str:
    out = ["---"]
    for key, value in spec.items():
        if key in ("inputs", "outputs"):
            out.append(f"{key}:")
            for t in value:
                out.append("  - " + _flow(t))
        elif key == "p0_shapes":
            out.append(f"{key}:")
            out += ["  - " + _flow(d) for d in value]
        elif key in ("tolerance", "attributes"):
            out.append(f"{key}:")
            out += [f"  {k}: {_flow(v)}" for k, v in value.items()]
        else:
            out.append(f"{key}: {_flow(value)}")
    out.append("---")
    return "\n".join(out) + "\n"


def _flow(value: Any) -> str:
    return yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False).strip().removesuffix("...").strip()


def _golden_source(gym: _Gym, in_names: list[str], attrs: dict[str, Any], spec: dict[str, Any]) -> str:
    shapes = ", ".join("[" + ",".join(str(d) for d in t["shape"]) + "]" for t in spec["inputs"])
    outs = ", ".join("[" + ",".join(str(d) for d in t["shape"]) + "]" for t in spec["outputs"])
    header = (
        "# Golden function inventory\n"
        "# | # | Golden operation | Shape transformation |\n"
        "# |---|------------------|----------------------|\n"
        f"# | 1 | {gym.golden_fn} (imported from the gym as one operation) | {shapes} -> {outs} |\n"
        f"# Imported by `python -m orchestrator import` from {gym.golden.name}: the gym golden below is unchanged;\n"
        "# golden() at the end feeds it torch tensors (PTO Forge hands golden() numpy arrays).\n\n"
    )
    params = [*in_names, *(f"{k}={v['value']!r}" for k, v in attrs.items())]
    call = [*(f"_pto_forge_torch({n})" for n in in_names), *(f"{k}={k}" for k in attrs)]
    adapter = (
        "\n\n# --- PTO Forge adapter (written by `python -m orchestrator import`) ---\n"
        + TO_TORCH +
        f"def golden({', '.join(params)}):\n"
        f"    return {gym.golden_fn}({', '.join(call)})\n"
    )
    return header + gym.golden.read_text(encoding="utf-8").rstrip() + "\n" + adapter


def _entry(gym: _Gym, report: ImportReport) -> tuple[str, ast.FunctionDef] | None:
    """The gym impl's host entry: the impl function the test calls (else the one named like the op)."""
    assert gym.impl is not None
    tree = pyast.parse(gym.impl.read_text(encoding="utf-8"))
    jit = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)
           and any("jit" in ast.unparse(d) for d in n.decorator_list)}
    host = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in jit
            and not n.name.startswith("_")}
    called: list[str] = []
    if gym.test is not None:
        ttree = pyast.parse(gym.test.read_text(encoding="utf-8"))
        for node in ast.walk(ttree):
            if isinstance(node, ast.ImportFrom) and node.module == gym.impl.stem:
                called += [a.name for a in node.names if a.name in host]
    candidates = list(dict.fromkeys(called)) or [n for n in host if n in (gym.op, f"{gym.op}_forward")]
    if not candidates:
        candidates = [n for n, f in host.items() if n.endswith("_wrapper") or any(
            isinstance(c, ast.Call) and ast.unparse(c.func).split("[")[0] in jit | {"_KERNELS"}
            for c in ast.walk(f))]
    if len(candidates) != 1:
        report.unmapped.append(f"{gym.impl.name}: cannot tell which host function is the entry "
                               f"({', '.join(candidates) or 'no candidate'}); write {gym.op}_wrapper by hand")
        return None
    return candidates[0], host[candidates[0]]


def _impl_source(gym: _Gym, in_names: list[str], attrs: dict[str, Any], report: ImportReport) -> str | None:
    assert gym.impl is not None
    source = gym.impl.read_text(encoding="utf-8")
    tree = pyast.parse(source)
    for node in tree.body:
        mods = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        for m in mods:
            if m.split(".")[0] not in _ALLOWED_IMPORTS:
                report.unmapped.append(f"{gym.impl.name}:{node.lineno}: imports {m!r}, which a PTO Forge kernel file "
                                       "may not import (the sandbox copies only the kernel file)")
    found = _entry(gym, report)
    if found is None:
        return None
    name, fn = found
    a = fn.args
    pos = [p.arg for p in a.posonlyargs + a.args]
    kw_ok = {p.arg for p in a.args + a.kwonlyargs} | ({"*"} if a.kwarg else set())
    args = list(in_names)
    if len(pos) < len(in_names) and not a.vararg:
        report.unmapped.append(f"{gym.impl.name}: entry {name}() takes {len(pos)} positional parameter(s), the "
                               f"golden {len(in_names)} input(s)")
    for k in attrs:
        if k in kw_ok or "*" in kw_ok:
            args.append(f"{k}={k}")
        else:
            report.unmapped.append(f"{gym.impl.name}: entry {name}() has no parameter {k!r}; the attribute is not "
                                   "passed to the kernel (the golden still gets it)")
    params = [*in_names, *(f"{k}={v['value']!r}" for k, v in attrs.items())]
    wrapper = (
        f"\n\n# --- PTO Forge wrapper (written by `python -m orchestrator import`): the entry the verifier calls;\n"
        f"# inputs come positionally (torch CPU tensors, since this file imports torch), attributes as keywords.\n"
        f"def {gym.op}_wrapper({', '.join(params)}):\n"
        f"    return {name}({', '.join(args)})\n"
    )
    report.notes.append(f"{gym.op}_wrapper dispatches to the gym entry {name}()")
    return source.rstrip() + "\n" + wrapper


def _spec_text(gym: _Gym, spec: dict[str, Any]) -> str:
    src = gym.spec_path.name if gym.spec_path else "(no SPEC.md)"
    body = gym.prose.strip() or f"# {gym.op}\n"
    return (_yaml_spec(spec) + f"\n<!-- Imported from the gym ({src}) by `python -m orchestrator import`; the gym's "
            "prose follows unchanged. -->\n\n" + body + "\n")


def import_gym_op(source: str | Path, dest: str | Path, *, force: bool = False, timeout: float = 300.0,
                  command: str | None = None, cwd: str | None = None, flags: Sequence[str] = ()) -> ImportReport:
    """Import a gym operator folder (or its test file) into a new PTO Forge op dir.

    Two layouts: the real pypto-gym's (a folder with ``src/``: the operator's test is run once, observed, see
    ``_real``; ``command``/``cwd`` say what to run, as a gym user types it after ``python``, e.g.
    ``test_rms_norm.py case_002``; ``flags`` are runner switches such as ``--npuarch DAV_3510``) and the flat one of the issue #16 corpus (SPEC.md, ``<op>_golden.py`` with
    ``_make_inputs``, ``<op>_impl.py`` in one folder).

    Raises:
        GymImportError: the source is not a gym operator, its test or golden fails, or ``dest`` holds files that
            would be overwritten (without ``force``). Nothing is written in that case.
    """
    src = Path(source).resolve()
    if not src.exists():
        raise GymImportError(f"{source} does not exist (give a gym op folder or its test_<op>.py)")
    try:
        real = locate(src, command, cwd)
    except GymLayoutError as exc:
        raise GymImportError(str(exc)) from None
    if real is not None:
        return _import_real(real, Path(dest), force=force, timeout=timeout, flags=tuple(flags))
    gym = _locate(src)
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise GymImportError(f"{dest} is a file; give the operator directory to create")
    if dest.resolve() == gym.folder:
        raise GymImportError(f"{dest} is the gym folder itself; give a new operator directory")
    report = ImportReport(op_name=gym.op)
    targets = {"SPEC.md": dest / "SPEC.md", "golden.py": dest / "golden.py", "IMPORT.md": dest / "IMPORT.md"}
    if gym.impl is not None:
        targets[f"{gym.op}_impl.py"] = dest / f"{gym.op}_impl.py"
    existing = [k for k, p in targets.items() if p.exists()]
    if existing and not force:
        raise GymImportError(f"{dest} already holds {', '.join(existing)}; import never overwrites (use --force "
                             "to replace them)")
    if gym.spec_path is None:
        report.unmapped.append(f"{gym.folder}: no SPEC.md; dtypes and tolerance come from _make_inputs / defaults")
    for key in ("schema_version",):
        gym.spec.pop(key, None)
    probe = _probe(gym, timeout)
    spec, in_names, attrs = _build_spec(gym, probe, report)
    files = {"SPEC.md": _spec_text(gym, spec), "golden.py": _golden_source(gym, in_names, attrs, spec)}
    if gym.impl is None:
        report.unmapped.append(f"{gym.folder}: no <op>_impl.py; the op dir starts without a kernel")
    else:
        impl = _impl_source(gym, in_names, attrs, report)
        if impl is not None:
            files[f"{gym.op}_impl.py"] = impl
    if gym.test is not None:
        report.notes.append(f"{gym.test.name} was read for the entry function only; PTO Forge verifies with its own "
                            "cases (SPEC.md) and runs the test's checks through the golden")
    for extra in sorted(gym.folder.glob("test_cases.json")):
        report.unmapped.append(f"{extra.name}: per-case settings are not imported (the cases come from _make_inputs)")
    files["IMPORT.md"] = _import_md(gym, report)
    _write_op_dir(dest, files, report)
    if existing:
        report.notes.append(f"replaced (--force): {', '.join(existing)}")
    return report


def _write_op_dir(dest: Path, files: dict[str, str], report: ImportReport) -> None:
    """Write the imported files, recording each in the report; a filesystem error is one GymImportError line."""
    try:
        dest.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (dest / name).write_text(text, encoding="utf-8")
            report.written.append(name)
    except OSError as exc:
        raise GymImportError(f"{dest}: cannot write the operator directory ({exc.strerror or exc})") from None


def _import_real(gym: GymOp, dest: Path, *, force: bool, timeout: float, flags: tuple[str, ...]) -> ImportReport:
    if dest.exists() and not dest.is_dir():
        raise GymImportError(f"{dest} is a file; give the operator directory to create")
    if dest.resolve() == gym.root or gym.root in dest.resolve().parents:
        raise GymImportError(f"{dest} is inside the gym operator folder; give a new operator directory")
    names = ["SPEC.md", "golden.py", f"{gym.name}_impl.py", "IMPORT.md"]
    existing = [n for n in names if (dest / n).exists()]
    if existing and not force:
        raise GymImportError(f"{dest} already holds {', '.join(existing)}; import never overwrites (use --force "
                             "to replace them)")
    try:
        mapping, files, extra, run = import_real(gym, timeout, flags)
    except RealGymError as exc:
        raise GymImportError(str(exc), test_rc=exc.test_rc, test_output=exc.test_output) from None
    report = ImportReport(op_name=gym.name, unmapped=list(dict.fromkeys([*mapping.unmapped, *extra])),
                          notes=list(mapping.notes), test_rc=run[0], test_output=run[1])
    report.notes.insert(0, f"ran the gym test as its user does: {gym.describe()} (on the emulator, observed)")
    report.notes.append(f"{gym.name}_wrapper calls the gym entry {mapping.entry_fn}(); golden() calls "
                        f"{mapping.golden_fn}() from {mapping.golden_file.name}")
    report.notes.append("SPEC.md declares the kernels tuned (`imported: {tuned: true}`: lint allows their "
                        "performance-stage constructs) and `pypto_target: head` (the gym is written for HEAD)")
    prose = (f"# {gym.name}\n\nImported from the pypto-gym operator `{gym.root.name}` (entry `{mapping.entry_fn}`, "
             f"golden `{mapping.golden_fn}`); the kernel and golden are the gym's, unchanged.\n")
    files = {"SPEC.md": _yaml_spec(mapping.spec) + "\n" + prose, **files}
    if existing:
        report.notes.append(f"replaced (--force): {', '.join(existing)}")
    files["IMPORT.md"] = _import_md_real(gym, report)
    _write_op_dir(dest, files, report)
    return report


def _import_md_real(gym: GymOp, report: ImportReport) -> str:
    lines = [f"# Imported from the gym: {gym.name}", "", f"Source folder: `{gym.root.name}`; run: "
             f"`{gym.describe()}`.", "", "## Not mapped", ""]
    lines += [f"- {u}" for u in report.unmapped] or ["- nothing"]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(lines) + "\n"


def _import_md(gym: _Gym, report: ImportReport) -> str:
    lines = [f"# Imported from the gym: {gym.op}", "", f"Source folder: `{gym.folder.name}`.", "",
             "## Not mapped", ""]
    lines += [f"- {u}" for u in report.unmapped] or ["- nothing"]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in report.notes]
    return "\n".join(lines) + "\n"
