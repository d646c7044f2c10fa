"""module_interfaces.yaml: the one pydantic model of the design's module graph, and its validation.

Why one definition at the bottom of ``runtime``: the design check (orchestrator), lint PF06, the verifier
(what a stage file must compute) and cleanup (which boundary outputs are final) all read this file; three
hand-written readers had drifted apart. Validation gives every problem at once with the YAML path it
concerns (lint turns the path into a line number); a file without problems loads into `ModuleInterfaces`.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from runtime import pyast
from runtime.dtypes import DTypeError, canonical_name
from runtime.yamlio import load_yaml

__all__ = ["FILE_NAME", "FinalOutput", "InterfacesError", "ModuleInput", "ModuleInterface", "ModuleInterfaces",
           "TensorDecl", "find_interfaces", "load_interfaces", "parse_interfaces", "validate_interfaces"]

FILE_NAME = "module_interfaces.yaml"
_MODULE_SRC = re.compile(r"^module_(\d+)$")


class InterfacesError(ValueError):
    """module_interfaces.yaml cannot be used; the message lists every problem (one per line)."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")  # descriptions and notes are free-form


class TensorDecl(_Model):
    """A named tensor: a primary input or a module output (dims are ints or symbolic expressions)."""

    name: str
    shape: list[int | str] = Field(default_factory=list)
    dtype: str | None = None


class ModuleInput(_Model):
    name: str
    source: str
    """``primary`` or ``module_<j>`` with j before this module."""


class ModuleInterface(_Model):
    id: int
    name: str = ""
    inputs: list[ModuleInput] = Field(default_factory=list)
    outputs: list[TensorDecl]


class FinalOutput(_Model):
    name: str
    source: str

    @property
    def module(self) -> int | None:
        m = _MODULE_SRC.match(self.source)
        return int(m.group(1)) if m else None


class ModuleInterfaces(_Model):
    """The whole file, valid (``parse_interfaces`` builds it only when `validate_interfaces` finds nothing)."""

    schema_version: int | str
    op: str
    primary_inputs: list[TensorDecl]
    modules: list[ModuleInterface]
    final_outputs: list[FinalOutput]

    @property
    def primary_names(self) -> list[str]:
        return [p.name for p in self.primary_inputs]

    def boundary_outputs(self, upto: int) -> list[str]:
        """Output names of modules 1..upto in module order, then output order (what stage file M<upto> returns)."""
        return [o.name for m in self.modules[:upto] for o in m.outputs]

    def final_output_indices(self) -> list[int] | None:
        """Positions of the final outputs among all boundary outputs (None when one is not found)."""
        flat = [(m.id, o.name) for m in self.modules for o in m.outputs]
        picks = []
        for fo in self.final_outputs:
            key = (fo.module if fo.module is not None else -1, fo.name)
            if key not in flat:
                return None
            picks.append(flat.index(key))
        return picks or None


def parse_interfaces(text: str, spec: dict[str, Any] | None = None) -> tuple[ModuleInterfaces | None, list[str]]:
    """(the model, []) for a valid file; (None, ["path: problem", ...]) otherwise. Never raises."""
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        return None, [f"{FILE_NAME} is not valid YAML: {str(exc).splitlines()[0]}"]
    problems = [f"{FILE_NAME}{_where(path)}: {msg}" for path, msg in validate_interfaces(data, spec)]
    if problems:
        return None, problems
    try:
        return ModuleInterfaces.model_validate(data), []
    except ValidationError as exc:  # a type the checks above do not look at (e.g. a list as schema_version)
        return None, [f"{FILE_NAME} {'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]


def load_interfaces(path: Path, spec: dict[str, Any] | None = None) -> ModuleInterfaces:
    """Read and validate the file. Raises InterfacesError naming every problem."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InterfacesError(f"{path.name}: cannot be read ({exc})") from None
    model, problems = parse_interfaces(text, spec)
    if model is None:
        raise InterfacesError("\n".join(problems))
    return model


def find_interfaces(op_dir: Path) -> Path | None:
    """The op dir's module_interfaces.yaml (also accepted under ``eval/``), or None."""
    for rel in (FILE_NAME, f"eval/{FILE_NAME}"):
        if (op_dir / rel).is_file():
            return op_dir / rel
    return None


def _where(path: tuple) -> str:
    return "" if not path else " " + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def _shape_dim_ok(dim: Any) -> bool:
    if isinstance(dim, int) and not isinstance(dim, bool):
        return True
    if not isinstance(dim, str):
        return False
    try:
        tree = pyast.parse(dim, mode="eval")
    except SyntaxError:
        return False
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Name, ast.Load, ast.Add, ast.Sub, ast.Mult,
               ast.FloorDiv, ast.UAdd, ast.USub)
    return all(isinstance(n, allowed) or (isinstance(n, ast.Constant) and isinstance(n.value, int))
               for n in ast.walk(tree))


def _dtype_ok(dt: Any) -> bool:
    if dt == "T":
        return True
    try:
        canonical_name(str(dt))
    except DTypeError:
        return False
    return True


def validate_interfaces(data: Any, spec: dict[str, Any] | None = None) -> list[tuple[tuple, str]]:
    """Schema + upstream validate_yaml rules 1-6 (+ ids contiguous, SPEC agreement). (path, message) list."""
    if not isinstance(data, dict):
        return [((), "module_interfaces.yaml is not a YAML mapping")]
    errs: list[tuple[tuple, str]] = []
    for key in ("schema_version", "op", "primary_inputs", "modules", "final_outputs"):
        if key not in data:
            errs.append(((), f"missing top-level key `{key}`"))
    prim = data.get("primary_inputs")
    prim_names: list[str] = []
    if not isinstance(prim, list) or not prim:
        errs.append((("primary_inputs",), "`primary_inputs` must be a non-empty list"))
    else:
        for i, p in enumerate(prim):
            if not isinstance(p, dict) or not isinstance(p.get("name"), str):
                errs.append((("primary_inputs", i), "primary input needs a `name`"))
                continue
            prim_names.append(p["name"])
            if "dtype" in p and not _dtype_ok(p["dtype"]):
                errs.append((("primary_inputs", i), f"unknown dtype {p['dtype']!r}"))
        if len(set(prim_names)) != len(prim_names):
            errs.append((("primary_inputs",), "duplicate primary input names"))
    if spec and isinstance(spec.get("inputs"), list):
        spec_names = [s.get("name") for s in spec["inputs"] if isinstance(s, dict)]
        if prim_names and spec_names and prim_names != spec_names:
            errs.append((("primary_inputs",), f"primary inputs {prim_names} != SPEC.md inputs {spec_names}"))
    if spec and spec.get("op_name") and data.get("op") and data["op"] != spec["op_name"]:
        errs.append((("op",), f"op {data['op']!r} != SPEC.md op_name {spec['op_name']!r}"))
    mods = data.get("modules")
    produced: dict[int, set[str]] = {}
    if not isinstance(mods, list) or not mods:
        errs.append((("modules",), "`modules` must be a non-empty list"))
        mods = []
    for i, mod in enumerate(mods):
        path = ("modules", i)
        if not isinstance(mod, dict):
            errs.append((path, "module entry must be a mapping"))
            continue
        mid = mod.get("id")
        if mid != i + 1:
            errs.append(((*path, "id"), f"module ids must be 1, 2, 3 ... in order; got {mid!r} at position {i + 1}"))
        mid = mid if isinstance(mid, int) else i + 1
        outs = mod.get("outputs")
        if not isinstance(outs, list) or not outs:
            errs.append((path, f"module {mid} needs a non-empty `outputs` list"))
            outs = []
        names: set[str] = set()
        for j, o in enumerate(outs):
            opath = (*path, "outputs", j)
            if not isinstance(o, dict) or not isinstance(o.get("name"), str):
                errs.append((opath, "output needs a `name`"))
                continue
            if o["name"] in names:
                errs.append((opath, f"duplicate output `{o['name']}` in module {mid}"))
            names.add(o["name"])
            shape = o.get("shape")
            if not isinstance(shape, list) or not all(_shape_dim_ok(d) for d in shape):
                errs.append((opath, f"output `{o['name']}` shape {shape!r}: dims must be ints, names or "
                                    "`+ - * //` expressions"))
            if not _dtype_ok(o.get("dtype")):
                errs.append((opath, f"output `{o['name']}` dtype {o.get('dtype')!r} is not a known dtype"))
        inputs = mod.get("inputs")
        if not isinstance(inputs, list):
            errs.append((path, f"module {mid} needs an `inputs` list"))
            inputs = []
        for j, inp in enumerate(inputs):
            ipath = (*path, "inputs", j)
            if not isinstance(inp, dict):
                errs.append((ipath, "input entry must be a mapping with name and source"))
                continue
            name, src = inp.get("name"), str(inp.get("source", ""))
            if src == "primary":
                if name not in prim_names:
                    errs.append((ipath, f"input `{name}` has source primary but is not a primary input"))
                continue
            m = _MODULE_SRC.match(src)
            if m is None:
                errs.append((ipath, f"input `{name}` source {src!r} must be `primary` or `module_<j>`"))
            elif int(m.group(1)) >= mid:
                errs.append((ipath, f"input `{name}` comes from module {m.group(1)}, not an earlier module"))
            elif name not in produced.get(int(m.group(1)), set()):
                errs.append((ipath, f"input `{name}` is not an output of module {m.group(1)}"))
        produced[mid] = names
    finals = data.get("final_outputs")
    if not isinstance(finals, list) or not finals:
        errs.append((("final_outputs",), "`final_outputs` must be a non-empty list"))
        finals = []
    for j, f in enumerate(finals):
        fpath = ("final_outputs", j)
        if not isinstance(f, dict):
            errs.append((fpath, "final output must be a mapping with name and source"))
            continue
        m = _MODULE_SRC.match(str(f.get("source", "")))
        if m is None or int(m.group(1)) not in produced:
            errs.append((fpath, f"final output `{f.get('name')}` source {f.get('source')!r} is not a module"))
        elif f.get("name") not in produced[int(m.group(1))]:
            errs.append((fpath, f"final output `{f.get('name')}` is not produced by module {m.group(1)}"))
    return errs
