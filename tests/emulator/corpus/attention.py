"""Attention: the §9.7 scaled-dot-product attention (b_trans, softmax, two matmuls) and a flash-attention
kernel with online softmax over a dynamic KV length, tail blocks through valid_shape and
is_loop_begin/is_loop_end accumulators held in local tensors (spec §3.3, §4.1, §5.8, §9.7)."""

import numpy as np
import pypto
from _emucorpus import F32, Call, KernelCase, Tol, rng, sentinel, single, uniform

ATT = Tol(2e-5, 1e-4)

BH, SQ, DH = 4, 64, 32


@pypto.frontend.jit
def sdpa(
    q: pypto.Tensor([BH, SQ, DH], pypto.DT_FP32),
    k: pypto.Tensor([BH, SQ, DH], pypto.DT_FP32),
    v: pypto.Tensor([BH, SQ, DH], pypto.DT_FP32),
    out: pypto.Tensor([BH, SQ, DH], pypto.DT_FP32),
    scale: float,
):
    for h in pypto.loop(BH, name="heads", idx_name="h"):
        pypto.set_cube_tile_shapes([32, 64], [32, 32], [32, 64])
        pypto.set_vec_tile_shapes(1, SQ, SQ)
        qt = q[h:h + 1, :, :]
        kt = k[h:h + 1, :, :]
        vt = v[h:h + 1, :, :]
        scores = pypto.matmul(qt, kt, pypto.DT_FP32, b_trans=True) * scale
        p = pypto.softmax(scores, -1)
        pypto.set_cube_tile_shapes([32, 64], [32, 64], [32, 32])
        o = pypto.matmul(p, vt, pypto.DT_FP32)
        out[h:h + 1, :, :] = o


def _attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float) -> np.ndarray:
    q64, k64, v64 = (t.astype(np.float64) for t in (q, k, v))
    s = np.matmul(q64, np.swapaxes(k64, -1, -2)) * scale
    e = np.exp(s - s.max(-1, keepdims=True))
    return np.matmul(e / e.sum(-1, keepdims=True), v64)


def case_sdpa_reference_9_7() -> KernelCase:
    r = rng(50)
    q, k, v = (uniform(r, (BH, SQ, DH), -2, 2) for _ in range(3))
    scale = 1.0 / np.sqrt(DH)
    return single(sdpa, (q, k, v, sentinel((BH, SQ, DH))), {3: _attention(q, k, v, scale).astype(F32)}, ATT,
                  kwargs={"scale": float(scale)}, spec="§9.7 attention example")


QR, FD, BLK = 32, 64, 32


@pypto.frontend.jit
def flash_attention(
    q: pypto.Tensor([QR, FD], pypto.DT_FP32),
    k: pypto.Tensor([pypto.DYNAMIC, FD], pypto.DT_FP32),
    v: pypto.Tensor([pypto.DYNAMIC, FD], pypto.DT_FP32),
    out: pypto.Tensor([QR, FD], pypto.DT_FP32),
    scale: float,
):
    skv = k.shape[0]
    pypto.set_vec_tile_shapes(QR, BLK)
    m = pypto.tensor([QR, 1], pypto.DT_FP32, "m")
    lsum = pypto.tensor([QR, 1], pypto.DT_FP32, "lsum")
    acc = pypto.tensor([QR, FD], pypto.DT_FP32, "acc")
    for j in pypto.loop((skv + BLK - 1) // BLK, name="kv", idx_name="j"):
        valid = (skv - j * BLK).min(BLK)
        kt = pypto.view(k, [BLK, FD], [j * BLK, 0], valid_shape=[valid, FD])
        vt = pypto.view(v, [BLK, FD], [j * BLK, 0], valid_shape=[valid, FD])
        pypto.set_cube_tile_shapes([32, 32], [64, 64], [32, 32])
        s = pypto.matmul(q, kt, pypto.DT_FP32, b_trans=True) * scale
        bmax = pypto.amax(s, -1, keepdim=True)
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [64, 64])
        if pypto.is_loop_begin(j):
            p = pypto.exp(s - bmax)
            lsum[:] = pypto.sum(p, -1, keepdim=True)
            acc[:] = pypto.matmul(p, vt, pypto.DT_FP32)
            m[:] = bmax
        else:
            m_new = pypto.maximum(m, bmax)
            alpha = pypto.exp(m - m_new)
            p = pypto.exp(s - m_new)
            lsum[:] = lsum * alpha + pypto.sum(p, -1, keepdim=True)
            acc[:] = acc * alpha + pypto.matmul(p, vt, pypto.DT_FP32)
            m[:] = m_new
        if pypto.is_loop_end(j):
            out[:] = acc / lsum


def _flash_call(seed: int, skv: int) -> Call:
    r = rng(seed)
    q, k, v = uniform(r, (QR, FD), -1, 1), uniform(r, (skv, FD), -1, 1), uniform(r, (skv, FD), -1, 1)
    scale = 1.0 / np.sqrt(FD)
    ref = _attention(q, k, v, scale).astype(F32)
    return Call(flash_attention, (q, k, v, sentinel((QR, FD))), {3: ref}, ATT, {"scale": float(scale)})


def case_flash_attention_online_softmax_tail() -> KernelCase:
    """80 keys = 2 full blocks + a 16-key tail (padding must not enter max, sum or P@V); then 64 keys."""
    return KernelCase(calls=[_flash_call(51, 80), _flash_call(52, 64)],
                      spec="§3.3 accumulators, §4.1 valid_shape through matmul/reductions")


def case_flash_attention_single_short_block() -> KernelCase:
    """7 keys: one partial block, begin and end in the same iteration."""
    return KernelCase(calls=[_flash_call(53, 7)], spec="§3.3 begin == end")


PNB, PBS, PHD, PQ = 12, 16, 64, 8


@pypto.frontend.jit(runtime_options={"ready_on_host_tensors": ["block_table", "ctx_len"]})
def paged_decode_attention(
    q: pypto.Tensor([PQ, PHD], pypto.DT_FP32),
    k_cache: pypto.Tensor([PNB * PBS, PHD], pypto.DT_FP32),
    v_cache: pypto.Tensor([PNB * PBS, PHD], pypto.DT_FP32),
    block_table: pypto.Tensor([PNB], pypto.DT_INT32),
    ctx_len: pypto.Tensor([1], pypto.DT_INT32),
    out: pypto.Tensor([PQ, PHD], pypto.DT_FP32),
    scale: float,
):
    seq_len = ctx_len[0]
    pypto.set_vec_tile_shapes(PQ, PBS)
    m = pypto.tensor([PQ, 1], pypto.DT_FP32, "m")
    lsum = pypto.tensor([PQ, 1], pypto.DT_FP32, "lsum")
    acc = pypto.tensor([PQ, PHD], pypto.DT_FP32, "acc")
    for j in pypto.loop((seq_len + PBS - 1) // PBS, name="blocks", idx_name="j"):
        blk = block_table[j]
        valid = (seq_len - j * PBS).min(PBS)
        kb = pypto.view(k_cache, [PBS, PHD], [blk * PBS, 0], valid_shape=[valid, PHD])
        vb = pypto.view(v_cache, [PBS, PHD], [blk * PBS, 0], valid_shape=[valid, PHD])
        pypto.set_cube_tile_shapes([16, 16], [64, 64], [16, 16])
        s = pypto.matmul(q, kb, pypto.DT_FP32, b_trans=True) * scale
        bmax = pypto.amax(s, -1, keepdim=True)
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [64, 64])
        if pypto.is_loop_begin(j):
            p = pypto.exp(s - bmax)
            lsum[:] = pypto.sum(p, -1, keepdim=True)
            acc[:] = pypto.matmul(p, vb, pypto.DT_FP32)
            m[:] = bmax
        else:
            m_new = pypto.maximum(m, bmax)
            alpha = pypto.exp(m - m_new)
            p = pypto.exp(s - m_new)
            lsum[:] = lsum * alpha + pypto.sum(p, -1, keepdim=True)
            acc[:] = acc * alpha + pypto.matmul(p, vb, pypto.DT_FP32)
            m[:] = m_new
        if pypto.is_loop_end(j):
            out[:] = acc / lsum


def case_paged_decode_attention_block_table() -> KernelCase:
    """Context of 45 tokens in blocks [7, 2, 11] (last block 13 valid of 16); block ids and the length are
    runtime tensor reads; unused cache blocks hold garbage that must not leak in."""
    r = rng(54)
    q = uniform(r, (PQ, PHD))
    kc, vc = uniform(r, (PNB * PBS, PHD)), uniform(r, (PNB * PBS, PHD))
    table = np.array([7, 2, 11] + [0] * (PNB - 3), dtype=np.int32)
    ctx = np.array([45], dtype=np.int32)
    rows = np.array([table[t // PBS] * PBS + t % PBS for t in range(45)])
    scale = 1.0 / np.sqrt(PHD)
    ref = _attention(q, kc[rows], vc[rows], scale).astype(F32)
    return single(paged_decode_attention, (q, kc, vc, table, ctx, sentinel((PQ, PHD))), {5: ref}, ATT,
                  kwargs={"scale": float(scale)}, spec="paged KV: tensor-read block ids and length, tail block")
