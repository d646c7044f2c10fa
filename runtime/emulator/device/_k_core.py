"""Device implementations of the data-movement ops: view, assemble, move, reshape, unsqueeze, clone, setitem.

They define the semantics the rest builds on (spec §2.3, §4): views are windows with a valid shape,
assemble/move write only the valid box, local tensors start poisoned, and windows leaving their tensor raise
with the kernel line (or are clipped with a warning under ``out_of_bounds="clip"``).
"""

from __future__ import annotations

import math
from operator import add, le, lt, sub
from typing import Any

import numpy as np

from runtime.emulator._buffers import is_poison
from runtime.emulator._numerics import to_bf16
from runtime.emulator.device._kreg import kind, np_dtype

__all__ = ["check_poison", "reshape_valid"]


def check_poison(env: Any, part: np.ndarray, dname: str) -> None:
    """Poison written into a kernel argument: an error now (``poison_check="iteration"``), or remembered with
    its location and iteration and raised only if the argument still holds poison after the run ("final")."""
    n = is_poison(part)
    if n:
        err = env.error("EMU_POISON", f"write-back into '{dname}' carries {n} poisoned element(s): data from "
                        "outside a valid_shape (padding) or from uninitialized memory reached an output")
        if env.options.poison_check == "iteration":
            raise err
        env.poison_first.setdefault(dname, err)


def _same_len(*names: str) -> Any:
    def check(p: dict[str, Any]) -> str | None:
        n = {len(p[k]) for k in names if p.get(k) is not None}
        return None if len(n) <= 1 else f"{', '.join(names)} differ in length"

    return check


@kind("view", {"src": "key", "out": "key", "offs": "exprs", "shape": "ints", "vs": "exprs?", "name": "str",
               "param": "bool", "copy": "bool"}, check=_same_len("offs", "shape", "vs"), reads=("src",))
def build_view(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    key, okey = p["src"], p["out"]
    offs = cx.exprs(p["offs"])
    vs = cx.exprs(p["vs"]) if p["vs"] is not None else None
    shp_t = tuple(p["shape"])
    name, is_param, copy = p["name"], p["param"], p["copy"]
    nd = len(shp_t)
    zeros = (0,) * nd

    def run(env: Any) -> None:
        arr, valid = (env.buf.get(key) or env.get(key))
        o = [f(env) for f in offs]
        want = [f(env) for f in vs] if vs is not None else shp_t
        ext = arr.shape
        ends = tuple(map(add, o, shp_t))
        if (len(ext) == nd and type(valid) is tuple and len(valid) == nd and all(map(le, zeros, o))
                and all(map(lt, o, ext)) and all(map(le, ends, ext)) and all(map(le, want, shp_t))):
            # the usual window - inside its source on every axis, its valid extent inside its shape: the checks
            # below all pass and nothing is clipped; the same slices and valid extents, computed in C
            part = arr[tuple(map(slice, o, ends))]
            vt = tuple(map(max, zeros, map(min, want, map(sub, valid, o), map(sub, ext, o))))
            env.buf[okey] = (part.copy() if copy else part, vt)
            if env.record:
                env.geom = {"offsets": o}
            if is_param:
                env.bytes_in += part.nbytes
            return
        sl = []
        clipped = False
        vout = []
        oob = env.options.out_of_bounds
        for d in range(len(shp_t)):
            od = o[d]
            if od < 0 or od >= ext[d]:
                raise env.error("EMU_VIEW_OOB", f"view of '{name}': offset {od} on axis {d} is outside the "
                                f"tensor extent {ext[d]}")
            if want[d] > shp_t[d]:
                raise env.error("EMU_VIEW_VALID", f"view of '{name}': valid extent {want[d]} > view shape "
                                f"{shp_t[d]} on axis {d}")
            if od + want[d] > ext[d]:
                if oob == "raise":
                    raise env.error("EMU_VIEW_OOB", f"view of '{name}': window [{od}, {od + want[d]}) on axis "
                                    f"{d} runs past the tensor extent {ext[d]}; pass valid_shape= for the tail "
                                    "(values beyond the extent are undefined on the device)")
                env.warn("EMU_VIEW_CLIP", f"view of '{name}' clipped on axis {d}", file=env.node.file,
                         line=env.node.line, op="view")
            end = min(od + shp_t[d], ext[d])
            if end - od < shp_t[d]:
                clipped = True
            sl.append(slice(od, end))
            vout.append(max(0, min(want[d], valid[d] - od, ext[d] - od)))
        part = arr[tuple(sl)]
        if clipped:
            res = env.poison(shp_t, arr.dtype)
            res[tuple(slice(0, n) for n in part.shape)] = part
        elif copy:
            res = part.copy()
        else:
            res = part
        env.buf[okey] = (res, tuple(vout))
        if env.record:
            env.geom = {"offsets": o}
        if is_param:
            env.bytes_in += res.nbytes

    return run, None


@kind("view_dtype", {"src": "key", "out": "key", "dtype": "dtype"}, reads=("src",))
def build_view_dtype(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    key, okey, ndt = p["src"], p["out"], np_dtype(p["dtype"])
    rnd = bool(p.get("round_bf16"))  # a BF16 value held in FP32 (A2/A3, `_promote`): its BF16 bits

    def run(env: Any) -> None:
        arr, _ = (env.buf.get(key) or env.get(key))
        if rnd:
            arr = to_bf16(arr)
        res = np.ascontiguousarray(arr).view(ndt).copy()
        env.put(okey, res)

    return run, None


@kind("move", {"src": "key", "dst": "key", "dshape": "exprs", "param": "bool", "owned": "bool", "name": "str"},
      reads=("src",), writes=("dst",), produces=())
def build_move(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    skey, dkey = p["src"], p["dst"]
    dshape = cx.exprs(p["dshape"])
    is_param, owned, dname = p["param"], p["owned"], p["name"]

    def run(env: Any) -> None:
        arr, valid = (env.buf.get(skey) or env.get(skey))
        cur = env.buf.get(dkey)
        box = tuple([slice(0, v) for v in valid])
        if cur is None:
            full = tuple([f(env) for f in dshape])
            if tuple(valid) == tuple(full) and arr.shape == full:
                env.buf[dkey] = (arr.copy(), full)
                env.elements += arr.size
                if env.record:
                    env.geom = {"offsets": [0] * len(full), "value": arr, "valid": full}
                return
            cur = (env.poison(full, arr.dtype), full)
            env.buf[dkey] = cur
        darr = cur[0]
        if not owned:  # op outputs may share memory with a read-only argument: copy before writing
            darr = darr.copy()
            env.buf[dkey] = (darr, cur[1])
        if arr.shape != darr.shape and any(v > e for v, e in zip(valid, darr.shape, strict=False)):
            raise env.error("EMU_MOVE_SHAPE", f"move into '{dname}': source valid {list(valid)} exceeds "
                            f"destination shape {list(darr.shape)}")
        part = arr[box]
        if is_param:
            if env.options.check_poison:
                check_poison(env, part, dname)
            env.bytes_out += part.nbytes
        darr[box] = part
        env.wrote(dkey, box, darr)
        env.elements += part.size
        if env.record:
            env.geom = {"offsets": [0] * len(valid), "value": part, "valid": part.shape}

    return run, None


def _check_parallel_overlap(env: Any, node_id: object, shape: tuple, region: tuple, dname: str) -> None:
    """``assemble(..., parallel=True)`` promises non-overlapping writes: verify it (warning)."""
    masks = env.parallel_masks
    mask = masks.get(node_id)
    if mask is None or mask.shape != shape:
        mask = masks[node_id] = np.zeros(shape, dtype=bool)
    if mask[region].any():
        n = env.node
        env.warn("EMU_PARALLEL_OVERLAP", f"assemble(..., parallel=True) into '{dname}' writes a region "
                 "an earlier iteration already wrote: the parallel promise is false (write order "
                 "becomes undefined on the device)", file=n.file if n else None,
                 line=n.line if n else None, op="assemble")
    mask[region] = True


@kind("assemble", {"src": "key", "dst": "key", "offs": "exprs", "dshape": "exprs", "ddtype": "dtype",
                   "param": "bool", "owned": "bool", "name": "str", "parallel": "bool"},
      check=_same_len("offs", "dshape"), reads=("src",), writes=("dst",), produces=())
def build_assemble(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    skey, dkey = p["src"], p["dst"]
    offs = cx.exprs(p["offs"])
    dshape = cx.exprs(p["dshape"])
    ddtype = np_dtype(p["ddtype"])
    is_param, owned, dname, parallel = p["param"], p["owned"], p["name"], p["parallel"]
    store_bf16 = bool(p.get("store_bf16"))  # A2/A3 (`_promote`): a BF16 value held in FP32 is rounded here
    node_id = object()

    def run(env: Any) -> None:
        arr, valid = (env.buf.get(skey) or env.get(skey))
        o = [f(env) for f in offs]
        cur = env.buf.get(dkey)
        if cur is None:
            full = tuple(f(env) for f in dshape)
            cur = (env.poison(full, ddtype), full)
            env.buf[dkey] = cur
        darr = cur[0]
        if not owned:  # op outputs may share memory with a read-only argument: copy before writing
            darr = darr.copy()
            env.buf[dkey] = (darr, cur[1])
        ext = darr.shape
        sl = []
        for d in range(len(o)):
            if valid[d] > ext[d]:  # the data written alone exceed the destination (whatever the offset)
                raise env.error("EMU_ASSEMBLE_SIZE", f"assemble into '{dname}': source valid shape {tuple(valid)} is "
                                f"larger than the destination shape {tuple(ext)} on axis {d}")
            if o[d] < 0 or o[d] + valid[d] > ext[d]:
                raise env.error("EMU_ASSEMBLE_OOB", f"assemble into '{dname}': region [{o[d]}, {o[d] + valid[d]}) "
                                f"on axis {d} is outside the destination extent {ext[d]} (the device/oracle "
                                "rejects this: ASSEMBLEOpError)")
            sl.append(slice(o[d], o[d] + valid[d]))
        part = arr[tuple(slice(0, v) for v in valid)]
        if store_bf16:
            part = to_bf16(part)
        if is_param:
            if env.options.check_poison:
                check_poison(env, part, dname)
            env.bytes_out += part.nbytes
        if part.dtype != darr.dtype and not (store_bf16 and part.dtype == ddtype):
            raise env.error("EMU_ASSEMBLE_DTYPE", f"assemble into '{dname}': dtype {part.dtype} != {darr.dtype}")
        if parallel:
            _check_parallel_overlap(env, node_id, darr.shape, tuple(sl), dname)
        darr[tuple(sl)] = part
        env.wrote(dkey, tuple(sl), darr)
        env.elements += part.size
        if env.record:
            env.geom = {"offsets": o, "value": part, "valid": part.shape}

    return run, None


def reshape_valid(old: tuple, valid: tuple, new: tuple) -> tuple:
    """Valid shape through a reshape when the valid region is a row-major prefix, else full (padding flows)."""
    first = next((d for d in range(len(old)) if valid[d] != old[d]), None)
    if first is None:
        return new
    if any(old[d] != 1 for d in range(first)) or any(valid[d] != old[d] for d in range(first + 1, len(old))):
        return new
    n_valid = valid[first] * math.prod(old[first + 1:])
    for j in range(len(new) - 1, -1, -1):
        inner = math.prod(new[j + 1:])
        if n_valid % inner == 0 and n_valid // inner <= new[j] and all(new[k] == 1 for k in range(j)):
            return tuple(new[:j]) + (n_valid // inner,) + tuple(new[j + 1:])
    return new


@kind("reshape", {"src": "key", "out": "key", "shape": "exprs", "vs": "exprs?", "copy": "bool", "rank": "int"},
      check=_same_len("shape", "vs"), reads=("src",))
def build_reshape(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, Any]:
    key, okey = p["src"], p["out"]
    shp = cx.exprs(p["shape"])
    vs = cx.exprs(p["vs"]) if p["vs"] is not None else None
    copy, rank = p["copy"], p["rank"]

    def run(env: Any) -> None:
        arr, valid = (env.buf.get(key) or env.get(key))
        full = tuple([f(env) for f in shp])
        res = arr.reshape(full)
        if copy:
            res = res.copy()
        if vs is not None:
            v = tuple(f(env) for f in vs)
        elif tuple(valid) == arr.shape:
            v = full
        else:
            v = reshape_valid(arr.shape, valid, full)
        env.buf[okey] = (res, v)

    def brun(env: Any) -> None:
        arr = env.buf[key][0]
        full = tuple(f(env) for f in shp)
        lead = arr.shape[: arr.ndim - rank]
        env.buf[okey] = (arr.reshape(lead + full), None)

    return run, brun if vs is None else None


@kind("unsqueeze", {"src": "key", "out": "key", "dim": "int", "copy": "bool"}, reads=("src",))
def build_unsqueeze(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    key, okey, d, copy = p["src"], p["out"], p["dim"], p["copy"]

    def run(env: Any) -> None:
        arr, valid = (env.buf.get(key) or env.get(key))
        res = np.expand_dims(arr, d)
        env.buf[okey] = (res.copy() if copy else res, tuple(valid[:d]) + (1,) + tuple(valid[d:]))

    return run, None


@kind("clone", {"src": "key", "out": "key"}, reads=("src",))
def build_clone(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    key, okey = p["src"], p["out"]

    def run(env: Any) -> None:
        arr, valid = (env.buf.get(key) or env.get(key))
        env.buf[okey] = (arr.copy(), valid)

    return run, None


@kind("carry", {"src": "key", "dst": "key"}, reads=("src",), writes=("dst",), produces=())
def build_carry(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    """``dst`` now holds ``src``'s value - the same array and valid shape, padding included, nothing copied.

    Why: a Python ``range`` loop that carries a tensor in a name (``h = h / h.sum(...)``, mhc_sinkhorn's 19
    Sinkhorn steps) is traced once as a device loop (`_roll`); the value one iteration leaves in the name is the
    one the next reads, through ``dst``. Unrolled, the next iteration read the op output itself: ``dst`` is that
    same array (a second reference, so no op writes its result over it while another key still holds it -
    `_k_math.scratch`), so every op reads the same bits. Not a kernel op: not counted (`XOp.counted`)."""
    key, dkey = p["src"], p["dst"]

    def run(env: Any) -> None:
        arr, valid = (env.buf.get(key) or env.get(key))
        env.buf[dkey] = (arr, valid)

    return run, None


@kind("setitem", {"dst": "key", "shape": "exprs", "index": "exprs", "value": "expr"}, writes=("dst",),
      produces=())
def build_setitem(p: dict[str, Any], op: Any, cx: Any) -> tuple[Any, None]:
    key = p["dst"]
    shape = cx.exprs(p["shape"])
    keys = cx.exprs(p["index"])
    value = cx.expr(p["value"])
    i32 = np.dtype(np.int32)

    def run(env: Any) -> None:
        cur = env.buf.get(key)
        if cur is None:
            full = tuple(f(env) for f in shape)
            cur = (env.poison(full, i32), full)
            env.buf[key] = cur
        idx = tuple(f(env) for f in keys)
        cur[0][idx] = value(env)
        env.wrote(key, idx, cur[0])
        env.elements += 1

    return run, None
