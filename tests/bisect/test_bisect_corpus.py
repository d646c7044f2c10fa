"""The bugged-variant corpus (issue 9) is well formed and its correct base kernels show no divergence (the
scoring of the variants runs on the real emulator: test_bisect_real_emulator.py)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from bisect_corpus import CORPUS, REAL_ONLY_OPS, VARIANTS

from runtime.bisect import bisect
from runtime.opdir import load_op_dir


def test_corpus_has_enough_variants_and_kinds() -> None:
    assert len(VARIANTS) >= 20
    kinds = {v.kind for v in VARIANTS}
    assert kinds == {"wrong_constant", "wrong_axis", "off_by_one", "missing_cast", "wrong_valid_shape",
                     "acc_uninit", "rebound_state", "wrong_transpose"}
    assert len({v.id for v in VARIANTS}) == len(VARIANTS)


def test_correct_base_kernels_show_no_divergence(golden_cache: dict) -> None:
    ops = sorted(p.name for p in CORPUS.iterdir() if (p / "SPEC.md").exists() and p.name not in REAL_ONLY_OPS)
    tails = [next(c for c in load_op_dir(CORPUS / op).cases() if c.tail).name for op in ops]
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = list(pool.map(lambda oc: bisect(CORPUS / oc[0], f"{oc[0]}_impl.py", case=oc[1],
                                                golden_cache=golden_cache),
                                zip(ops, tails, strict=True)))
    assert len(ops) >= 6
    for op, tail, report in zip(ops, tails, reports, strict=True):
        assert report.case == tail
        assert report.status == "NO_DIVERGENCE", f"{op}: {report.summary}"
        assert report.first_divergence is None
        assert all(o.all_close for o in report.outputs) and report.outputs
