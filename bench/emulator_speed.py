"""Emulator speed vs the numpy golden, at realistic sizes (>= 1M elements, >= 256 tiles per kernel).

Prints, per kernel: numpy golden time, emulator time (trace + execution), the ratio, trace+graph build time
and traced op count, and the peak traced memory (tracemalloc) of each side. Run:
`.venv/bin/python bench/emulator_speed.py [--repeat N]`. Target: emulator <= 20x numpy, trace <= 50 ms for
<= 200 traced ops.
"""


import argparse
import os
import time
import tracemalloc

# one BLAS thread for both sides: a fair, stable comparison on a shared 2-core machine
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import runtime.emulator as emu  # noqa: E402

pypto = emu.install()
F32 = np.float32

# -- elementwise: out = x * y + x over [4096, 256] fp32, 256 row tiles of [16, 256] -------------------
R, C, TR = 4096, 256, 16


@pypto.frontend.jit
def elementwise(x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32),
                out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(TR, C)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, TR)):
        v = (n - i * TR).min(TR)
        a = pypto.view(x, [TR, C], [i * TR, 0], valid_shape=[v, C])
        b = pypto.view(y, [TR, C], [i * TR, 0], valid_shape=[v, C])
        pypto.assemble(a * b + a, [i * TR, 0], out)


def g_elementwise(x, y):
    return x * y + x


# -- reduction: RMSNorm rows of [4096, 256] fp32 --------------------------------------------------------


@pypto.frontend.jit
def reduction(x: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, C], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(TR, C)
    n = x.shape[0]
    for i in pypto.loop(pypto.ceildiv(n, TR)):
        v = (n - i * TR).min(TR)
        a = pypto.view(x, [TR, C], [i * TR, 0], valid_shape=[v, C])
        ms = pypto.sum(a * a, -1, keepdim=True) * (1.0 / C)
        pypto.assemble(a * pypto.rsqrt(ms + 1e-6), [i * TR, 0], out)


def g_reduction(x):
    ms = (x * x).sum(-1, keepdims=True) * F32(1.0 / C)
    return x / np.sqrt(ms + F32(1e-6))


# -- matmul: [1024, 1024] @ [1024, 1024] fp32, 16 x 16 = 256 output tiles of [64, 64] ----------------------
MM, MT = 1024, 64


@pypto.frontend.jit
def matmul(a: pypto.Tensor([MM, MM], pypto.DT_FP32), b: pypto.Tensor([MM, MM], pypto.DT_FP32),
           c: pypto.Tensor([MM, MM], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([64, 64], [64, 256], [64, 64])
    for i in pypto.loop(MM // MT):
        at = pypto.view(a, [MT, MM], [i * MT, 0])
        for j in pypto.loop(MM // MT):
            bt = pypto.view(b, [MM, MT], [0, j * MT])
            pypto.assemble(pypto.matmul(at, bt, pypto.DT_FP32), [i * MT, j * MT], c)


def g_matmul(a, b):
    return a @ b


# -- attention: 32 heads x 512 x 64 (1M elements per q/k/v), 8 query blocks per head = 256 tiles ---------
NH, S, D, QB = 32, 512, 64, 64


@pypto.frontend.jit
def attention(q: pypto.Tensor([NH, S, D], pypto.DT_FP32), k: pypto.Tensor([NH, S, D], pypto.DT_FP32),
              v: pypto.Tensor([NH, S, D], pypto.DT_FP32), o: pypto.Tensor([NH, S, D], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    for h in pypto.loop(NH):
        kh = pypto.reshape(pypto.view(k, [1, S, D], [h, 0, 0]), [S, D], inplace=True)
        vh = pypto.reshape(pypto.view(v, [1, S, D], [h, 0, 0]), [S, D], inplace=True)
        for qb in pypto.loop(S // QB):
            qt = pypto.reshape(pypto.view(q, [1, QB, D], [h, qb * QB, 0]), [QB, D], inplace=True)
            s = pypto.matmul(qt, kh, pypto.DT_FP32, b_trans=True)
            pypto.set_vec_tile_shapes(QB, S)
            p = pypto.softmax(s * (1.0 / D ** 0.5), -1)
            ot = pypto.matmul(p, vh, pypto.DT_FP32)
            pypto.assemble(pypto.reshape(ot, [1, QB, D], inplace=True), [h, qb * QB, 0], o)


def g_attention(q, k, v):
    s = q @ np.swapaxes(k, -1, -2) * F32(1.0 / D ** 0.5)
    s = np.exp(s - s.max(-1, keepdims=True))
    return (s / s.sum(-1, keepdims=True)) @ v


# -- flash attention (online softmax, is_loop_begin/end accumulators): loop-carried, never batched ------
FH, FS, FB = 16, 1024, 64


@pypto.frontend.jit
def flash(q: pypto.Tensor([FH, FS, D], pypto.DT_FP32), k: pypto.Tensor([FH, FS, D], pypto.DT_FP32),
          v: pypto.Tensor([FH, FS, D], pypto.DT_FP32), o: pypto.Tensor([FH, FS, D], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([64, 64], [64, 64], [64, 64])
    m_acc = pypto.tensor([FS, 1], pypto.DT_FP32, "m_acc")
    l_acc = pypto.tensor([FS, 1], pypto.DT_FP32, "l_acc")
    o_acc = pypto.tensor([FS, D], pypto.DT_FP32, "o_acc")
    for h in pypto.loop(FH):
        qh = pypto.reshape(pypto.view(q, [1, FS, D], [h, 0, 0]), [FS, D], inplace=True)
        for j in pypto.loop(FS // FB):
            kt = pypto.reshape(pypto.view(k, [1, FB, D], [h, j * FB, 0]), [FB, D], inplace=True)
            vt = pypto.reshape(pypto.view(v, [1, FB, D], [h, j * FB, 0]), [FB, D], inplace=True)
            pypto.set_vec_tile_shapes(64, 64)
            s = pypto.matmul(qh, kt, pypto.DT_FP32, b_trans=True) * (1.0 / D ** 0.5)
            m_new = pypto.amax(s, -1, keepdim=True)
            if pypto.is_loop_begin(j):
                p = pypto.exp(s - m_new)
                l_acc[:] = pypto.sum(p, -1, keepdim=True)
                o_acc[:] = pypto.matmul(p, vt, pypto.DT_FP32)
                m_acc[:] = m_new
            else:
                m2 = pypto.maximum(m_acc, m_new)
                alpha = pypto.exp(m_acc - m2)
                p = pypto.exp(s - m2)
                l_acc[:] = l_acc * alpha + pypto.sum(p, -1, keepdim=True)
                o_acc[:] = o_acc * alpha + pypto.matmul(p, vt, pypto.DT_FP32)
                m_acc[:] = m2
            if pypto.is_loop_end(j):
                pypto.assemble(pypto.reshape(o_acc / l_acc, [1, FS, D], inplace=True), [h, 0, 0], o)


@pypto.frontend.jit
def trace200(x: pypto.Tensor([64, 256], pypto.DT_FP32), out: pypto.Tensor([64, 256], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 64)
    for i in pypto.loop(4):
        for c in range(4):
            for _r in range(10):
                t = pypto.view(x, [16, 64], [i * 16, c * 64])
                t = pypto.exp(t) * 2.0 + 1.0
                pypto.assemble(t, [i * 16, c * 64], out)


def _cases(rng):
    x, y = (rng.standard_normal((R, C)).astype(F32) for _ in range(2))
    a, b = (rng.standard_normal((MM, MM)).astype(F32) for _ in range(2))
    q, k, v = (rng.standard_normal((NH, S, D)).astype(F32) for _ in range(3))
    return [
        ("elementwise", elementwise, (x, y), g_elementwise),
        ("reduction", reduction, (x,), g_reduction),
        ("matmul", matmul, (a, b), g_matmul),
        ("attention", attention, (q, k, v), g_attention),
        ("flash(seq)", flash, tuple(rng.standard_normal((FH, FS, D)).astype(F32) for _ in range(3)), g_attention),
    ]


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _peak(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'kernel':<12} {'numpy ms':>9} {'emu ms':>9} {'ratio':>7} {'trace ms':>9} {'ops':>5} {'tiles':>6} "
          f"{'np MiB':>7} {'emu MiB':>8}  max|diff|")
    worst = 0.0
    for name, kern, ins, gold in _cases(rng):
        out = np.zeros_like(gold(*ins))

        def run_emu(kern=kern, ins=ins, out=out):
            kern(*ins, out)

        def run_np(gold=gold, ins=ins):
            gold(*ins)

        t_np = _best(run_np, args.repeat)
        t_emu = _best(run_emu, args.repeat)
        t_tr = _best(lambda kern=kern, ins=ins, out=out: kern.trace(*ins, out), args.repeat)
        n_ops = kern.trace(*ins, out).count_ops()
        with emu.session() as s:
            run_emu()
        diff = float(np.abs(out - gold(*ins)).max())
        m_np, m_emu = _peak(run_np), _peak(run_emu)
        ratio = t_emu / t_np
        worst = max(worst, ratio)
        print(f"{name:<12} {t_np * 1e3:9.2f} {t_emu * 1e3:9.2f} {ratio:6.1f}x {t_tr * 1e3:9.2f} {n_ops:5d} "
              f"{s.counters.tiles:6d} {m_np:7.1f} {m_emu:8.1f}  {diff:.2e}")
    print(f"worst ratio {worst:.1f}x (target <= 20x)")
    x, o = rng.standard_normal((64, 256)).astype(F32), np.zeros((64, 256), F32)
    traced = trace200.trace(x, o)
    t_tr = _best(lambda: trace200.trace(x, o), args.repeat)
    print(f"trace+graph build of a {traced.count_ops()}-op kernel: {t_tr * 1e3:.1f} ms (target <= 50 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
