"""The corpus on the real runtime.emulator, plus variants of a kernel only it can run (runtime branches)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from bisect_corpus import CORPUS, REAL_ONLY_OPS, REAL_ONLY_VARIANTS, VARIANTS, materialize

import runtime.emulator as emu
from runtime.bisect import bisect
from runtime.opdir import load_op_dir

MIN_HITS = 24


@pytest.mark.slow  # the bisect corpus on the real emulator
def test_real_emulator_records_and_corpus(tmp_path: Path, golden_cache: dict) -> None:
    assert "record" in emu.Options.__dataclass_fields__
    variants = VARIANTS + REAL_ONLY_VARIANTS
    jobs = [(v, *materialize(v, tmp_path)) for v in variants]
    with ThreadPoolExecutor(max_workers=2) as pool:  # the suite itself already runs on both cores
        reports = list(pool.map(lambda j: bisect(j[1], j[2], golden_cache=golden_cache), jobs))
    hits = {v.id for (v, _o, _s, line), r in zip(jobs, reports, strict=True)
            if r.first_divergence is not None and r.first_divergence.line == line}
    misses = sorted({v.id for v in variants} - hits)
    main_hits = len(hits & {v.id for v in VARIANTS})
    print(f"\nreal emulator: {main_hits}/{len(VARIANTS)} corpus + "
          f"{len(hits) - main_hits}/{len(REAL_ONLY_VARIANTS)} flash-attention bugged lines named; misses: {misses}")
    not_recorded = [(v.id, r.status, r.summary) for (v, *_), r in zip(jobs, reports, strict=True)
                    if not (r.recording or r.status == "RUNTIME_ERROR")]
    assert not not_recorded, not_recorded
    assert main_hits >= MIN_HITS, misses
    assert len(hits) - main_hits >= len(REAL_ONLY_VARIANTS) - 1, misses


def test_real_only_base_kernels_show_no_divergence(golden_cache: dict) -> None:
    for op in sorted(REAL_ONLY_OPS):
        tail = next(c for c in load_op_dir(CORPUS / op).cases() if c.tail).name
        report = bisect(CORPUS / op, f"{op}_impl.py", case=tail, golden_cache=golden_cache)
        assert report.status == "NO_DIVERGENCE", f"{op}: {report.summary}"
        assert report.recording and report.records > 0
