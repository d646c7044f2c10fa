"""Acceptance: the automatic method names the bugged line of the bugged-variant corpus (issue 9)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bisect_corpus import CORPUS, REAL_ONLY_OPS, VARIANTS, materialize

from runtime.bisect import bisect
from runtime.opdir import load_op_dir

MIN_HITS = 16


def test_corpus_has_enough_variants_and_kinds() -> None:
    assert len(VARIANTS) >= 20
    kinds = {v.kind for v in VARIANTS}
    assert kinds == {"wrong_constant", "wrong_axis", "off_by_one", "missing_cast", "wrong_valid_shape",
                     "acc_uninit", "rebound_state", "wrong_transpose"}
    assert len({v.id for v in VARIANTS}) == len(VARIANTS)


def test_correct_base_kernels_show_no_divergence(standin: str, golden_cache: dict) -> None:
    ops = sorted(p.name for p in CORPUS.iterdir() if (p / "SPEC.md").exists() and p.name not in REAL_ONLY_OPS)
    tails = [next(c for c in load_op_dir(CORPUS / op).cases() if c.tail).name for op in ops]
    with ThreadPoolExecutor(max_workers=4) as pool:
        reports = list(pool.map(lambda oc: bisect(CORPUS / oc[0], f"{oc[0]}_impl.py", case=oc[1], emulator=standin,
                                                golden_cache=golden_cache),
                                zip(ops, tails, strict=True)))
    assert len(ops) >= 6
    for op, tail, report in zip(ops, tails, reports, strict=True):
        assert report.case == tail
        assert report.status == "NO_DIVERGENCE", f"{op}: {report.summary}"
        assert report.first_divergence is None
        assert all(o.all_close for o in report.outputs) and report.outputs


def test_automatic_method_names_the_bugged_line(tmp_path: Path, standin: str, golden_cache: dict) -> None:
    hits, misses, by_error = 0, [], 0
    jobs = [(v, *materialize(v, tmp_path)) for v in VARIANTS]
    with ThreadPoolExecutor(max_workers=4) as pool:  # each bisect waits on two child processes
        reports = list(pool.map(lambda j: bisect(j[1], j[2], emulator=standin, golden_cache=golden_cache), jobs))
    for (v, _op_dir, _stage, line), report in zip(jobs, reports, strict=True):
        got = report.first_divergence.line if report.first_divergence else None
        assert report.status in ("DIVERGENCE_FOUND", "RUNTIME_ERROR", "NOT_LOCALIZED"), f"{v.id}: {report.summary}"
        if report.first_divergence is not None:  # never a line whose own value matches the golden
            assert report.first_divergence.status not in ("match", "input", "const"), v.id
        if got == line:
            hits += 1
            by_error += report.status == "RUNTIME_ERROR"
        else:
            misses.append(f"{v.id} ({v.kind}): expected line {line}, got {got} [{report.status}: {report.summary}]")
    print(f"\nautomatic method: {hits}/{len(VARIANTS)} bugged lines named "
          f"({by_error} through an emulator error at the line); misses: {misses}")
    assert hits >= MIN_HITS, f"only {hits}/{len(VARIANTS)}; misses:\n" + "\n".join(misses)
    # value analysis (not just emulator errors) must carry most of the corpus
    assert hits - by_error >= MIN_HITS - 4, f"only {hits - by_error} found by value analysis"
