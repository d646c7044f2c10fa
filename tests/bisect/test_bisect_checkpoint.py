"""The checkpoint method: the first diverging checkpoint in data-flow order and the drift-onset iteration."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bisect_corpus import CHECKPOINT_VARIANTS, CORPUS, CheckpointVariant, materialize

from runtime.bisect import BisectReport, bisect
from runtime.bisect._checkpoint import checkpoint_names


def test_checkpoint_names_come_from_kernel_parameters_only() -> None:
    stage = CORPUS / "rms_norm_ckpt" / "rms_norm_ckpt_impl.py"
    assert checkpoint_names(stage, ["xf", "sq", "ms", "inv", "xn"]) == ["ms", "inv"]
    assert checkpoint_names(CORPUS / "rms_norm" / "rms_norm_impl.py", ["ms", "inv"]) == []


def test_wrapper_inputs_are_never_checkpoints(tmp_path: Path) -> None:
    stage = tmp_path / "op_module2_impl.py"
    stage.write_text(
        "import pypto\n"
        "@pypto.frontend.jit\n"
        "def k(ms: pypto.Tensor([4, 1], pypto.DT_FP32), inv: pypto.Tensor([4, 1], pypto.DT_FP32)):\n"
        "    pass\n"
        "def op_module2_wrapper(ms, *, inv=None):  # STUB: ms is golden-fed\n"
        "    pass\n")
    assert checkpoint_names(stage, ["ms", "inv"], "op_module2_wrapper") == ["inv"]


def test_first_diverging_checkpoint_on_the_real_emulator(tmp_path: Path, golden_cache: dict) -> None:
    jobs = [(v, *materialize(v, tmp_path)) for v in CHECKPOINT_VARIANTS]
    with ThreadPoolExecutor(max_workers=4) as pool:
        reports = list(pool.map(lambda j: bisect(j[1], j[2], golden_cache=golden_cache), jobs))
    for (variant, _op_dir, _stage, line), report in zip(jobs, reports, strict=True):
        _check(variant, line, report)


def _check(variant: CheckpointVariant, line: int, report: BisectReport) -> None:
    assert report.method == "auto+checkpoint"
    assert report.first_checkpoint == variant.first_checkpoint, f"{variant.id}: {report.to_json()}"
    first = next(c for c in report.checkpoints if c.name == variant.first_checkpoint)
    assert first.drift_onset == variant.drift_onset, variant.id
    assert first.status != "match" and first.stats is not None and first.stats.out_of_tolerance > 0
    # checkpoints before the first diverging one match (data-flow order ms -> inv)
    names = [c.name for c in report.checkpoints]
    assert names == ["ms", "inv"]
    for c in report.checkpoints[: names.index(variant.first_checkpoint)]:
        assert c.status == "match"
    # per-iteration results agree with the onset
    onset_index = next(i for i, it in enumerate(first.per_iteration) if not it.all_close)
    assert all(it.all_close for it in first.per_iteration[:onset_index])
    # the automatic method, run on the same recording, names the bugged line too
    assert report.first_divergence is not None and report.first_divergence.line == line, variant.id
    if variant.id == "ck_tail_short":  # rows the kernel never wrote keep the tool's poison and are counted
        assert first.not_written > 0 and first.stats is not None and first.stats.nan_count == first.not_written

