"""From what a gym test did (``_observe``) to a PTO Forge op dir: SPEC.md, golden.py, ``<op>_impl.py``, IMPORT.md.

A gym test hands the same tensors to the operator's host entry (a function of a module under ``src/``) and to
its golden (``<op>_golden.py`` or a function of the test named ``*golden*`` / ``*reference*``), then compares.
Each (entry call, golden call) pair sharing tensors is one case:

* inputs: the golden's tensor arguments (named by its parameters), which the entry also received;
* attributes: the golden's scalar arguments (typed; a value that differs between cases keeps the first);
* the wrapper calls the entry as the test did: the inputs where the test passed them, attributes or literals
  for scalars, config objects as their ``repr`` (when that evaluates back to the object in the impl module),
  output buffers the test allocated as ``torch.zeros`` of shapes written from the inputs' dims; an entry that
  returns a ``@jit`` kernel (``sum_lstm("npu")``) is called the same way, then its kernel;
* outputs: the golden's results, matched to what the entry returned or wrote (same shape, in order);
* tolerance: the rtol/atol of the comparisons the test made (the loosest), else test_cases.json, else 1e-3;
* dims: an axis whose size differs between cases is a named dynamic dim, one that does not a fixed size;
  value ranges from the observed inputs (normal-shaped samples keep a normal distribution).
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestrator.adapters.gym._inline import (
    closure,
    inline_package_imports,
    package_module,
    statement_source,
)
from runtime import pyast
from runtime.dtypes import TORCH_BY_BYTES

__all__ = ["Mapping", "MappingError", "map_observation"]

_TORCH_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "float64": "fp64", "int8": "int8",
                 "int16": "int16", "int32": "int32", "int64": "int64", "uint8": "uint8", "bool": "bool",
                 "float8_e4m3fn": "fp8e4m3", "float8_e5m2": "fp8e5m2"}
_CONVERSIONS = {"to", "float", "half", "bfloat16", "double", "int", "contiguous", "clone", "type", "detach", "cpu"}
TO_TORCH = (
    "def _pto_forge_torch(a):\n"
    "    import numpy\n"
    "    import torch\n"
    f"    if a.dtype.name in {tuple(TORCH_BY_BYTES)!r}:  # no numpy dtype in torch: the bytes\n"
    "        bits = numpy.int16 if a.dtype.itemsize == 2 else numpy.uint8\n"
    "        return torch.from_numpy(numpy.ascontiguousarray(a).view(bits).copy()).view(getattr(torch, a.dtype.name))\n"
    "    return torch.from_numpy(numpy.ascontiguousarray(a).copy())\n\n\n")
"""golden.py's conversion of the numpy arrays PTO Forge hands ``golden()`` into the torch tensors a gym golden takes
(ml_dtypes' bfloat16 and FP8 arrays by their bytes: ``torch.from_numpy`` refuses them)"""
_GOLDEN_NAME = re.compile(r"golden|reference|(^|_)ref(_|$)", re.I)
_GOLDEN_IMPORTS = {"torch", "numpy", "math", "typing", "dataclasses", "functools", "collections", "itertools",
                   "__future__"}


class MappingError(ValueError):
    """The observation cannot become an op dir (one line)."""


@dataclass
class _Pair:
    entry: dict[str, Any]
    golden: dict[str, Any]
    kernel: dict[str, Any] | None = None  # the kernel call when the entry is a factory
    rtol: float | None = None
    atol: float | None = None


@dataclass
class Mapping:
    """Everything the files are written from."""

    op: str
    entry_fn: str
    entry_file: Path
    golden_fn: str
    golden_file: Path
    golden_in_test: bool
    inputs: list[str]
    outputs: list[str]
    spec: dict[str, Any]
    wrapper: str
    adapter: str
    notes: list[str] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)


# ------------------------------------------------------------------------------------------------ pairing


def _tokens(d: dict[str, Any]) -> set[tuple]:
    """What identifies a tensor the test handed around: the object, its storage, or (a copy) its bytes."""
    sig = (tuple(d["shape"]), d["dtype"])
    out: set[tuple] = {("id", d["id"])}
    if "ptr" in d:
        out.add(("ptr", d["ptr"], *sig))
    if d.get("crc") and len(d["shape"]) and math.prod(d["shape"]) > 1:
        out.add(("crc", d["crc"], *sig))
    return out


def _tensor_ids(descs: Iterable[dict[str, Any]]) -> set[tuple]:
    out: set[tuple] = set()
    for d in descs:
        if d.get("t") == "tensor":
            out |= _tokens(d)
        elif d.get("t") == "seq":
            out |= _tensor_ids(d["items"])
        elif d.get("t") == "struct":
            out |= _tensor_ids(d["fields"].values())
    return out


def _args(ev: dict[str, Any]) -> list[dict[str, Any]]:
    return [*ev.get("args", []), *ev.get("kwargs", {}).values()]


def _is_golden(ev: dict[str, Any], by_seq: dict[int, dict[str, Any]]) -> bool:
    named = ev["kind"] == "golden" or bool(_GOLDEN_NAME.search(ev["fn"]))
    if not named or ev["kind"] == "impl":
        return False
    return not any(by_seq.get(p, {}).get("kind") == "golden" or _GOLDEN_NAME.search(by_seq.get(p, {}).get("fn", ""))
                   for p in ev.get("parents", []))


def _pairs(stream: dict[str, Any]) -> list[_Pair]:
    events = stream.get("events", [])
    by_seq = {e["seq"]: e for e in events}
    kernels = stream.get("kernels", [])
    entries = [e for e in events if e["kind"] == "impl" and "result" in e]
    goldens = [e for e in events if _is_golden(e, by_seq) and "result" in e]
    pairs = []
    used: set[int] = set()
    for entry in entries:
        kernel = None
        ids = _tensor_ids(_args(entry))
        if entry.get("result", {}).get("t") == "kernel":  # a factory: the kernel call carries the tensors
            kid = entry["result"]["id"]
            kernel = next((k for k in kernels if k["id"] == kid), None)
            if kernel is not None:
                ids = _tensor_ids([*kernel["args"], *kernel["kwargs"].values()])
        golden = min((g for g in goldens if g["seq"] not in used and ids & _tensor_ids(_args(g))),
                     key=lambda g: abs(g["seq"] - entry["seq"]), default=None)
        if golden is None:
            continue
        used.add(golden["seq"])
        pair = _Pair(entry, golden, kernel)
        after = max(entry["seq"], golden["seq"])
        limit = min((e["seq"] for e in entries if e["seq"] > after), default=1 << 60)
        cmps = [c for c in stream.get("comparisons", []) if after <= c["seq"] < limit
                and isinstance(c.get("rtol"), float) and isinstance(c.get("atol"), float)
                and not (math.isnan(c["rtol"]) or math.isnan(c["atol"]))]
        if cmps:
            pair.rtol, pair.atol = max(c["rtol"] for c in cmps), max(c["atol"] for c in cmps)
        pairs.append(pair)
    return pairs


# ------------------------------------------------------------------------------------------------ mapping


def _dtype(name: str) -> str:
    return _TORCH_DTYPES.get(name, name)


def _leaves(desc: dict[str, Any]) -> list[dict[str, Any]]:
    if desc.get("t") == "tensor":
        return [desc]
    if desc.get("t") == "seq":
        return [x for item in desc["items"] for x in _leaves(item)]
    return []


def _bound(ev: dict[str, Any], expand: bool = False) -> list[tuple[str, dict[str, Any], str]]:
    """(parameter name, description, how it was passed: "pos:<i>" or "kw:<name>") of a call; ``expand``: a
    bundle argument (``AttentionGradInputs(q, k, ...)``) stands for its fields ("field:<i>:<name>")."""
    params = ev.get("params") or []
    out = []
    for i, d in enumerate(ev.get("args", [])):
        if expand and d.get("t") == "struct" and _rebuildable(d):
            out += [(k, f, f"field:{i}:{k}") for k, f in d["fields"].items() if k in d["init"]]
            continue
        out.append((params[i] if i < len(params) else f"arg{i}", d, f"pos:{i}"))
    for k, d in ev.get("kwargs", {}).items():
        out.append((k, d, f"kw:{k}"))
    return out


def _rebuildable(d: dict[str, Any]) -> bool:
    """A bundle the adapter can rebuild: its __init__ takes exactly fields of the same names."""
    return bool(d["init"]) and all(k in d["fields"] for k in d["init"])


def _range(descs: list[dict[str, Any]]) -> tuple[list[float], str] | None:
    lo = min((d["min"] for d in descs if "min" in d), default=None)
    hi = max((d["max"] for d in descs if "max" in d), default=None)
    if lo is None or hi is None:
        return None
    if any(d.get("integer") for d in descs):
        lo_i, hi_i = math.floor(lo), math.ceil(hi)
        return [float(lo_i), float(hi_i if hi_i > lo_i else lo_i + 1)], "uniform"
    stds = [d.get("std", 0.0) for d in descs]
    normal = bool(stds) and hi > lo and (hi - lo) > 5 * max(stds) and abs(lo + hi) < 0.5 * (hi - lo)

    def out(x: float, up: bool) -> float:
        if x == 0 or not math.isfinite(x):
            return 0.0
        e = 10.0 ** (math.floor(math.log10(abs(x))) - 1)
        return (math.ceil(x / e) if up else math.floor(x / e)) * e

    a, b = out(lo, False), out(hi, True)
    if b <= a:
        b = a + max(abs(a) * 1e-2, 1e-3)
    return [round(a, 6), round(b, 6)], "normal" if normal else "uniform"


def _dims(labels: list[str], shapes: list[list[list[int]]]) -> tuple[list[list[Any]], list[str], list[dict[str, int]]]:
    """Named dims: shapes[t][c] is tensor t's shape in case c. Equal size vectors share one name."""
    names: dict[tuple[int, ...], str] = {}
    out: list[list[Any]] = []
    for label, per_case in zip(labels, shapes, strict=True):
        ranks = {len(s) for s in per_case}
        if len(ranks) != 1:
            raise MappingError(f"tensor {label!r} changes rank between the cases; one rank per op dir")
        shape: list[Any] = []
        for ax in range(ranks.pop()):
            vec = tuple(s[ax] for s in per_case)
            if len(set(vec)) == 1:
                shape.append(vec[0])
                continue
            if vec not in names:
                names[vec] = re.sub(r"\W", "", label.upper()) + str(ax)
            shape.append(names[vec])
        out.append(shape)
    n_cases = len(shapes[0]) if shapes else 0
    p0 = [{name: vec[c] for vec, name in names.items()} for c in range(n_cases)]
    unique = [dict(t) for t in dict.fromkeys(tuple(sorted(p.items())) for p in p0)] if names else []
    return out, list(names.values()), unique


def _with_attrs(expr: str, attrs: dict[str, Any]) -> str:
    """An object's repr (``LstmConfig(alpha=0.1, eps_cell=1e-06)``) with each keyword that is an attribute of the op
    (same name, same value) taken from the wrapper's parameter of that name. Before, the wrapper took ``alpha`` and
    passed the recorded 0.1: a call with another alpha computed with 0.1, and verification - once it varied the
    attributes (s36) - failed the gym's own sum_lstm."""
    try:
        node = pyast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError):
        return expr
    if not isinstance(node, ast.Call):
        return expr
    changed = False
    for kw in node.keywords:
        if kw.arg in attrs and isinstance(kw.value, ast.Constant) and type(kw.value.value) is type(attrs[kw.arg]) \
                and kw.value.value == attrs[kw.arg]:
            kw.value = ast.Name(id=kw.arg, ctx=ast.Load())
            changed = True
    return ast.unparse(node) if changed else expr


def _literal(desc: dict[str, Any]) -> str | None:
    if desc.get("t") == "scalar":
        return repr(desc["v"])
    if desc.get("t") == "object" and desc.get("evaluable"):
        return desc["repr"]
    return None


def spec_document(op: str, inputs: list, outputs: list, dynamic: Any, p0: Any, supported: list[str],
                  tolerance: dict, attrs: dict[str, Any]) -> dict[str, Any]:
    """The SPEC.md front matter an import writes (key order as in the spec), for both gym import paths."""
    spec: dict[str, Any] = {"schema_version": 1, "op_name": op, "inputs": inputs, "outputs": outputs}
    if dynamic:
        spec["dynamic_axes"] = dynamic
    if p0:
        spec["p0_shapes"] = p0
    spec["supported_dtypes"] = supported
    spec["tolerance"] = tolerance
    spec["seeds"] = [0, 1, 2]
    if attrs:
        spec["attributes"] = {k: {"type": type(v).__name__, "value": v} for k, v in attrs.items()}
    return spec


def map_observation(op: str, streams: list[dict[str, Any]], test_cases: dict[str, Any] | None) -> Mapping:
    """The op dir contents for the pairs observed in ``streams`` (one per process)."""
    pairs = [p for s in streams for p in _pairs(s)]
    if not pairs:
        entries = {e["fn"] for s in streams for e in s.get("events", []) if e["kind"] == "impl"}
        kernels = {k["name"] for s in streams for k in s.get("kernels", [])}
        ran = f"it called {', '.join(sorted(entries | kernels))}" if entries | kernels else "it ran no kernel"
        raise MappingError(f"no golden function: the gym test computes its reference inline (no function named "
                           f"*golden*/*reference* got the tensors the operator got; {ran}); write golden.py by hand")
    first = pairs[0]
    entry_fn, golden_fn = first.entry["fn"], first.golden["fn"]
    pairs = [p for p in pairs if p.entry["fn"] == entry_fn and p.golden["fn"] == golden_fn]
    notes: list[str] = []
    unmapped: list[str] = []
    # inputs and attributes, from the golden's call
    g_bound = _bound(first.golden, expand=True)
    inputs = [(name, how) for name, d, how in g_bound if d.get("t") == "tensor"]
    attrs: dict[str, Any] = {}
    for name, d, _how in g_bound:
        if d.get("t") == "scalar" and d["v"] is not None and not isinstance(d["v"], list):
            attrs[name] = d["v"]
    for p in pairs[1:]:
        for name, d, _how in _bound(p.golden, expand=True):
            if name in attrs and d.get("t") == "scalar" and d["v"] != attrs[name]:
                unmapped.append(f"attribute {name!r} differs between the gym's cases ({attrs[name]!r}, {d['v']!r}); "
                                "the op dir uses the first (one value per op dir)")
                break
    other = [(name, d) for name, d, _ in g_bound if d.get("t") not in ("tensor", "scalar")]
    for name, d in other:
        unmapped.append(f"golden argument {name!r} is a {d.get('type', d.get('t'))}; not an input or an attribute")
    if not inputs:
        raise MappingError(f"the golden {golden_fn}() took no tensor")
    in_names = [n for n, _ in inputs]
    # the entry call, argument by argument
    target = first.kernel if first.kernel is not None else first.entry
    token_to_input = {tok: n for n, d, _ in g_bound if d.get("t") == "tensor" for tok in _tokens(d)}

    def input_of(d: dict[str, Any]) -> str | None:
        order = {"id": 0, "ptr": 1, "crc": 2}  # the object, then its storage, then equal bytes
        return next((token_to_input[t] for t in sorted(_tokens(d), key=lambda t: order[t[0]])
                     if t in token_to_input), None)

    call_args: list[str] = []
    call_kwargs: list[str] = []
    allocs: list[tuple[str, dict[str, Any]]] = []
    arg_exprs: dict[str, str] = {}

    def expr_for(name: str, d: dict[str, Any], key: str) -> str:
        if d.get("t") == "tensor":
            if input_of(d) is not None:
                return str(input_of(d))
            var = f"_buf_{len(allocs)}"
            allocs.append((var, d))
            arg_exprs[key] = var
            return var
        if d.get("t") == "scalar":
            for a, v in attrs.items():
                if a == name and v == d["v"]:
                    return a
            for a, v in attrs.items():
                if v == d["v"] and not isinstance(v, bool) and type(v) is type(d["v"]):
                    return a
        if d.get("t") == "struct" and d.get("local") and _rebuildable(d):
            # a bundle of inputs (``QuantBatchMatmulInputs(x1=..., x2=...)``) whose class the impl module defines
            # or imports: rebuilt from the wrapper's inputs, as the test built it
            parts = []
            for k in d["init"]:
                f = d["fields"][k]
                e = input_of(f) if f.get("t") == "tensor" else _literal(f)
                if e is None:
                    raise MappingError(f"field {k!r} of the entry's argument {name!r} ({d['type']}) is neither an "
                                       "input of the golden nor a literal; write the wrapper by hand")
                parts.append(f"{k}={e}")
            return f"{d['type']}({', '.join(parts)})"
        lit = _literal(d)
        if lit is None:
            raise MappingError(f"the entry's argument {name!r} is a {d.get('type', d.get('t'))} whose repr does not "
                               "evaluate back in the impl module; write the wrapper by hand")
        return _with_attrs(lit, attrs)

    t_bound = _bound(target) if first.kernel is None else [
        (f"arg{i}", d, f"pos:{i}") for i, d in enumerate(target["args"])] + [
        (k, d, f"kw:{k}") for k, d in target["kwargs"].items()]
    for name, d, how in t_bound:
        e = expr_for(name, d, how)
        (call_args if how.startswith("pos") else call_kwargs).append(e if how.startswith("pos") else f"{name}={e}")
    factory = ""
    if first.kernel is not None:
        fargs = [_literal(d) for _n, d, _h in _bound(first.entry)]
        if any(a is None for a in fargs):
            raise MappingError(f"{entry_fn}() returns a kernel but takes arguments that are not literals")
        kw = [f"{k}={_literal(d)}" for k, d in first.entry.get("kwargs", {}).items()]
        pos = [_literal(d) for d in first.entry.get("args", [])]
        factory = f"{entry_fn}({', '.join([*(p or '' for p in pos), *kw])})"
        notes.append(f"{entry_fn}() returns a @jit kernel; the wrapper calls it, then the kernel, as the test did")
    # outputs: the golden's results, matched to what the entry returned or wrote
    g_out = _leaves(first.golden.get("result", {}))
    if not g_out:
        raise MappingError(f"the golden {golden_fn}() returned no tensor")
    result = first.entry.get("result", {}) if first.kernel is None else {}
    candidates: list[tuple[str, dict[str, Any]]] = []
    if result.get("t") == "tensor":
        candidates.append(("_r", result))
    elif result.get("t") == "seq":
        candidates += [(f"_r[{i}]", it) for i, it in enumerate(result["items"]) if it.get("t") == "tensor"]
    mutated_src = target if first.kernel is None else None
    written = set((mutated_src or {}).get("mutated", [])) if mutated_src is not None else set()
    for name, d, how in t_bound:
        if d.get("t") != "tensor":
            continue
        var = arg_exprs.get(how) or input_of(d)
        if first.kernel is not None and how in arg_exprs:
            candidates.append((arg_exprs[how], d))  # kernels write into their buffers
        elif how.startswith("pos") and int(how[4:]) in written or how.startswith("kw:") and name in target.get(
                "mutated_kw", []):
            if var is not None:
                candidates.append((var, d))
    outs: list[tuple[str, dict[str, Any]]] = []
    taken: set[str] = set()
    for g in g_out:  # same shape and dtype first (llada2: ids int32 and weights fp32 share a shape), then shape
        free = [c for c in candidates if c[0] not in taken and c[1]["shape"] == g["shape"]]
        match = next((c for c in free if c[1]["dtype"] == g["dtype"]), free[0] if free else None)
        if match is None:
            raise MappingError(f"no result of {entry_fn}() has the shape {g['shape']} of the golden's output")
        taken.add(match[0])
        outs.append(match)
    out_names = _output_names(first.golden, len(outs), in_names)
    # shapes over the cases -> named dims
    in_shapes = [[next(d for n, d, _ in _bound(p.golden, expand=True) if n == name)["shape"] for p in pairs]
                 for name in in_names]
    out_shapes = [[_leaves(p.golden["result"])[j]["shape"] for p in pairs] for j in range(len(outs))]
    shapes, dynamic, p0 = _dims([*in_names, *out_names], [*in_shapes, *out_shapes])
    # dtypes: the case dtype is the first float input's
    def case_dtype(p: _Pair) -> str:
        for _n, d, _h in _bound(p.golden, expand=True):
            if d.get("t") == "tensor" and not d.get("integer"):
                return _dtype(d["dtype"])
        return "fp32"

    observed = list(dict.fromkeys(case_dtype(p) for p in pairs))
    spec_inputs = []
    for i, name in enumerate(in_names):
        descs = [next(d for n, d, _ in _bound(p.golden, expand=True) if n == name) for p in pairs]
        dts = {(_dtype(d["dtype"]), case_dtype(p)) for d, p in zip(descs, pairs, strict=True)}
        dt = "T" if all(a == b for a, b in dts) else sorted({a for a, _ in dts})[0]
        entry: dict[str, Any] = {"name": name, "shape": shapes[i], "dtype": dt}
        rng = _range(descs)
        if rng is not None:
            entry["range"] = rng[0]
            if rng[1] == "normal":
                entry["distribution"] = "normal"
        spec_inputs.append(entry)
    spec_outputs = []
    out_casts = []
    for j, (_var, d) in enumerate(outs):
        follows = all(_dtype(_leaves(p.golden["result"])[j]["dtype"]) == case_dtype(p) for p in pairs)
        dt = "T" if follows and _dtype(d["dtype"]) == case_dtype(first) else _dtype(d["dtype"])
        spec_outputs.append({"name": out_names[j], "shape": shapes[len(in_names) + j], "dtype": dt})
        out_casts.append(d["dtype"])
    # tolerance
    rt = [p.rtol for p in pairs if p.rtol is not None]
    at = [p.atol for p in pairs if p.atol is not None]
    if rt and at:
        rtol, atol = max(rt), max(at)
        notes.append(f"tolerance rtol={rtol:g}, atol={atol:g}: the loosest comparison the gym test made")
    else:
        rtol, atol = _json_tolerance(test_cases)
        notes.append(f"tolerance rtol={rtol:g}, atol={atol:g}: " + (
            "from test_cases.json" if test_cases else "no comparison observed; the default"))
    tolerance = {d: {"atol": float(atol), "rtol": float(rtol)} for d in observed}
    spec = spec_document(op, spec_inputs, spec_outputs, dynamic, p0, observed, tolerance, attrs)
    spec["pypto_target"] = "head"
    # wrapper and golden adapter
    alloc_lines = []
    for var, d in allocs:
        how = next(k for k, v in arg_exprs.items() if v == var)
        per_case = [_arg_at(p.kernel if p.kernel is not None else p.entry, how)["shape"] for p in pairs]
        dims = _shape_expr(per_case, list(zip(in_names, in_shapes, strict=True)))
        alloc_lines.append(f"    {var} = torch.zeros({dims}, dtype=torch.{d['dtype']})")
    params = [*in_names, *(f"{k}={v!r}" for k, v in attrs.items())]
    entry_ref = f"_gym_{entry_fn}" if entry_fn == f"{op}_wrapper" else entry_fn  # the gym already uses the name
    if factory and entry_ref != entry_fn:
        factory = entry_ref + factory[len(entry_fn):]
    call = f"{factory}({', '.join([*call_args, *call_kwargs])})" if factory else (
        f"{entry_ref}({', '.join([*call_args, *call_kwargs])})")
    ret = ", ".join(var for var, _ in outs) + ("," if len(outs) == 1 else "")
    wrapper = (
        "\n\n# --- PTO Forge wrapper (written by `python -m orchestrator import`): the entry the verifier calls, calling\n"
        f"# the gym's host entry {entry_fn}() the way the gym test did (inputs are torch tensors: this file imports torch).\n"
        + (f"{entry_ref} = {entry_fn}\n\n\n" if entry_ref != entry_fn else "")
        + f"def {op}_wrapper({', '.join(params)}):\n"
        + ("    import torch\n\n" if alloc_lines else "")
        + "".join(f"{ln}\n" for ln in alloc_lines)
        + f"    _r = {call}\n"
        + f"    return {ret if len(outs) > 1 else outs[0][0]}\n")
    g_call = []
    bundles: dict[int, list[str]] = {}
    for name, d, how in g_bound:
        value = f"_pto_forge_torch({name})" if d.get("t") == "tensor" else (name if name in attrs else _literal(d))
        if value is None:
            value = "None"
        if how.startswith("field:"):
            i = int(how.split(":")[1])
            if i not in bundles:
                bundles[i] = []
                g_call.append(f"@bundle{i}")
            bundles[i].append(f"{name}={value}")
        else:
            g_call.append(value if how.startswith("pos") else f"{name}={value}")
    for i, fields in bundles.items():  # rebuild the bundle the test built: its class from the golden module
        cls = first.golden["args"][i]["type"]
        g_call[g_call.index(f"@bundle{i}")] = f"{cls}({', '.join(fields)})"
    casts = [f"_pto_forge_cast(_g[{j}], {dt!r})" for j, dt in enumerate(out_casts)]
    adapter = (
        "\n\n# --- PTO Forge adapter (written by `python -m orchestrator import`): golden() hands the gym golden torch\n"
        "# tensors, calls it as the gym test did, and returns its results in the dtype the entry returns.\n"
        + TO_TORCH +
        "def _pto_forge_cast(t, dtype):\n"
        "    import torch\n"
        "    return t.detach().to(getattr(torch, dtype))\n\n\n"
        f"def golden({', '.join(params)}):\n"
        f"    _g = {golden_fn}({', '.join(g_call)})\n"
        "    _g = _g if isinstance(_g, (tuple, list)) else (_g,)\n"
        f"    return {casts[0] if len(casts) == 1 else '(' + ', '.join(casts) + ')'}\n")
    if any(_dtype(c) != _dtype(_leaves(first.golden["result"])[j]["dtype"]) for j, c in enumerate(out_casts)):
        notes.append("the golden's results are cast to the dtype the entry returns (the gym test compares after "
                     "casting both to float32)")
    return Mapping(op=op, entry_fn=entry_fn, entry_file=Path(first.entry["file"]), golden_fn=golden_fn,
                   golden_file=Path(first.golden["file"]), golden_in_test=first.golden["kind"] != "golden",
                   inputs=in_names, outputs=out_names, spec=spec, wrapper=wrapper, adapter=adapter, notes=notes,
                   unmapped=unmapped)


def _arg_at(ev: dict[str, Any], how: str) -> dict[str, Any]:
    return ev["args"][int(how[4:])] if how.startswith("pos:") else ev["kwargs"][how[3:]]


def _json_tolerance(test_cases: dict[str, Any] | None) -> tuple[float, float]:
    cases = (test_cases or {}).get("test_cases") or []
    rt = [c["rtol"] for c in cases if isinstance(c, dict) and isinstance(c.get("rtol"), int | float)]
    at = [c["atol"] for c in cases if isinstance(c, dict) and isinstance(c.get("atol"), int | float)]
    return (float(max(rt)) if rt else 1e-3), (float(max(at)) if at else 1e-3)


def _shape_expr(per_case: list[list[int]], inputs: list[tuple[str, list[list[int]]]]) -> str:
    """A buffer's shape written from an input's dim with the same size in every case, else the literal size."""
    parts = []
    for ax in range(len(per_case[0])):
        vec = [s[ax] for s in per_case]
        found = None
        for name, shapes in inputs:
            for iax in range(len(shapes[0])):
                if [s[iax] for s in shapes] == vec:
                    found = f"{name}.shape[{iax}]"
                    break
            if found:
                break
        if found is None and len(set(vec)) > 1:
            raise MappingError(f"an output buffer's axis {ax} varies between the cases like no input axis does")
        parts.append(found or str(vec[0]))
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _output_names(golden: dict[str, Any], count: int, inputs: list[str]) -> list[str]:
    """Names from the golden's ``return a, b``, else y / out0.."""
    names: list[str] = []
    try:
        tree = pyast.parse(Path(golden["file"]).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        tree = None
    fn = next((n for n in (tree.body if tree else []) if isinstance(n, ast.FunctionDef) and n.name == golden["fn"]),
              None)
    returns = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None] if fn else []
    if returns:
        value = returns[-1].value
        elts = value.elts if isinstance(value, ast.Tuple) else [value]
        for e in elts:  # `return y` or `return y.to(dtype)` / `y.float()` name the output; anything else does not
            while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _CONVERSIONS:
                e = e.func.value
            names.append(e.id if isinstance(e, ast.Name) and e.id.isidentifier() else "")
    if len(names) != count or not all(names) or len(set(names)) != count:
        names = ["y"] if count == 1 else [f"out{i}" for i in range(count)]
    return [f"{n}_out" if n in inputs else n for n in names]


def golden_source(path: Path, fn: str, in_test: bool, src: Path | None = None) -> tuple[str, list[str], list[str]]:
    """The golden's source for golden.py: the gym's golden module unchanged, or (a golden defined in the test)
    the function and the module-level helpers, constants and imports it uses, copied unchanged; with ``src`` (the
    gym operator's ``src/``), what it imports from the operator's own package copied in (`_inline`).
    Returns (source, lines on what golden.py lacks, notes on what was copied)."""
    text = path.read_text(encoding="utf-8")
    if not in_test:
        return inline_package_imports(text, path.name, src) if src is not None else (text, [], [])
    c = closure(pyast.parse(text), [fn])
    needed = c.definitions
    skipped: list[str] = []
    keep_imports = []
    for node in c.imports:
        mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if all(m.split(".")[0] in _GOLDEN_IMPORTS for m in mods) or (
                src is not None and isinstance(node, ast.ImportFrom) and package_module(node, src) is not None):
            keep_imports.append(node)  # a package import is replaced by a copy below
        else:
            skipped.append(f"{path.name}:{node.lineno}: the golden uses {', '.join(mods)}, which golden.py does not "
                           "import")
    lines = text.splitlines()
    body_src = "\n".join(statement_source(lines, n) for n in keep_imports) + "\n\n\n" + "\n\n\n".join(
        statement_source(lines, n) for n in needed)
    out = f"# from {path.name}: the gym test's own golden and what it uses, copied unchanged\n" + body_src + "\n"
    if src is None:
        return out, skipped, []
    out, refused, copied = inline_package_imports(out, path.name, src)
    return out, skipped + refused, copied
