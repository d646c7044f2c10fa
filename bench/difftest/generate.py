"""Generator of small random PyPTO kernels for differential testing (emulator vs the real pypto 0.2.0).

Each kernel is a standalone script with one ``@pypto.frontend.jit`` kernel and a ``run()`` that builds seeded
numpy inputs and calls it once. Kernels mix:

* ops: unary (exp, sqrt, abs, rsqrt, reciprocal, sigmoid, relu), binary (add, sub, mul, div, maximum,
  minimum), scalar forms (``x + 1.5``), reductions (sum / amax over the last axis), casts, matmul;
* shapes: rank 2 or 3, extents from a small menu, fp32 / fp16 / bf16, same-shape or one-axis broadcast
  (sometimes two axes: the 0.2.0 frontend rejects that);
* tiles: a correct ``set_vec_tile_shapes`` most of the time, sometimes missing, of the wrong rank or with an
  unaligned last axis; cube tiles for matmul, sometimes with ``L1 % L0 != 0``;
* structure: whole-tensor ``out[:] = expr``, a row loop with ``view``/``assemble`` (with a ``valid_shape``
  tail), or ``loop_unroll``; sometimes a known-illegal construct (symbolic view shape, read of an unwritten
  tensor, ``int(i)``).

Usage: ``python bench/difftest/generate.py OUT_DIR --count 200 --seed 0`` (deterministic per seed).
"""

from __future__ import annotations

import argparse
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

DTYPES = {"fp32": ("pypto.DT_FP32", "np.float32", 4), "fp16": ("pypto.DT_FP16", "np.float16", 2),
          "bf16": ("pypto.DT_BF16", "ml_dtypes.bfloat16", 2)}
UNARY = ["exp", "sqrt", "abs", "rsqrt", "reciprocal", "sigmoid", "relu"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum"]
SCALAR = [("+", "1.5"), ("*", "0.5"), ("-", "0.25")]
EXTENTS = [1, 4, 8, 13, 16, 24, 32, 48, 64]


@dataclass
class Kernel:
    name: str
    source: str
    features: list[str] = field(default_factory=list)


def _expr(rng: random.Random, leaves: list[str], depth: int, feats: list[str]) -> str:
    """A random expression over ``leaves`` (positive inputs: sqrt/rsqrt/div stay finite)."""
    if depth <= 0 or rng.random() < 0.25:
        return rng.choice(leaves)
    kind = rng.random()
    if kind < 0.4:
        op = rng.choice(UNARY)
        feats.append(f"unary:{op}")
        return f"pypto.{op}({_expr(rng, leaves, depth - 1, feats)})"
    if kind < 0.8 and len(leaves) > 1:
        op = rng.choice(BINARY)
        feats.append(f"binary:{op}")
        return f"pypto.{op}({_expr(rng, leaves, depth - 1, feats)}, {_expr(rng, leaves, depth - 1, feats)})"
    sym, val = rng.choice(SCALAR)
    feats.append(f"scalar:{sym}")
    return f"({_expr(rng, leaves, depth - 1, feats)} {sym} {val})"


def _tile(rng: random.Random, shape: list[int], itemsize: int, feats: list[str], *, reduce: bool) -> str | None:
    """A vector tile call: usually right, sometimes missing / wrong rank / unaligned last axis."""
    r = rng.random()
    align = 32 // itemsize
    if r < 0.06:
        feats.append("tile:missing")
        return None
    tile = [min(s, rng.choice([1, 2, 4, 8, 16])) for s in shape[:-1]]
    last = shape[-1]
    lt = max(align, ((last + align - 1) // align) * align) if rng.random() < 0.8 else last
    if r < 0.14 and len(shape) > 1:
        feats.append("tile:low_rank")
        return f"pypto.set_vec_tile_shapes({lt})"
    if r < 0.24:
        bad = rng.choice([3, 5, 6, 12])
        feats.append("tile:unaligned_last" + (":reduce" if reduce else ""))
        lt = bad
    if lt * itemsize % 32:
        feats.append("tile:unaligned_last" + (":reduce" if reduce else ""))
    return f"pypto.set_vec_tile_shapes({', '.join(str(t) for t in [*tile, lt])})"


def _shape(rng: random.Random) -> list[int]:
    rank = rng.choice([2, 2, 2, 3])
    shape = [rng.choice(EXTENTS) for _ in range(rank)]
    shape[-1] = rng.choice([8, 16, 32, 64, 13, 48])
    return shape


def _np_input(name: str, shape: list[int], np_dt: str, lo: float = 0.5, hi: float = 2.0) -> str:
    return f"    {name} = rng.uniform({lo}, {hi}, {tuple(shape)}).astype({np_dt})"


HEADER = "import ml_dtypes\nimport numpy as np\nimport pypto\n\n"


def _elementwise(rng: random.Random, idx: int) -> Kernel:
    feats: list[str] = []
    dt = rng.choice(["fp32", "fp32", "fp16", "bf16"])
    pdt, npdt, size = DTYPES[dt]
    feats.append(f"dtype:{dt}")
    shape = _shape(rng)
    feats.append(f"rank:{len(shape)}")
    bshape = list(shape)
    b = rng.random()
    if b < 0.2:
        bshape[-1] = 1
        feats.append("bcast:last")
    elif b < 0.35:
        bshape[0] = 1
        feats.append("bcast:first")
    elif b < 0.42 and len(shape) == 3:
        bshape[0] = bshape[1] = 1
        feats.append("bcast:two_axes")
    reduce = rng.random() < 0.25
    red_op = rng.choice(["sum", "amax"])
    oshape = list(shape)
    if reduce:
        oshape[-1] = 1
        feats.append(f"reduce:{red_op}")
    cast_out = rng.random() < 0.15 and dt != "fp32"
    odt = "fp32" if cast_out else dt
    expr = _expr(rng, ["a", "b"], rng.randint(1, 3), feats)
    if reduce:
        expr = f"pypto.{red_op}({expr}, -1, keepdim=True)"
    if cast_out:
        expr = f"pypto.cast({expr}, pypto.DT_FP32)"
        feats.append("cast:out_fp32")
    tile = _tile(rng, shape, size, feats, reduce=reduce)
    body = [f"    {tile}"] if tile else []
    structure = rng.random()
    if structure < 0.45 or shape[0] < 2 or bshape[0] != shape[0]:
        feats.append("struct:whole")
        body.append(f"    out[:] = {expr}")
    elif structure < 0.85:
        tr = rng.choice([2, 4, 8, 16])
        trips = (shape[0] + tr - 1) // tr
        rest = shape[1:]
        feats.append("struct:row_loop" + (":tail" if shape[0] % tr else ""))
        zeros = ", 0" * (len(shape) - 1)
        sub = _rename(expr)
        valid = ""
        if shape[0] % tr:
            valid = f", valid_shape=[(({shape[0]} - i * {tr})).min({tr}){''.join(', ' + str(r) for r in rest)}]"
        body.append(f"    for i in pypto.loop({trips}, name=\"rows\", idx_name=\"i\"):")
        if rng.random() < 0.05:
            feats.append("illegal:symbolic_view_shape")
            body.append(f"        ta = pypto.view(a, [i + 1{''.join(', ' + str(r) for r in rest)}], [i * {tr}{zeros}])")
        else:
            body.append(f"        ta = pypto.view(a, [{tr}{''.join(', ' + str(r) for r in rest)}], [i * {tr}{zeros}]{valid})")
        body.append(f"        tb = pypto.view(b, [{tr}{''.join(', ' + str(r) for r in bshape[1:])}], [i * {tr}{zeros}]{valid})")
        body.append(f"        pypto.assemble({sub}, [i * {tr}{zeros}], out)")
    else:
        feats.append("struct:loop_unroll")
        rest = shape[1:]
        zeros = ", 0" * (len(shape) - 1)
        body.append(f"    for i, f in pypto.loop_unroll(0, {shape[0]}, 1, name=\"rows\", idx_name=\"i\", unroll_list=[4]):")
        body.append(f"        ta = pypto.view(a, [f{''.join(', ' + str(r) for r in rest)}], [i{zeros}])")
        body.append(f"        tb = pypto.view(b, [f{''.join(', ' + str(r) for r in bshape[1:])}], [i{zeros}])")
        sub = _rename(expr)
        body.append(f"        pypto.assemble({sub}, [i{zeros}], out)")
    if rng.random() < 0.04:
        feats.append("illegal:unwritten_tensor")
        body.insert(1 if tile else 0, f"    u = pypto.tensor({shape}, {pdt})")
        body.append("    out[:] = pypto.add(out, u)" if not reduce else "    out[:] = pypto.sum(u, -1, keepdim=True)")
    opdt = DTYPES[odt][0]
    onpdt = DTYPES[odt][1]
    src = HEADER + "\n@pypto.frontend.jit\n"
    src += (f"def kernel(a: pypto.Tensor({shape}, {pdt}), b: pypto.Tensor({bshape}, {pdt}),\n"
            f"           out: pypto.Tensor({oshape}, {opdt})):\n")
    src += "\n".join(body) + "\n\n\n"
    src += f"def run():\n    rng = np.random.default_rng({idx})\n"
    src += _np_input("a", shape, npdt) + "\n" + _np_input("b", bshape, npdt) + "\n"
    src += f"    out = np.zeros({tuple(oshape)}, {onpdt})\n    kernel(a, b, out)\n"
    return Kernel(f"k{idx:04d}_elementwise", src, feats)


def _rename(expr: str) -> str:
    """Rename the leaves ``a``/``b`` of an expression to the loop tiles ``ta``/``tb`` (token-wise)."""
    return re.sub(r"\b([ab])\b", lambda m: "t" + m.group(1), expr)


def _matmul(rng: random.Random, idx: int) -> Kernel:
    feats = ["op:matmul"]
    dt = rng.choice(["fp32", "fp16", "bf16"])
    pdt, npdt, size = DTYPES[dt]
    feats.append(f"dtype:{dt}")
    m, k, n = rng.choice([16, 32, 64]), rng.choice([16, 32, 64]), rng.choice([16, 32, 64])
    out_dt = "fp32" if dt == "fp32" or rng.random() < 0.7 else dt
    r = rng.random()
    body = []
    if r < 0.1:
        feats.append("cube:missing")
    else:
        kl0 = rng.choice([16, 32])
        kl1 = kl0 * rng.choice([1, 2])
        if r < 0.22:
            kl1 = kl0 + 16
            feats.append("cube:l1_not_multiple")
        body.append(f"    pypto.set_cube_tile_shapes([{m}, {m}], [{kl0}, {kl1}], [{n}, {n}])")
    body.insert(0, f"    pypto.set_vec_tile_shapes({min(m, 16)}, {n})")
    bias = rng.random() < 0.3
    expr = f"pypto.matmul(a, b, {DTYPES[out_dt][0]})"
    if bias:
        feats.append("epilogue:add_bias")
        expr = f"pypto.add({expr}, c)"
    if rng.random() < 0.3:
        feats.append("epilogue:relu")
        expr = f"pypto.relu({expr})"
    body.append(f"    out[:] = {expr}")
    odt_p, odt_np = DTYPES[out_dt][0], DTYPES[out_dt][1]
    src = HEADER + "\n@pypto.frontend.jit\n"
    src += (f"def kernel(a: pypto.Tensor([{m}, {k}], {pdt}), b: pypto.Tensor([{k}, {n}], {pdt}),\n"
            f"           c: pypto.Tensor([1, {n}], {odt_p}), out: pypto.Tensor([{m}, {n}], {odt_p})):\n")
    src += "\n".join(body) + "\n\n\n"
    src += f"def run():\n    rng = np.random.default_rng({idx})\n"
    src += _np_input("a", [m, k], npdt, -1.0, 1.0) + "\n" + _np_input("b", [k, n], npdt, -1.0, 1.0) + "\n"
    src += _np_input("c", [1, n], odt_np, -1.0, 1.0) + "\n"
    src += f"    out = np.zeros(({m}, {n}), {odt_np})\n    kernel(a, b, c, out)\n"
    return Kernel(f"k{idx:04d}_matmul", src, feats)


def generate(count: int, seed: int = 0) -> list[Kernel]:
    """``count`` kernels, deterministic for a seed (kernel i uses its own sub-seed)."""
    out = []
    for i in range(count):
        rng = random.Random(seed * 1_000_003 + i)
        out.append(_matmul(rng, i) if rng.random() < 0.2 else _elementwise(rng, i))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for k in generate(args.count, args.seed):
        (args.out / f"{k.name}.py").write_text(k.source)
    print(f"wrote {args.count} kernels to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
