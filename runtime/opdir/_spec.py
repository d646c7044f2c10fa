"""The SPEC.md front matter: a pydantic model plus a parser that reports errors by file and line.

SPEC.md starts with a YAML block between ``---`` lines. We parse it twice from the same text: once with
``yaml.compose`` to learn the line of every key and list item, once into plain data for pydantic. A
validation error is then mapped back to the line the user has to edit, and phrased in plain words.
Unknown top-level keys are op attributes (``eps: 1.0e-6``) and land in ``Spec.attrs``.
"""

from __future__ import annotations

import difflib
import keyword
import logging
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator

from runtime.dtypes import CANONICAL, DTypeError, canonical_name
from runtime.frontmatter import split_front_matter
from runtime.opdir._problems import OpDirError, Problem
from runtime.targets import NpuArch, Target, TargetError, parse_target
from runtime.yamlio import compose_yaml, load_yaml

__all__ = ["CASE_DTYPE", "Spec", "TensorSpec", "Tolerance", "load_spec", "parse_spec_text"]

log = logging.getLogger(__name__)

CASE_DTYPE = "T"
"""A tensor dtype of ``T`` binds to the dtype of the case (one of ``supported_dtypes``)."""

MIN_SEEDS = 3
"""Verification runs every case on at least this many seeds (spec/verification.md step 3)."""

_Path = tuple[str | int, ...]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _dim(value: Any) -> int | str:
    """One shape entry: a positive int or a dim name that is a Python identifier."""
    if isinstance(value, bool):
        raise ValueError(f"a shape entry must be a positive integer or a dim name, not {value!r}")
    if isinstance(value, int):
        if value < 1:
            raise ValueError(f"a fixed size must be >= 1, got {value}")
        return value
    if isinstance(value, str) and value.isidentifier() and not keyword.iskeyword(value):
        return value
    raise ValueError(f"a shape entry must be a positive integer or a dim name like B, got {value!r}")


_EXPONENT_FLOAT = re.compile(r"[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+")
"""A float written without a dot before its exponent (``1e-05``): YAML 1.2 and every SPEC author read it as a number,
PyYAML's YAML 1.1 resolver as a string, so ``range: [1e-05, 1.0]`` was refused as "not two numbers" (the input-range
property test found it in a fresh environment, s38). Read as a number here rather than in the YAML loader: unquoted
strings written by ``yaml.safe_dump`` elsewhere (``12e456``, a digest prefix) must stay strings."""


def _value_range(value: Any) -> tuple[float, float] | None:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = [float(v) if isinstance(v, str) and _EXPONENT_FLOAT.fullmatch(v) else v for v in value]
    ok = (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    )
    if not ok:
        raise ValueError(f"range must be a list of two numbers [low, high], got {value!r}")
    lo, hi = float(value[0]), float(value[1])
    if not lo < hi:
        raise ValueError(f"range low must be smaller than high, got [{value[0]}, {value[1]}]")
    return lo, hi


def _dtype_name(value: Any, *, allow_case: bool) -> str:
    if allow_case and value == CASE_DTYPE:
        return CASE_DTYPE
    try:
        return canonical_name(str(value))
    except DTypeError:
        extra = f"'{CASE_DTYPE}' (the case dtype) or " if allow_case else ""
        raise ValueError(
            f"unknown dtype {value!r}; use {extra}one of: {', '.join(sorted(CANONICAL))}"
        ) from None


Dim = Annotated[int | str, BeforeValidator(_dim)]


class Tolerance(_Model):
    """Comparison tolerance for one case dtype: pass iff ``|a - b| <= atol + rtol * |b|``."""

    atol: float = Field(ge=0)
    rtol: float = Field(ge=0)


class TensorSpec(_Model):
    """One input or output tensor.

    Example: ``TensorSpec(name="x", shape=["B", "D"], dtype="T", range=(-4.0, 4.0))``.
    """

    name: str
    shape: list[Dim]
    """Sizes: fixed ints or named dims bound by each entry of ``p0_shapes``."""
    dtype: str
    """A concrete dtype (``int32``) or ``T`` = the case dtype."""
    range: Annotated[tuple[float, float] | None, BeforeValidator(_value_range)] = None
    """Inclusive value range for generated inputs; default [-1, 1] for floats, [0, 16] for integers."""
    distribution: Literal["uniform", "normal"] = "uniform"
    """Base distribution inside ``range`` (normal: centred, sigma = half-width / 3, clipped)."""
    constant: bool = False
    """Outputs only: the golden may legitimately be constant (softmax over a length-1 axis); intake does not
    refuse it and the verifier does not call a constant candidate output a cheat when the golden is too."""

    @field_validator("name")
    @classmethod
    def _name_is_identifier(cls, v: str) -> str:
        if not v.isidentifier() or keyword.iskeyword(v):
            raise ValueError(f"a tensor name must be a Python identifier, got {v!r}")
        return v

    @field_validator("dtype", mode="before")
    @classmethod
    def _dtype(cls, v: Any) -> str:
        return _dtype_name(v, allow_case=True)

    def dims(self) -> list[str]:
        """Named dims of this tensor, in order."""
        return [d for d in self.shape if isinstance(d, str)]

    def concrete_shape(self, dims: dict[str, int]) -> tuple[int, ...]:
        """The shape with every named dim bound from ``dims``."""
        return tuple(d if isinstance(d, int) else int(dims[d]) for d in self.shape)

    def concrete_dtype(self, case_dtype: str) -> str:
        """The dtype name for a case whose dtype is ``case_dtype``."""
        return case_dtype if self.dtype == CASE_DTYPE else self.dtype


_ATTR_TYPES = {"float": (int, float), "int": (int,), "bool": (bool,), "str": (str,), "list": (list,)}


class AttrSpec(_Model):
    """A typed op attribute (``attributes: {eps: {type: float, value: 1.0e-6}}``): passed to golden() and, as a
    keyword argument, to a wrapper that names it as a parameter."""

    type: Literal["float", "int", "bool", "str", "list"]
    value: Any

    @field_validator("value")
    @classmethod
    def _typed(cls, v: Any, info: Any) -> Any:
        kind = info.data.get("type")
        ok = _ATTR_TYPES.get(kind, ())
        if kind in ("float", "int") and isinstance(v, bool) or not isinstance(v, ok):
            raise ValueError(f"value {v!r} is not of type {kind}")
        return float(v) if kind == "float" else v


class ImportInfo(_Model):
    """Where the op dir's kernels came from when ``python -m orchestrator import`` wrote it (a gym operator)."""

    source: str = ""
    """The imported operator (folder and files)."""
    tuned: bool = False
    """The kernels are performance-tuned already: lint allows the performance-stage constructs (OL56)."""


MAX_OP_NAME_BYTES = 200
"""The longest op_name (UTF-8 bytes): the files a run derives from it (``<op>_module123456789_impl.py``, 24 bytes
more) must fit a file system's 255-byte name limit."""


class Spec(_Model):
    """SPEC.md front matter.

    Example::

        op_name: silu
        inputs:  [{name: x, shape: [B, D], dtype: T, range: [-8.0, 8.0]}]
        outputs: [{name: y, shape: [B, D], dtype: T}]
        dynamic_axes: [B]
        p0_shapes: [{B: 64, D: 256}, {B: 77, D: 256}]
        supported_dtypes: [fp32]
        tolerance: {fp32: {atol: 1.0e-5, rtol: 1.0e-5}}
    """

    op_name: str
    inputs: list[TensorSpec] = Field(min_length=1)
    outputs: list[TensorSpec] = Field(min_length=1)
    p0_shapes: list[dict[str, int]] = Field(default_factory=list)
    dynamic_axes: list[str] = Field(default_factory=list)
    supported_dtypes: list[str] = Field(min_length=1)
    tolerance: dict[str, Tolerance]
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1)
    schema_version: int | str | None = None
    attributes: dict[str, AttrSpec] = Field(default_factory=dict)
    """Typed op attributes; their values are merged into ``attrs``."""
    imported: ImportInfo | None = None
    """Set by the gym import (``imported: {source: ..., tuned: true}``)."""
    ties: Literal["judged", "unspecified"] = "judged"
    """``unspecified``: which of several equal inputs the op picks is the implementation's (a top-k, sort or argmax
    whose tie-break neither the SPEC nor the golden fixes - the gym's llada2_gate_select compares its expert ids with
    torch's as sets and never sees a tie), so verification puts no ties into its inputs; zero, constant and
    near-constant rows stay. ``judged`` (the default): tied rows are drawn too, and the golden's tie-break is the
    contract (moe_topk_gating: lower expert id first)."""
    pypto_target: Target | None = None
    """The PyPTO version the kernels are written for (``runtime.targets``); verify checks against it. None: the
    forge.toml ``[toolchain]`` value, else the default (head)."""
    npuarch: NpuArch | None = None
    """The Ascend architecture the kernels are written for (``pypto.platform.npuarch``: ``DAV_2201`` = A2/A3, the
    default; ``DAV_3510`` = Ascend 950, where the FP8 cube exists). Verify runs the candidate and the device on it,
    as ``python -m runtime.emulator --npuarch`` does for a script."""
    vary_ints: list[str] = Field(default_factory=list)
    """Int attributes verification runs at other whole values whatever golden()'s use of them looks like (unseen
    drawing version 14, :func:`runtime.opdir._unseen.varied_ints`): ``vary_ints: [n_rounds]`` for a count golden.py
    passes to a function the analysis cannot follow. Each one a positive int attribute."""
    fixed_ints: list[str] = Field(default_factory=list)
    """Int attributes verification never varies, whatever golden() does with them: a value the op is defined for only
    (``fixed_ints: [window]``: kernels may build the SPEC's window in). Each one an int attribute."""
    attrs: dict[str, Any] = Field(default_factory=dict)
    """Every other top-level key plus the typed ``attributes``: op attributes, passed to golden() as keywords it
    accepts and to the wrapper as keywords it names."""

    @field_validator("op_name")
    @classmethod
    def _op_name(cls, v: str) -> str:
        if not v.isidentifier():
            raise ValueError(f"op_name must be a Python identifier (it names files), got {v!r}")
        if len(v.encode("utf-8")) > MAX_OP_NAME_BYTES:  # a run then failed at its first file: Errno 36 (s40)
            raise ValueError(f"op_name is {len(v.encode('utf-8'))} bytes long; at most {MAX_OP_NAME_BYTES} (it names "
                             "files such as <op_name>_module123_impl.py, and a file name has at most 255 bytes)")
        return v

    @field_validator("pypto_target", mode="before")
    @classmethod
    def _target(cls, v: Any) -> Any:
        if v is None:
            return v
        try:
            return parse_target(v, "pypto_target")
        except TargetError as exc:
            raise ValueError(str(exc).removeprefix("pypto_target: ")) from None

    @field_validator("p0_shapes", mode="before")
    @classmethod
    def _p0_shapes(cls, v: Any) -> Any:
        if isinstance(v, list):
            for item in v:
                if not isinstance(item, dict):
                    raise ValueError(f"each P0 shape must be a mapping binding the named dims, e.g. {{B: 64, D: 256}}; "
                                     f"got {item!r}")
        return v

    @field_validator("supported_dtypes", mode="before")
    @classmethod
    def _dtypes(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [_dtype_name(x, allow_case=False) for x in v]
        return v

    @field_validator("tolerance", mode="before")
    @classmethod
    def _tolerance_keys(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {_dtype_name(k, allow_case=False): t for k, t in v.items()}
        return v

    def named_dims(self) -> list[str]:
        """Every named dim used by an input or output, first use first."""
        seen: dict[str, None] = {}
        for t in [*self.inputs, *self.outputs]:
            for d in t.dims():
                seen.setdefault(d, None)
        return list(seen)

    def tensor(self, name: str) -> TensorSpec:
        for t in [*self.inputs, *self.outputs]:
            if t.name == name:
                return t
        raise KeyError(name)


_KNOWN_KEYS = frozenset(Spec.model_fields) - {"attrs"}
_TYPO_CUTOFF = 0.75
"""How close an unknown key must be to a defined one to be called a typo (difflib ratio)."""
_ALLOWED: dict[str, list[str]] = {
    "tensor": list(TensorSpec.model_fields),
    "tolerance": list(Tolerance.model_fields),
    "attributes": list(AttrSpec.model_fields),
}


# ------------------------------------------------------------------------------------------ parsing


def _front_matter(text: str, file: str) -> tuple[str, int]:
    """Return the YAML text and the file line number of its first line (:func:`runtime.frontmatter`)."""
    fm = split_front_matter(text)
    if fm.problem == "missing":
        raise OpDirError([Problem(file=file, line=1, field="front matter",
                                  message="SPEC.md must start with a YAML front matter block: a line '---', "
                                          "the YAML keys, then a closing line '---'")])
    if fm.problem == "unclosed":
        raise OpDirError([Problem(file=file, line=1, field="front matter",
                                  message="the YAML front matter block opened on line 1 is never closed by a '---' line")])
    return fm.yaml_text, fm.first_line


def _line_map(node: yaml.Node, offset: int, file: str) -> tuple[dict[_Path, int], list[Problem]]:
    """Map every key path and list item path to its 1-based file line; report duplicate keys."""
    lines: dict[_Path, int] = {}
    problems: list[Problem] = []

    def walk(n: yaml.Node, path: _Path) -> None:
        if isinstance(n, yaml.MappingNode):
            seen: set[str] = set()
            for k, v in n.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else str(k.value)
                line = k.start_mark.line + offset
                if key in seen:
                    problems.append(Problem(file=file, line=line, field=_field(path + (key,)),
                                            message=f"key '{key}' appears twice in the same block"))
                seen.add(key)
                lines[path + (key,)] = line
                walk(v, path + (key,))
        elif isinstance(n, yaml.SequenceNode):
            for i, item in enumerate(n.value):
                lines[path + (i,)] = item.start_mark.line + offset
                walk(item, path + (i,))

    lines[()] = node.start_mark.line + offset
    walk(node, ())
    return lines, problems


def _field(path: _Path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _line_for(lines: dict[_Path, int], path: _Path) -> int | None:
    for n in range(len(path), -1, -1):
        if path[:n] in lines:
            return lines[path[:n]]
    return None


def _phrase(err: dict[str, Any], path: _Path) -> tuple[_Path, str]:
    """Plain-words message for one pydantic error; may shorten the path (missing key -> its parent)."""
    kind = err["type"]
    if kind == "missing":
        return path[:-1], f"required key '{path[-1]}' is missing"
    if kind == "extra_forbidden":
        parent = path[:-1]
        group = parent[0] if parent[:1] in (("tolerance",), ("attributes",)) else "tensor"
        meant = _did_you_mean(str(path[-1]), _ALLOWED[group])
        hint = f"did you mean '{meant}'? " if meant else ""
        return path, f"unknown key '{path[-1]}'; {hint}allowed keys here: {', '.join(_ALLOWED[group])}"
    if kind == "value_error":
        return path, str(err["ctx"]["error"])
    if kind == "too_short":
        return path, "must not be empty"
    if kind == "literal_error":
        return path, f"must be one of {err['ctx']['expected']}, got {err['input']!r}"
    msg = err["msg"]
    msg = msg[0].lower() + msg[1:]
    return path, f"{msg} (got {err['input']!r})"


def _loc_path(loc: tuple[Any, ...]) -> _Path:
    # pydantic appends '[key]' for dict-key errors; the YAML line of the key itself is what we want
    return tuple(p for p in loc if p != "[key]")


def parse_spec_text(text: str, file: str = "SPEC.md") -> Spec:
    """Parse SPEC.md text into a :class:`Spec`.

    Raises:
        OpDirError: every problem found, each with file, line and field.
    """
    yaml_text, offset = _front_matter(text, file)
    try:
        node = compose_yaml(yaml_text)
        data = load_yaml(yaml_text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + offset if mark is not None else None
        reason = getattr(exc, "problem", None) or str(exc)
        raise OpDirError([Problem(file=file, line=line, field="front matter",
                                  message=f"YAML syntax error: {reason}")]) from None
    if not isinstance(data, dict) or node is None:
        raise OpDirError([Problem(file=file, line=offset, field="front matter",
                                  message="the front matter must be a YAML mapping of keys (op_name: ..., inputs: ...)")])
    lines, problems = _line_map(node, offset, file)

    known = {k: v for k, v in data.items() if k in _KNOWN_KEYS}
    attrs = {str(k): v for k, v in data.items() if k not in _KNOWN_KEYS}
    attrs.update(_yaml12_floats(node, attrs))
    problems += _typos(attrs, lines, file)
    problems += _gym_forms(known, lines, file)
    typed = known.get("attributes")
    if isinstance(typed, dict):
        for k, v in typed.items():
            if str(k) in attrs:
                problems.append(Problem(file=file, line=lines.get(("attributes", k)), field=f"attributes.{k}",
                                        message=f"attribute '{k}' is also a plain key; keep one"))
            elif isinstance(v, dict) and "value" in v:
                attrs[str(k)] = v["value"]
    spec: Spec | None = None
    try:
        spec = Spec.model_validate({**known, "attrs": attrs})
    except ValidationError as exc:
        for err in exc.errors():
            path, message = _phrase(err, _loc_path(err["loc"]))
            problems.append(Problem(file=file, line=_line_for(lines, path), field=_field(path) or "front matter",
                                    message=message))
    if spec is not None:
        problems.extend(_cross_checks(spec, lines, file))
    if problems:
        raise OpDirError(sorted(problems, key=lambda p: (p.line or 0, p.field)))
    assert spec is not None
    return spec


def _did_you_mean(key: str, allowed: list[str] | frozenset[str]) -> str | None:
    close = difflib.get_close_matches(key, sorted(allowed), n=1, cutoff=_TYPO_CUTOFF)
    return close[0] if close else None


_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)[eE][-+]?[0-9]+")
"""A float YAML 1.2 reads and PyYAML's YAML 1.1 does not: an exponent without a dot (``1e-6``)."""


def _yaml12_floats(node: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """The attributes written as unquoted ``1e-6`` (alone or in a list), as the floats the author meant. PyYAML
    reads them as strings (YAML 1.1); a golden that does ``np.float32(eps)`` takes the string, so nothing failed -
    but verification varies float attributes only, and ``eps: 1e-6`` was never varied (red team s36). A quoted
    ``'1e-6'`` stays a string."""
    def plain(n: Any) -> bool:
        return isinstance(n, yaml.ScalarNode) and not n.style and n.tag == "tag:yaml.org,2002:str" and \
            _YAML12_FLOAT.fullmatch(n.value) is not None

    out: dict[str, Any] = {}
    for key, value in getattr(node, "value", None) or []:
        name = getattr(key, "value", None)
        if not isinstance(name, str) or name not in attrs:
            continue
        if plain(value):
            out[name] = float(value.value)
        elif isinstance(value, yaml.SequenceNode) and any(plain(v) for v in value.value) and \
                isinstance(attrs[name], list) and len(attrs[name]) == len(value.value):
            out[name] = [float(v.value) if plain(v) else x for v, x in zip(value.value, attrs[name], strict=True)]
    return out


def _typos(attrs: dict[str, Any], lines: dict[_Path, int], file: str) -> list[Problem]:
    """Top-level keys SPEC.md does not define are op attributes (passed to golden() as keywords); one that is
    a near miss of a defined key (``dynamic_axis``, ``seed``) is a typo, refused with the key it meant, so that
    ``B`` never silently becomes static or the run use other seeds than written (issue #28 finding 4)."""
    out = []
    for key in attrs:
        meant = _did_you_mean(key, _KNOWN_KEYS)
        if meant is not None:
            out.append(Problem(file=file, line=lines.get((key,)), field=key,
                               message=f"unknown key '{key}'; did you mean '{meant}'? (other top-level keys are op "
                                       "attributes; declare one that looks like a key under 'attributes:')"))
    return out


def _gym_forms(known: dict[str, Any], lines: dict[_Path, int], file: str) -> list[Problem]:
    """Accept the gym's SPEC forms in place (issue #16): one ``tolerance: {atol, rtol}`` for every supported
    dtype, and ``p0_shapes`` as shapes (``[[64, 256], [77, 256]]`` = the first input's shape per case, or one
    list of shapes per input per case, or ``{tensor: shape}``) bound against the named dims of the inputs."""
    problems: list[Problem] = []
    tol = known.get("tolerance")
    if isinstance(tol, dict) and set(tol) == {"atol", "rtol"} and isinstance(known.get("supported_dtypes"), list):
        known["tolerance"] = {str(d): dict(tol) for d in known["supported_dtypes"]}
    shapes, inputs = known.get("p0_shapes"), known.get("inputs")
    if not (isinstance(shapes, list) and isinstance(inputs, list)) or all(isinstance(s, dict) and not any(
            isinstance(v, list) for v in s.values()) for s in shapes):
        return problems
    decl = {str(t.get("name")): t.get("shape") for t in inputs if isinstance(t, dict)}
    order = [str(t.get("name")) for t in inputs if isinstance(t, dict)]
    out: list[Any] = []
    for i, entry in enumerate(shapes):
        if isinstance(entry, dict) and all(isinstance(v, list) for v in entry.values()):
            per = {str(k): v for k, v in entry.items()}
        elif isinstance(entry, list) and entry and all(isinstance(v, int) for v in entry):
            per = {order[0]: entry} if order else {}
        elif isinstance(entry, list) and all(isinstance(v, list) for v in entry):
            per = dict(zip(order, entry, strict=False))
        else:
            out.append(entry)
            continue
        dims: dict[str, int] = {}
        for name, shape in per.items():
            want = decl.get(name)
            if not isinstance(want, list) or len(want) != len(shape):
                problems.append(Problem(file=file, line=_line_for(lines, ("p0_shapes", i)), field=f"p0_shapes[{i}]",
                                        message=f"shape {shape} does not match the rank of input '{name}' {want}"))
                continue
            for d, v in zip(want, shape, strict=True):
                if isinstance(d, str):
                    if dims.setdefault(d, v) != v:
                        problems.append(Problem(file=file, line=_line_for(lines, ("p0_shapes", i)),
                                                field=f"p0_shapes[{i}]",
                                                message=f"dim '{d}' is bound to {dims[d]} and {v} in the same case"))
                elif d != v:
                    problems.append(Problem(file=file, line=_line_for(lines, ("p0_shapes", i)),
                                            field=f"p0_shapes[{i}]",
                                            message=f"input '{name}' has fixed size {d} where this case gives {v}"))
        out.append(dims)
    known["p0_shapes"] = out
    return problems


def _cross_checks(spec: Spec, lines: dict[_Path, int], file: str) -> list[Problem]:
    """Rules that involve more than one field (names, dims bound by every P0 shape, tolerances)."""
    out: list[Problem] = []

    def add(path: _Path, message: str) -> None:
        out.append(Problem(file=file, line=_line_for(lines, path), field=_field(path), message=message))

    seen: dict[str, str] = {}
    for group in ("inputs", "outputs"):
        for i, t in enumerate(getattr(spec, group)):
            if t.name in seen:
                add((group, i, "name"), f"tensor name '{t.name}' is already used in {seen[t.name]}")
            seen.setdefault(t.name, group)
            if group == "inputs" and t.dtype == "bool" and t.range is not None:
                add((group, i, "range"), "a bool input takes no range")
    named = spec.named_dims()
    if named and not spec.p0_shapes:
        add(("p0_shapes",), f"required when shapes use named dims ({', '.join(named)}): "
                            "give at least one entry binding every named dim, e.g. "
                            + "{" + ", ".join(f"{d}: 64" for d in named) + "}")
    for i, shape in enumerate(spec.p0_shapes):
        missing = [d for d in named if d not in shape]
        if missing:
            add(("p0_shapes", i), f"does not bind the named dim(s) {', '.join(missing)}; every P0 shape must bind "
                                  f"all of: {', '.join(named)}")
        for d, v in shape.items():
            if d not in named:
                add(("p0_shapes", i, d), f"'{d}' is not a dim of any input or output "
                                         f"(named dims: {', '.join(named) or 'none'})")
            elif v < 1:
                add(("p0_shapes", i, d), f"dim sizes must be >= 1, got {v}")
    for i, axis in enumerate(spec.dynamic_axes):
        if axis not in named:
            add(("dynamic_axes", i), f"'{axis}' is not a named dim of any input or output "
                                     f"(named dims: {', '.join(named) or 'none'})")
    for i, dt in enumerate(spec.supported_dtypes):
        if dt not in spec.tolerance:
            add(("supported_dtypes", i), f"dtype '{dt}' has no entry in tolerance; add "
                                         f"tolerance: {{{dt}: {{atol: ..., rtol: ...}}}}")
    for key in ("vary_ints", "fixed_ints"):
        for i, name in enumerate(getattr(spec, key)):
            v = spec.attrs.get(name)
            if name not in spec.attrs:
                add((key, i), f"'{name}' is not an attribute of this SPEC (attributes: "
                              f"{', '.join(spec.attrs) or 'none'}); {key} lists int attributes")
            elif type(v) is not int:
                add((key, i), f"attribute '{name}' is {v!r}, not an int: {key} lists int attributes (floats are "
                              f"varied anyway, bools never)")
            elif key == "vary_ints" and v < 1:
                add((key, i), f"attribute '{name}' is {v}: only a positive int is varied (0 may be a switch)")
            elif key == "vary_ints" and name in spec.fixed_ints:
                add((key, i), f"attribute '{name}' is in both vary_ints and fixed_ints; keep one")
    if len(set(spec.seeds)) != len(spec.seeds) or any(s < 0 for s in spec.seeds):
        add(("seeds",), f"seeds must be distinct non-negative integers, got {spec.seeds}")
    elif len(spec.seeds) < MIN_SEEDS:
        add(("seeds",), f"give at least {MIN_SEEDS} seeds (every case runs on each; the value bands rotate over "
                        f"them), got {spec.seeds}; or leave seeds out for the default [0, 1, 2]")
    return out


def load_spec(path: Path) -> Spec:
    """Read and parse a SPEC.md file (see :func:`parse_spec_text`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise OpDirError([Problem(file=path.name, message=f"cannot read: {exc.strerror or exc}")]) from None
    except UnicodeDecodeError:
        from runtime.lint._encoding import not_utf8

        why = not_utf8(path.read_bytes(), "SPEC.md files")
        raise OpDirError([Problem(file=path.name, message=why or "is not UTF-8 text")]) from None
    return parse_spec_text(text, path.name)
