"""The program codec: `encode(program) -> bytes` and `decode(bytes) -> program`, no pickle and no eval.

Why: the program crosses from the sandboxed candidate process to the device process, so the device must
treat the bytes as hostile. The format is a magic line, a little-endian u32 header length, a UTF-8 JSON
header and the raw little-endian bytes of the numpy constants. `decode` parses the JSON with duplicate keys,
NaN/Infinity and oversized input refused, then `_validate` checks everything else; every problem is one
`ProgramError` with a one-line reason, never another exception type and never unbounded work.

Header (JSON): ``v`` version, ``kernel``, ``file`` / ``line`` (the kernel's def), ``n_keys``, ``n_loops``,
``files`` (string table of kernel files), ``params``, ``symbols``, ``exprs`` (the expression table: every
distinct expression node once, children referring to earlier entries), ``body`` (the region tree) and
``blobs`` (numpy constants: dtype, shape, offset, byte count, scalar or array).
Values inside op parameters: JSON null/bool/int/str as themselves, lists as arrays, a float as
``{"f": float.hex()}``, a numpy scalar as ``{"s": blob}``, a numpy array as ``{"a": blob}``, an expression as
an int or ``{"x": table index}``.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from typing import Any

import numpy as np

from runtime.emulator.device._kreg import DTYPES, KINDS
from runtime.emulator.device._program import Guard, KernelProgram, Loop, Op, Param, Path, Region, SymBind
from runtime.emulator.device._types import Limits, ProgramError
from runtime.emulator.device._validate import validate

__all__ = ["MAGIC", "decode", "encode"]

MAGIC = b"PTOKPRG1"
VERSION = 1
_LE = sys.byteorder == "little"
_INT_MAX = 2**63


# ---------------------------------------------------------------------------------------------------------
# encode


class _Enc:
    def __init__(self) -> None:
        self.exprs: list[Any] = []
        self.expr_ids: dict[str, int] = {}
        """hash-consing: the node with its children as table refs -> table index (canonical, O(1) per node)"""
        self.memo: dict[int, Any] = {}
        self.keep: list[Any] = []
        self.files: list[str] = []
        self.file_ids: dict[str, int] = {}
        self.blobs: list[list[Any]] = []
        self.data: list[bytes] = []
        self.size = 0

    def file(self, f: str | None) -> int | None:
        if f is None:
            return None
        i = self.file_ids.get(f)
        if i is None:
            i = self.file_ids[f] = len(self.files)
            self.files.append(f)
        return i

    def expr(self, e: Any) -> Any:
        if type(e) is int:
            return e
        hit = self.memo.get(id(e))
        if hit is not None:
            return hit
        tag = e[0]
        node: list[Any]
        if tag == "bin":
            node = ["bin", e[1], self.expr(e[2]), self.expr(e[3])]
        elif tag == "read":
            node = ["read", e[1], [self.expr(x) for x in e[2]], e[3]]
        else:  # sym / idx / flag: scalars only
            node = list(e)
        key = json.dumps(node, separators=(",", ":"))
        i = self.expr_ids.get(key)
        if i is None:
            i = self.expr_ids[key] = len(self.exprs)
            self.exprs.append(node)
        ref = {"x": i}
        self.memo[id(e)] = ref
        self.keep.append(e)
        return ref

    def blob(self, v: np.ndarray | np.generic, form: str) -> int:
        arr = np.asarray(v)
        raw = np.ascontiguousarray(arr).tobytes()
        self.blobs.append([arr.dtype.name, list(arr.shape), self.size, len(raw), form])
        self.data.append(raw)
        self.size += len(raw)
        return len(self.blobs) - 1

    def value(self, v: Any) -> Any:
        if v is None or isinstance(v, bool | str) or type(v) is int:
            return v
        if type(v) is float:
            return {"f": v.hex()}
        if isinstance(v, np.generic):
            return {"s": self.blob(v, "s")}
        if isinstance(v, np.ndarray):
            return {"a": self.blob(v, "a")}
        if isinstance(v, list):
            return [self.value(x) for x in v]
        if isinstance(v, tuple):
            return self.expr(v)
        raise ProgramError(f"cannot encode a {type(v).__name__} parameter")

    def param(self, t: str, v: Any) -> Any:
        base = t.rstrip("?")
        if v is None:
            return None
        if base == "expr":
            return self.expr(v)
        if base == "exprs":
            return [self.expr(x) for x in v]
        return self.value(v)

    def meta(self, op: Op) -> dict[str, Any]:
        m: dict[str, Any] = {}
        if op.nid:
            m["nid"] = op.nid
        if op.target is not None:
            m["target"] = op.target
        if op.out_name is not None:
            m["out_name"] = op.out_name
        if op.names:
            m["names"] = [[k, n] for k, n in op.names.items()]
        if op.source is not None:
            m["source"] = op.source
        if op.attrs:
            m["attrs"] = [[k, self.value(_plain(v))] for k, v in op.attrs.items()]
        return m

    def item(self, it: Any) -> list[Any]:
        if isinstance(it, Op):
            spec = KINDS[it.kind]
            params = {name: self.param(typ, it.params.get(name)) for name, typ in spec.schema.items()}
            return ["o", it.kind, it.name, params, list(it.ins), list(it.outs), list(it.writes), it.out_key,
                    it.cls, it.tile_elems, it.gm_write, self.file(it.file), it.line,
                    [[d, r] for d, r in it.types], self.meta(it)]
        if isinstance(it, Guard):
            return ["g", self.expr(it.cond), bool(it.taken), it.index, self.file(it.file), it.line]
        if isinstance(it, Loop):
            return ["l", it.lid, it.name, self.expr(it.start), self.expr(it.stop), self.expr(it.step),
                    self.region(it.body), self.file(it.file), it.line]
        raise ProgramError(f"cannot encode a {type(it).__name__} item")

    def region(self, r: Region) -> list[Any]:
        return [[[bool(d) for d in p.decisions], [self.item(it) for it in p.items]] for p in r.paths]


def _plain(v: Any) -> Any:
    """Debug attributes as JSON-able values (tuples become lists)."""
    if isinstance(v, tuple | list):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, bool | int | float | str):
        return v
    return str(v)


def encode(program: KernelProgram) -> bytes:
    """The program as bytes (deterministic: equal programs give equal bytes)."""
    if not _LE:
        raise ProgramError("the program codec needs a little-endian host")
    enc = _Enc()
    body = enc.region(program.body)
    header = {
        "v": VERSION, "kernel": program.kernel, "file": program.file, "line": program.line,
        "n_keys": program.n_keys, "n_loops": program.n_loops,
        "params": [[p.name, p.key, p.dtype, list(p.shape), p.written] for p in program.params],
        "symbols": [[s.name, s.param, s.axis, s.first_wins] for s in program.symbols],
        "exprs": enc.exprs, "body": body, "files": enc.files, "blobs": enc.blobs,
    }
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")
    return MAGIC + struct.pack("<I", len(text)) + text + b"".join(enc.data)


# ---------------------------------------------------------------------------------------------------------
# decode


def _no_dupes(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ProgramError(f"duplicate JSON key {dup!r}")
    return d


def _no_constant(name: str) -> Any:
    raise ProgramError(f"JSON constant {name} is not allowed")


def _parse(data: bytes, limits: Limits) -> tuple[dict[str, Any], memoryview]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise ProgramError(f"a program is bytes, got {type(data).__name__}")
    mv = memoryview(data).cast("B")
    if len(mv) > limits.max_bytes:
        raise ProgramError(f"program of {len(mv)} bytes exceeds the limit of {limits.max_bytes}")
    if len(mv) < len(MAGIC) + 4 or bytes(mv[: len(MAGIC)]) != MAGIC:
        raise ProgramError("not a kernel program (bad magic)")
    (n,) = struct.unpack_from("<I", mv, len(MAGIC))
    start = len(MAGIC) + 4
    if n > len(mv) - start:
        raise ProgramError("header length runs past the end of the program")
    try:
        text = bytes(mv[start:start + n]).decode("ascii")
    except UnicodeDecodeError:
        raise ProgramError("the header is not ASCII JSON") from None
    try:
        header = json.loads(text, object_pairs_hook=_no_dupes, parse_constant=_no_constant,
                            parse_float=lambda s: _no_constant("float " + s[:20]))
    except ProgramError:
        raise
    except (ValueError, RecursionError) as exc:
        raise ProgramError(f"the header is not valid JSON: {type(exc).__name__}") from None
    if not isinstance(header, dict):
        raise ProgramError("the header is not a JSON object")
    return header, mv[start + n:]


class _Dec:
    def __init__(self, header: dict[str, Any], blob: memoryview, limits: Limits) -> None:
        self.h = header
        self.blob = blob
        self.lim = limits
        self.exprs: list[Any] = []
        self.files: list[str] = []
        self.consts: list[np.ndarray | np.generic] = []
        self.forms: list[str] = []
        self.n_keys = 0
        self.n_loops = 0
        self.items = 0
        self.ops = 0

    # scalars -------------------------------------------------------------------------------------------
    def int_(self, v: Any, what: str, lo: int = -_INT_MAX, hi: int = _INT_MAX - 1) -> int:
        if type(v) is not int or not lo <= v <= hi:
            raise ProgramError(f"{what}: expected an int in [{lo}, {hi}], got {_short(v)}")
        return v

    def str_(self, v: Any, what: str) -> str:
        if type(v) is not str or len(v) > self.lim.max_string:
            raise ProgramError(f"{what}: expected a string of at most {self.lim.max_string} characters")
        return v

    def opt_str(self, v: Any, what: str) -> str | None:
        return None if v is None else self.str_(v, what)

    def bool_(self, v: Any, what: str) -> bool:
        if type(v) is not bool:
            raise ProgramError(f"{what}: expected a bool, got {_short(v)}")
        return v

    def list_(self, v: Any, what: str, n: int | None = None, cap: int | None = None) -> list:
        cap = self.lim.max_list if cap is None else cap
        if type(v) is not list or len(v) > cap or n is not None and len(v) != n:
            want = f"{n} entries" if n is not None else f"at most {cap} entries"
            raise ProgramError(f"{what}: expected a list of {want}")
        return v

    def file(self, v: Any, what: str) -> str | None:
        if v is None:
            return None
        return self.files[self.int_(v, what, 0, len(self.files) - 1)]

    def line(self, v: Any, what: str) -> int | None:
        return None if v is None else self.int_(v, what, 0, 10**9)

    def key(self, v: Any, what: str) -> int:
        return self.int_(v, what, 0, self.n_keys - 1)

    # expressions ---------------------------------------------------------------------------------------
    def ref(self, v: Any, what: str) -> Any:
        if type(v) is int:
            return self.int_(v, what)
        if type(v) is dict and len(v) == 1 and "x" in v:
            j = v["x"]
            if type(j) is not int or not 0 <= j < len(self.exprs):
                raise ProgramError(f"{what}: refers to expression {_short(j)}, which is not defined before it")
            return self.exprs[j]
        raise ProgramError(f"{what}: expected an expression, got {_short(v)}")

    def expr_table(self, table: Any) -> None:
        table = self.list_(table, "exprs", cap=self.lim.max_expr_nodes)
        depth: list[int] = []
        size: list[int] = []
        for i, node in enumerate(table):
            what = f"exprs[{i}]"
            node = self.list_(node, what, cap=4)
            tag = node[0] if node else None
            kids: list[Any] = []
            e: tuple
            if tag == "sym" and len(node) == 2:
                e = ("sym", self.str_(node[1], what))
            elif tag == "idx" and len(node) == 2:
                e = ("idx", self.int_(node[1], what, 0, self.n_loops - 1))
            elif tag == "flag" and len(node) == 3 and node[1] in ("begin", "end"):
                e = ("flag", node[1], self.int_(node[2], what, 0, self.n_loops - 1))
            elif tag == "bin" and len(node) == 4 and node[1] in _BIN_OPS:
                kids = [node[2], node[3]]
                e = ("bin", node[1], self.ref(node[2], what), self.ref(node[3], what))
            elif tag == "read" and len(node) == 4:
                idx = self.list_(node[2], what, cap=self.lim.max_rank)
                kids = list(idx)
                e = ("read", self.key(node[1], what), tuple(self.ref(x, what) for x in idx), self.str_(node[3], what))
            else:
                raise ProgramError(f"{what}: malformed expression node")
            d, s = 1, 1
            for k in kids:
                if type(k) is dict:  # an earlier entry (checked by `ref`)
                    j = k["x"]
                    d = max(d, depth[j] + 1)
                    s += size[j]
                else:
                    s += 1
            if d > self.lim.max_expr_depth:
                raise ProgramError(f"{what}: expression deeper than {self.lim.max_expr_depth}")
            if s > self.lim.max_expr_size:
                raise ProgramError(f"{what}: expression larger than {self.lim.max_expr_size} nodes")
            depth.append(d)
            size.append(s)
            self.exprs.append(e)

    # constants -----------------------------------------------------------------------------------------
    def blob_table(self, table: Any) -> None:
        table = self.list_(table, "blobs", cap=self.lim.max_ops)
        total = 0
        for i, b in enumerate(table):
            what = f"blobs[{i}]"
            b = self.list_(b, what, 5)
            name = self.str_(b[0], what)
            dt = DTYPES.get(name)
            if dt is None:
                raise ProgramError(f"{what}: dtype {name!r} is not allowed")
            shape = [self.int_(d, what, 0, self.lim.max_const_bytes) for d in self.list_(b[1], what,
                                                                                          cap=self.lim.max_rank)]
            off = self.int_(b[2], what, 0, len(self.blob))
            n = self.int_(b[3], what, 0, len(self.blob))
            form = b[4]
            if form not in ("s", "a") or form == "s" and shape:
                raise ProgramError(f"{what}: bad constant form")
            if math.prod(shape) * dt.itemsize != n or off + n > len(self.blob):
                raise ProgramError(f"{what}: byte count does not match dtype and shape")
            total += n
            if total > self.lim.max_const_bytes:
                raise ProgramError(f"numpy constants exceed {self.lim.max_const_bytes} bytes")
            arr = np.frombuffer(self.blob[off:off + n], dtype=dt).reshape(shape).copy()
            self.consts.append(arr[()] if form == "s" else arr)
            self.forms.append(form)

    # values --------------------------------------------------------------------------------------------
    def num(self, v: Any, what: str) -> Any:
        if type(v) in (bool, int):
            return self.int_(v, what) if type(v) is int else v
        if type(v) is dict and len(v) == 1 and "f" in v:
            try:
                return float.fromhex(self.str_(v["f"], what)[:64])
            except (ValueError, OverflowError):
                raise ProgramError(f"{what}: malformed float") from None
        if type(v) is dict and len(v) == 1 and "s" in v:
            i = self.int_(v["s"], what, 0, len(self.consts) - 1)
            if self.forms[i] != "s":
                raise ProgramError(f"{what}: expected a numpy scalar")
            return self.consts[i]
        raise ProgramError(f"{what}: expected a number, got {_short(v)}")

    def const(self, v: Any, what: str) -> Any:
        if type(v) is dict and len(v) == 1 and ("s" in v or "a" in v):
            form = "s" if "s" in v else "a"
            i = self.int_(v[form], what, 0, len(self.consts) - 1)
            if self.forms[i] != form:
                raise ProgramError(f"{what}: constant form mismatch")
            return self.consts[i]
        raise ProgramError(f"{what}: expected a numpy constant, got {_short(v)}")

    def param(self, t: str, v: Any, what: str) -> Any:
        if t.endswith("?"):
            if v is None:
                return None
            t = t[:-1]
        if t == "key":
            return self.key(v, what)
        if t == "keys":
            return [self.key(x, what) for x in self.list_(v, what)]
        if t == "int":
            return self.int_(v, what)
        if t == "ints":
            return [self.int_(x, what) for x in self.list_(v, what)]
        if t == "expr":
            return self.ref(v, what)
        if t == "exprs":
            return [self.ref(x, what) for x in self.list_(v, what, cap=self.lim.max_rank)]
        if t == "bool":
            return self.bool_(v, what)
        if t == "str":
            return self.str_(v, what)
        if t == "num":
            return self.num(v, what)
        if t == "const":
            return self.const(v, what)
        if t == "dtype":
            if v not in DTYPES:
                raise ProgramError(f"{what}: dtype {_short(v)} is not allowed")
            return v
        if t == "dt":
            if v not in _DT_NAMES:
                raise ProgramError(f"{what}: DataType {_short(v)} is not allowed")
            return v
        if t.startswith("enum:"):
            if v not in t[5:].split("|"):
                raise ProgramError(f"{what}: {_short(v)} is not one of {t[5:]}")
            return v
        raise ProgramError(f"{what}: unknown parameter type {t}")

    def attr(self, v: Any, what: str, depth: int = 0) -> Any:
        if depth > 4:
            raise ProgramError(f"{what}: attribute nested too deep")
        if v is None or type(v) in (bool, str) and (type(v) is not str or len(v) <= self.lim.max_string):
            return v
        if type(v) is int:
            return self.int_(v, what)
        if type(v) is list:
            return [self.attr(x, what, depth + 1) for x in self.list_(v, what)]
        if type(v) is dict and len(v) == 1 and "f" in v:
            return self.num(v, what)
        raise ProgramError(f"{what}: malformed attribute")

    # items ---------------------------------------------------------------------------------------------
    def op(self, it: list, what: str) -> Op:
        it = self.list_(it, what, 15)
        kind = it[1]
        spec = KINDS.get(kind) if type(kind) is str else None
        if spec is None:
            raise ProgramError(f"{what}: unknown op kind {_short(kind)}")
        what = f"{what} ({kind})"
        raw = it[3]
        if type(raw) is not dict or set(raw) != set(spec.schema):
            raise ProgramError(f"{what}: parameters must be exactly {sorted(spec.schema)}")
        params = {name: self.param(t, raw[name], f"{what}.{name}") for name, t in spec.schema.items()}
        if spec.check is not None:
            reason = spec.check(params)
            if reason is not None:
                raise ProgramError(f"{what}: {reason}")
        types = []
        for t in self.list_(it[13], what, cap=8):
            t = self.list_(t, what, 2)
            if t[0] != "?" and t[0] not in DTYPES:
                raise ProgramError(f"{what}: output dtype {_short(t[0])} is not allowed")
            types.append((t[0], self.int_(t[1], what, 0, self.lim.max_rank)))
        meta = it[14]
        if type(meta) is not dict or not set(meta) <= _META:
            raise ProgramError(f"{what}: malformed debug metadata")
        names = None
        if "names" in meta:
            names = {}
            for pair in self.list_(meta["names"], what):
                pair = self.list_(pair, what, 2)
                names[self.key(pair[0], what)] = self.opt_str(pair[1], what)
        attrs = None
        if "attrs" in meta:
            attrs = {}
            for pair in self.list_(meta["attrs"], what, cap=64):
                pair = self.list_(pair, what, 2)
                attrs[self.str_(pair[0], what)] = self.attr(pair[1], what)
        cls = it[8]
        if cls not in _CLASSES:
            raise ProgramError(f"{what}: unknown op class {_short(cls)}")
        out_key = None if it[7] is None else self.key(it[7], what)
        return Op(kind=kind, name=self.str_(it[2], what), params=params,
                  ins=tuple(self.key(k, what) for k in self.list_(it[4], what, cap=256)),
                  outs=tuple(self.key(k, what) for k in self.list_(it[5], what, cap=8)),
                  writes=tuple(self.key(k, what) for k in self.list_(it[6], what, cap=8)),
                  out_key=out_key, cls=cls, tile_elems=self.int_(it[9], what, 0, 2**40),
                  gm_write=self.bool_(it[10], what), file=self.file(it[11], what), line=self.line(it[12], what),
                  types=tuple(types), nid=self.int_(meta.get("nid", 0), what, 0, 2**40),
                  target=self.opt_str(meta.get("target"), what), out_name=self.opt_str(meta.get("out_name"), what),
                  names=names, source=self.opt_str(meta.get("source"), what), attrs=attrs)

    def region(self, r: Any, what: str, depth: int) -> Region:
        if depth > self.lim.max_depth:
            raise ProgramError(f"{what}: loops nested deeper than {self.lim.max_depth}")
        paths = self.list_(r, what, cap=self.lim.max_paths)
        out = Region()
        for pi, p in enumerate(paths):
            pw = f"{what}.paths[{pi}]"
            p = self.list_(p, pw, 2)
            decisions = tuple(self.bool_(d, pw) for d in self.list_(p[0], pw, cap=self.lim.max_paths))
            items: list[Op | Guard | Loop] = []
            raw_items = self.list_(p[1], pw, cap=self.lim.max_items)
            for ii, it in enumerate(raw_items):
                iw = f"{pw}.items[{ii}]"
                self.items += 1
                if self.items > self.lim.max_items:
                    raise ProgramError(f"more than {self.lim.max_items} program items")
                if type(it) is not list or not it:
                    raise ProgramError(f"{iw}: malformed item")
                tag = it[0]
                if tag == "o":
                    self.ops += 1
                    if self.ops > self.lim.max_ops:
                        raise ProgramError(f"more than {self.lim.max_ops} ops")
                    items.append(self.op(it, iw))
                elif tag == "g":
                    it = self.list_(it, iw, 6)
                    items.append(Guard(cond=self.ref(it[1], iw), taken=self.bool_(it[2], iw),
                                       index=self.int_(it[3], iw, 0, self.lim.max_paths),
                                       file=self.file(it[4], iw), line=self.line(it[5], iw)))
                elif tag == "l":
                    it = self.list_(it, iw, 9)
                    items.append(Loop(lid=self.int_(it[1], iw, 0, self.n_loops - 1), name=self.str_(it[2], iw),
                                      start=self.ref(it[3], iw), stop=self.ref(it[4], iw), step=self.ref(it[5], iw),
                                      body=self.region(it[6], f"{iw}.body", depth + 1), file=self.file(it[7], iw),
                                      line=self.line(it[8], iw)))
                else:
                    raise ProgramError(f"{iw}: unknown item tag {_short(tag)}")
            out.paths.append(Path(decisions=decisions, items=items))
        return out

    def program(self) -> KernelProgram:
        h = self.h
        if set(h) != _HEADER:
            raise ProgramError(f"header fields must be exactly {sorted(_HEADER)}")
        if h["v"] != VERSION:
            raise ProgramError(f"unsupported program version {_short(h['v'])}")
        self.n_keys = self.int_(h["n_keys"], "n_keys", 0, self.lim.max_keys)
        self.n_loops = self.int_(h["n_loops"], "n_loops", 0, self.lim.max_items)
        self.files = [self.str_(f, "files") for f in self.list_(h["files"], "files", cap=self.lim.max_items)]
        self.blob_table(h["blobs"])
        self.expr_table(h["exprs"])
        params = []
        for i, p in enumerate(self.list_(h["params"], "params", cap=self.lim.max_params)):
            what = f"params[{i}]"
            p = self.list_(p, what, 5)
            if p[2] not in DTYPES:
                raise ProgramError(f"{what}: dtype {_short(p[2])} is not allowed")
            shape = tuple(None if d is None else self.int_(d, what, 0, 2**40)
                          for d in self.list_(p[3], what, cap=self.lim.max_rank))
            params.append(Param(name=self.str_(p[0], what), key=self.key(p[1], what), dtype=p[2], shape=shape,
                                written=self.bool_(p[4], what)))
        symbols = []
        for i, s in enumerate(self.list_(h["symbols"], "symbols", cap=self.lim.max_params * self.lim.max_rank)):
            what = f"symbols[{i}]"
            s = self.list_(s, what, 4)
            pi = self.int_(s[1], what, 0, len(params) - 1)
            symbols.append(SymBind(name=self.str_(s[0], what), param=pi,
                                   axis=self.int_(s[2], what, 0, len(params[pi].shape) - 1),
                                   first_wins=self.bool_(s[3], what)))
        body = self.region(h["body"], "body", 0)
        return KernelProgram(kernel=self.str_(h["kernel"], "kernel"), file=self.opt_str(h["file"], "file"),
                             line=self.line(h["line"], "line"), params=params, symbols=symbols, body=body,
                             n_keys=self.n_keys, n_loops=self.n_loops)


_HEADER = frozenset({"v", "kernel", "file", "line", "n_keys", "n_loops", "params", "symbols", "exprs", "body",
                     "files", "blobs"})
_META = frozenset({"nid", "target", "out_name", "names", "source", "attrs"})
_CLASSES = frozenset({"vector", "cube", "move", "meta"})
_BIN_OPS = frozenset({"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&", "|", "min", "max"})
_DT_NAMES = frozenset({"DT_INT4", "DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_FP8", "DT_FP16", "DT_FP32",
                       "DT_BF16", "DT_HF4", "DT_HF8", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64", "DT_BOOL",
                       "DT_DOUBLE", "DT_FP8E5M2", "DT_FP8E4M3", "DT_FP8E8M0", "DT_FP4_E2M1X2", "DT_FP4_E1M2X2",
                       "DT_BOTTOM"})


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def decode(data: bytes, limits: Limits | None = None) -> KernelProgram:
    """The program encoded in ``data``, validated; raises `ProgramError` (one-line reason) for anything else."""
    limits = limits or Limits()
    if not _LE:
        raise ProgramError("the program codec needs a little-endian host")
    try:
        header, blob = _parse(data, limits)
        program = _Dec(header, blob, limits).program()
        validate(program, limits)
    except ProgramError:
        raise
    except RecursionError:
        raise ProgramError("the program is nested too deeply") from None
    except Exception as exc:  # noqa: BLE001 - the one error type of the codec, whatever the bytes hold
        raise ProgramError(f"malformed program ({type(exc).__name__})") from None
    return program
