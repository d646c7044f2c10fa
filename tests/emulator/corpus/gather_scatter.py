"""Indexing kernels, paged-KV style: index_select (1-D index and a block table over a 3-D cache), block
gathers driven by INT32 tensor reads (``t[i]`` as a runtime scalar, value-dependent loop bounds), torch
``gather``, ``scatter_update`` in both layouts (in place on its input, §0.6.4), ``index_add``
(spec §2.3, §4.5, §0.6.4)."""

import numpy as np
import pypto
from _emucorpus import EXACT, FP32, I32, KernelCase, rng, sentinel, single, uniform

V, DV = 64, 32


@pypto.frontend.jit
def index_select_rows(
    table: pypto.Tensor([V, DV], pypto.DT_FP32),
    idx: pypto.Tensor([8], pypto.DT_INT32),
    out: pypto.Tensor([8, DV], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, DV)
    out[:] = pypto.index_select(table, 0, idx)


def case_index_select_rows() -> KernelCase:
    r = rng(90)
    table = uniform(r, (V, DV))
    idx = r.integers(0, V, size=8).astype(I32)
    return single(index_select_rows, (table, idx, sentinel((8, DV))), {2: table[idx]}, EXACT,
                  spec="§4.5 index_select 1-D index")


NB, BS, KD = 16, 8, 32


@pypto.frontend.jit
def paged_kv_index_select(
    cache: pypto.Tensor([NB, BS, KD], pypto.DT_FP32),
    block_table: pypto.Tensor([4], pypto.DT_INT32),
    out: pypto.Tensor([4, BS, KD], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(4, BS, KD)
    out[:] = pypto.index_select(cache, 0, block_table)


def case_paged_kv_block_table_index_select() -> KernelCase:
    r = rng(91)
    cache = uniform(r, (NB, BS, KD))
    table = r.permutation(NB)[:4].astype(I32)
    return single(paged_kv_index_select, (cache, table, sentinel((4, BS, KD))), {2: cache[table]}, EXACT,
                  spec="§4.5 index_select over blocks (paged KV)")


@pypto.frontend.jit(runtime_options={"ready_on_host_tensors": ["block_table"]})
def paged_kv_scalar_reads(
    cache: pypto.Tensor([NB, BS, KD], pypto.DT_FP32),
    block_table: pypto.Tensor([pypto.DYNAMIC], pypto.DT_INT32),
    out: pypto.Tensor([pypto.DYNAMIC, KD], pypto.DT_FP32),
):
    nblk = block_table.shape[0]
    pypto.set_vec_tile_shapes(1, BS, KD)
    for i in pypto.loop(nblk, name="blocks", idx_name="bi"):
        blk = block_table[i]
        kv = pypto.view(cache, [1, BS, KD], [blk, 0, 0])
        pypto.set_vec_tile_shapes(BS, KD)
        pypto.assemble(pypto.reshape(kv, [BS, KD]), [i * BS, 0], out)


def case_paged_kv_gather_by_tensor_read_offsets() -> KernelCase:
    r = rng(92)
    cache = uniform(r, (NB, BS, KD))
    table = np.array([5, 0, 11, 5, 15], dtype=I32)
    ref = cache[table].reshape(-1, KD)
    return single(paged_kv_scalar_reads, (cache, table, sentinel(ref.shape)), {2: ref}, EXACT,
                  spec="§2.3 int-key read on INT32 -> runtime scalar used as view offset")


@pypto.frontend.jit(runtime_options={"ready_on_host_tensors": ["offsets"]})
def grouped_rows(
    x: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
    offsets: pypto.Tensor([4], pypto.DT_INT32),
    scales: pypto.Tensor([3, 32], pypto.DT_FP32),
    out: pypto.Tensor([pypto.DYNAMIC, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(1, 32)
    for e in pypto.loop(3, name="experts", idx_name="e"):
        start = offsets[e]
        stop = offsets[e + 1]
        for r in pypto.loop(start, stop, name="rows", idx_name="r"):
            row = pypto.view(x, [1, 32], [r, 0])
            sc = pypto.view(scales, [1, 32], [e, 0])
            pypto.assemble(row * sc, [r, 0], out)


def case_grouped_rows_value_dependent_loop_bounds() -> KernelCase:
    """Expert groups [0,4), [4,4) (empty: zero trips), [4,9): loop bounds read from an INT32 tensor."""
    r = rng(93)
    x, scales = uniform(r, (9, 32)), uniform(r, (3, 32))
    offsets = np.array([0, 4, 4, 9], dtype=I32)
    ref = np.empty_like(x)
    for e in range(3):
        ref[offsets[e]:offsets[e + 1]] = x[offsets[e]:offsets[e + 1]] * scales[e]
    return single(grouped_rows, (x, offsets, scales, sentinel(x.shape)), {3: ref}, EXACT,
                  spec="§2.3 tensor-read scalars as loop bounds, §3.1 zero-trip loop")


@pypto.frontend.jit
def gather_dim1(
    x: pypto.Tensor([8, 32], pypto.DT_FP32),
    idx: pypto.Tensor([8, 16], pypto.DT_INT32),
    out: pypto.Tensor([8, 16], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.gather(x, 1, idx)


def case_gather_dim1() -> KernelCase:
    r = rng(94)
    x = uniform(r, (8, 32))
    idx = r.integers(0, 32, size=(8, 16)).astype(I32)
    return single(gather_dim1, (x, idx, sentinel((8, 16))), {2: np.take_along_axis(x, idx, 1)}, EXACT,
                  spec="§4.5 gather (torch semantics)")


@pypto.frontend.jit
def scatter_update_2d(
    cache: pypto.Tensor([16, 32], pypto.DT_FP32),
    index: pypto.Tensor([2, 2], pypto.DT_INT32),
    src: pypto.Tensor([4, 32], pypto.DT_FP32),
    out: pypto.Tensor([16, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.scatter_update(cache, -2, index, src)


def case_scatter_update_2d_also_updates_input() -> KernelCase:
    r = rng(95)
    cache, src = uniform(r, (16, 32)), uniform(r, (4, 32))
    index = np.array([[3, 9], [0, 14]], dtype=I32)
    ref = cache.copy()
    for i in range(2):
        for j in range(2):
            ref[index[i, j]] = src[i * 2 + j]
    return single(scatter_update_2d, (cache, index, src, sentinel((16, 32))), {0: ref, 3: ref}, EXACT,
                  spec="§4.5 scatter_update form 2, §0.6.4 input updated in place")


PB, PBS, PD = 4, 8, 32


@pypto.frontend.jit
def scatter_update_paged_4d(
    kv_cache: pypto.Tensor([PB, PBS, 1, PD], pypto.DT_FP32),
    slots: pypto.Tensor([2, 3], pypto.DT_INT32),
    new_kv: pypto.Tensor([2, 3, 1, PD], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(2, 3, 1, PD)
    pypto.scatter_update(kv_cache, -2, slots, new_kv)


def case_scatter_update_paged_4d_bare_call() -> KernelCase:
    r = rng(96)
    cache, new = uniform(r, (PB, PBS, 1, PD)), uniform(r, (2, 3, 1, PD))
    slots = np.array([[0, 9, 17], [31, 8, 22]], dtype=I32)
    ref = cache.copy()
    for i in range(2):
        for j in range(3):
            s = slots[i, j]
            ref[s // PBS, s % PBS, 0, :] = new[i, j, 0, :]
    return single(scatter_update_paged_4d, (cache, slots, new), {0: ref}, EXACT,
                  spec="§4.5 scatter_update form 1 (paged KV cache), §0.6.4 bare call")


@pypto.frontend.jit
def index_add_rows(
    x: pypto.Tensor([8, 32], pypto.DT_FP32),
    idx: pypto.Tensor([4], pypto.DT_INT32),
    src: pypto.Tensor([4, 32], pypto.DT_FP32),
    out: pypto.Tensor([8, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    out[:] = pypto.index_add(x, 0, idx, src, alpha=2.0)


def case_index_add_with_repeated_index() -> KernelCase:
    r = rng(97)
    x, src = uniform(r, (8, 32)), uniform(r, (4, 32))
    idx = np.array([1, 5, 1, 7], dtype=I32)
    ref = x.astype(np.float64).copy()
    for k, i in enumerate(idx):
        ref[i] += 2.0 * src[k]
    return single(index_add_rows, (x, idx, src, sentinel((8, 32))), {3: ref.astype(np.float32)}, FP32,
                  spec="§4.5 index_add (torch semantics, alpha)")


@pypto.frontend.jit
def scatter_nd_sub(
    var: pypto.Tensor([16, 32], pypto.DT_FP32),
    indices: pypto.Tensor([6], pypto.DT_INT32),
    updates: pypto.Tensor([6, 32], pypto.DT_FP32),
):
    pypto.set_vec_tile_shapes(8, 32)
    pypto.index_put_(var, (indices,), pypto.neg(updates), accumulate=True)


def case_index_put_accumulate_mutates_input() -> KernelCase:
    """gym ScatterNdSub: var[indices] -= updates in place, repeated indices accumulate (torch semantics)."""
    r = rng(98)
    var, upd = uniform(r, (16, 32)), uniform(r, (6, 32))
    idx = np.array([3, 0, 3, 15, 7, 3], dtype=I32)
    ref = var.astype(np.float64).copy()
    np.subtract.at(ref, idx, upd.astype(np.float64))
    return single(scatter_nd_sub, (var, idx, upd), {0: ref.astype(np.float32)}, FP32,
                  spec="§4.3 index_put_(accumulate=True) mutates its (input) argument")
