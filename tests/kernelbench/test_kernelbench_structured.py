"""Tasks with structured integer inputs (offsets, block tables, lengths tied to a shape, indices): the import writes
a ``make_inputs`` that takes them from the task's own ``get_inputs()`` seeded from the case seed, and draws the
float inputs per value band, so that verification's unseen seeds still give unseen float values.

Small synthetic task files for each kind of input, then the three real tasks of ../shared/kernelbench that need it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_kernelbench_import import SHARED, needs_corpus, needs_torch  # one place says where the corpus is

from orchestrator.adapters.kernelbench import TaskImportError, import_task
from runtime.opdir import intake, load_op_dir, run_golden
from runtime.opdir._cases import Case

pytestmark = [pytest.mark.slow, needs_torch]


def _task(tmp_path: Path, name: str, forward: str, inputs: str, *, formula: str = "out[b, d] = f(x[b, d])",
          dynamic: str = "['B']", head: str = "") -> Path:
    path = tmp_path / name
    path.write_text(f"import torch\nimport torch.nn as nn\n{head}\nFORMULA = {formula!r}\nDYNAMIC_AXIS = {dynamic}\n\n"
                    "class Model(nn.Module):\n" + forward + "\n\ndef get_inputs():\n" + inputs
                    + "\n\ndef get_init_inputs():\n    return []\n", encoding="utf-8")
    return path


def _with_seed(case: Case, seed: int) -> Case:
    """The same case under another (unseen) seed, as verification draws them."""
    return case.model_copy(update={"seed": seed, "name": f"{case.name}-unseen{seed}"})


def _assert_seeds_vary_floats_keep_structure(op_dir: Path, kept: list[str]) -> tuple[list[np.ndarray], ...]:
    """Same seed: same bytes; another seed: the same shapes and dtypes, other float values (every float input)."""
    op = load_op_dir(op_dir)
    case = op.cases()[0]
    a, again, b = op.make_inputs(case), op.make_inputs(case), op.make_inputs(_with_seed(case, 987654))
    names = [t.name for t in op.spec.inputs]
    for name, x, y, z in zip(names, a, again, b):
        assert x.tobytes() == y.tobytes(), f"{name}: not deterministic for one seed"
        assert (x.dtype, x.shape) == (z.dtype, z.shape), name
        if name not in kept:
            assert x.tobytes() != z.tobytes(), f"{name}: a float input that ignores the seed"
    return a, b


SEGMENTS = ("    def forward(self, x, offsets):\n"
            "        return torch.stack([x[offsets[i]:offsets[i + 1]].sum(0) for i in range(offsets.shape[0] - 1)])")


def test_sorted_offsets_come_from_get_inputs_and_the_shapes_are_the_tasks(tmp_path: Path) -> None:
    task = _task(tmp_path, "1_Segments.py", SEGMENTS,
                 "    return [torch.randn(23, 8), torch.tensor([0, 5, 12, 20, 23], dtype=torch.int32)]")
    rep = import_task(task, tmp_path / "op")
    assert rep.dynamic_axes == [] and rep.p0_shapes == [{"B": 23, "D": 8}]
    why = [u for u in rep.unmapped if u.startswith("shapes not varied")]
    assert len(why) == 1 and "offsets is a sorted integer vector" in why[0]
    golden = (tmp_path / "op" / "golden.py").read_text()
    assert "def make_inputs(case, rng):" in golden
    a, b = _assert_seeds_vary_floats_keep_structure(tmp_path / "op", ["offsets"])
    assert a[1].tolist() == b[1].tolist() == [0, 5, 12, 20, 23]
    op = load_op_dir(tmp_path / "op")
    run = run_golden(op, op.cases()[0])
    x, offsets = run.inputs
    want = np.stack([x[offsets[i]:offsets[i + 1]].sum(0) for i in range(4)])
    np.testing.assert_allclose(run.outputs["out"], want, rtol=1e-5, atol=1e-5)
    assert "small" in op.cases()[1].band and np.abs(run_golden(op, op.cases()[1]).inputs[0]).max() < 0.1


def test_block_table_keeps_valid_block_ids_and_draws_the_cache_per_band(tmp_path: Path) -> None:
    forward = ("    def forward(self, q, cache, block_tables):\n"
               "        outs = []\n"
               "        for b in range(block_tables.shape[0]):\n"
               "            kv = torch.cat([cache[int(i)] for i in block_tables[b]], dim=0)\n"
               "            outs.append(torch.softmax(q[b] @ kv.T, dim=-1) @ kv)\n"
               "        return torch.stack(outs)")
    inputs = ("    q = torch.randn(2, 3, 16)\n    cache = torch.randn(8, 4, 16)\n"
              "    return [q, cache, torch.arange(6, dtype=torch.int32).reshape(2, 3)]")
    task = _task(tmp_path, "2_Paged.py", forward, inputs, formula="o[b, s, d] = softmax(q[b, s, d] @ K^T) @ V",
                 dynamic="['B']")
    rep = import_task(task, tmp_path / "op")
    assert rep.dynamic_axes == [] and len(rep.p0_shapes) == 1
    assert any("block_tables is a sorted integer vector" in u for u in rep.unmapped)
    a, b = _assert_seeds_vary_floats_keep_structure(tmp_path / "op", ["block_tables"])
    assert a[2].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert a[2].min() >= 0 and a[2].max() < a[1].shape[0]  # every block id addresses a cache block


def test_index_and_length_tied_to_a_shape_vary_with_the_seed_and_stay_in_range(tmp_path: Path) -> None:
    forward = ("    def forward(self, x, idx, n):\n"
               "        return x[idx[: int(n[0]) // 2].long()] * 2.0")
    inputs = "    return [torch.randn(24, 8), torch.randint(0, 24, (12,), dtype=torch.int32), torch.tensor([24])]"
    task = _task(tmp_path, "3_Gather.py", forward, inputs, dynamic="['B']")
    rep = import_task(task, tmp_path / "op")
    assert any("n holds 24 = x.shape[0]" in u for u in rep.unmapped)
    assert any("idx change with the seed" in n for n in rep.notes)
    a, b = _assert_seeds_vary_floats_keep_structure(tmp_path / "op", ["idx", "n"])
    assert a[1].tobytes() != b[1].tobytes()  # get_inputs() draws idx from torch: seeded per case
    for idx in (a[1], b[1]):
        assert idx.dtype == np.int32 and 0 <= idx.min() and idx.max() < 24
    assert a[2].tolist() == b[2].tolist() == [24]


def test_lengths_that_must_sum_to_a_shape_are_found_by_the_failing_run(tmp_path: Path) -> None:
    # unsorted lengths, none equal to a shape: only running the model on drawn values shows they are structure
    forward = ("    def forward(self, x, lengths):\n"
               "        return torch.stack([c.sum(0) for c in torch.split(x, lengths.tolist())])")
    task = _task(tmp_path, "4_Split.py", forward,
                 "    return [torch.randn(16, 4), torch.tensor([5, 3, 6, 2])]")
    rep = import_task(task, tmp_path / "op")
    why = [u for u in rep.unmapped if u.startswith("shapes not varied")]
    assert len(why) == 1 and "drawn independently" in why[0]
    assert rep.p0_shapes == [{"B": 16, "D": 4}]
    _assert_seeds_vary_floats_keep_structure(tmp_path / "op", ["lengths"])


@pytest.mark.parametrize(("inputs", "head", "why"), [
    # an offsets vector from a generator that no seed reaches: make_inputs could not give the same case twice
    ("    g = torch.Generator().manual_seed(int.from_bytes(os.urandom(4), 'little'))\n"
     "    offsets = torch.sort(torch.randint(0, 24, (6,), generator=g)).values.to(torch.int32)\n"
     "    return [torch.randn(24, 8), offsets]",
     "import os\n", "different values for the same seed"),
    # the number of segments is drawn: the offsets' shape changes with the seed, SPEC.md needs one shape
    ("    n = int(torch.randint(3, 1000, ()))\n"
     "    return [torch.randn(24, 8), torch.linspace(0, 24, n).to(torch.int32)]", "", "SPEC.md needs one shape"),
])
def test_structured_inputs_that_cannot_be_reproduced_are_refused_in_one_line(tmp_path: Path, inputs: str, head: str,
                                                                             why: str) -> None:
    task = _task(tmp_path, "5_Bad.py", SEGMENTS, inputs, head=head)
    with pytest.raises(TaskImportError, match=why) as info:
        import_task(task, tmp_path / "op")
    assert "\n" not in str(info.value) and "Traceback" not in str(info.value)
    assert not (tmp_path / "op").exists()


# ------------------------------------------------------------------------------------------------ real tasks

REAL = {
    "8_glm_v4_5_attention.py": ["block_tables", "actual_seqs"],
    "17_flash_attention_mha.py": ["cu_seqlens_q", "cu_seqlens_k"],
    "20_sparse_attention_tnd.py": ["topk_indices", "npu_actual_q_len", "npu_actual_kv_len"],
}


@needs_corpus
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_structured_tasks_import_pass_intake_and_vary_with_the_seed(tmp_path: Path, name: str) -> None:
    task = SHARED / "pto_case" / name
    if not task.is_file():
        pytest.skip(f"{task} is not in the corpus")
    rep = import_task(task, tmp_path / "op")
    assert rep.cases == 3 and rep.dynamic_axes == [] and len(rep.p0_shapes) <= 1
    assert sum(u.startswith("shapes not varied") for u in rep.unmapped) == 1
    checked = intake(tmp_path / "op")
    assert checked.ok, checked.problems
    assert checked.has_make_inputs
    kept = REAL[name]
    a, b = _assert_seeds_vary_floats_keep_structure(tmp_path / "op", kept)
    op = load_op_dir(tmp_path / "op")
    got = {t.name: (x, y) for t, x, y in zip(op.spec.inputs, a, b)}
    if name.startswith("17_"):
        for key, rows in (("cu_seqlens_q", "q"), ("cu_seqlens_k", "k")):
            for off in got[key]:
                assert off[0] == 0 and np.all(np.diff(off) >= 0) and off[-1] == got[rows][0].shape[0]
    elif name.startswith("8_"):
        for table in got["block_tables"]:
            assert table.min() >= 0 and table.max() < got["key_cache"][0].shape[0]
    else:
        for idx in got["topk_indices"]:
            assert idx.min() >= 0 and idx.max() < got["compressed_kv_norm"][0].shape[0]
        assert got["topk_indices"][0].tobytes() != got["topk_indices"][1].tobytes()
        for lens, rows in (("npu_actual_q_len", "q_nope"), ("npu_actual_kv_len", "compressed_kv_norm")):
            assert got[lens][0][-1] == got[rows][0].shape[0]


def test_a_model_that_fails_on_drawn_and_on_its_own_integer_inputs_says_both_in_one_line(tmp_path: Path) -> None:
    forward = ("    def forward(self, x, idx):\n"
               "        raise RuntimeError('broken task')")
    task = _task(tmp_path, "6_Broken.py", forward, "    return [torch.randn(16, 4), torch.randint(0, 16, (5,))]")
    with pytest.raises(TaskImportError, match="broken task") as info:
        import_task(task, tmp_path / "op")
    text = str(info.value)
    assert "\n" not in text and "and with make_inputs taking idx from get_inputs()" in text
    assert not (tmp_path / "op").exists()
