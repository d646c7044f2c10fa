"""A value whose own values and golden slice both lie inside ``atol`` is no evidence that it is right.

Gym AdamW (``adam_gradsq``: ``mul(g_tile, m_tile)`` for ``mul(g_tile, g_tile)``): every ``v`` value is below 5e-6
while the fp32 ``atol`` is 1e-4, so the wrong ``v_new`` "matched" the golden's ``v_new`` (anything that small
matches anything that small) and the next op, ``v_hat = v_new / bc2`` (x 1000 at step 1), was named: a late
claim. Such a comparison says nothing either way: the value is ``unknown``, never ``match``, and the report
must not name a line after the bug. The kernel here is the held-out AdamW at its step 1 with the gym's fp32
tolerance and a second moment below ``atol`` (positive, as the gym's: ``g * m`` stays far below it, no NaN).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from heldout_corpus import HELDOUT

from runtime.bisect import bisect
from runtime.bisect._analyzer import Analyzer, Golden
from runtime.bisect._compare import vacuous
from runtime.bisect._records import Rec


def _tiny_adamw(tmp: Path, bug: bool) -> tuple[Path, Path, int]:
    op_dir = tmp / ("adamw_tiny_bug" if bug else "adamw_tiny")
    shutil.copytree(HELDOUT / "adamw", op_dir)
    spec = op_dir / "SPEC.md"
    text = spec.read_text()
    for old, new in [("{R: 2048, C: 1024}\n  - {R: 2000, C: 1024}", "{R: 64, C: 1024}"),
                     ("fp32: {atol: 1.0e-6, rtol: 1.0e-5}", "fp32: {atol: 1.0e-4, rtol: 0.0078125}"),
                     ("{name: grad, shape: [R, C], dtype: T, range: [-0.1, 0.1]}",
                      "{name: grad, shape: [R, C], dtype: T, range: [-0.01, 0.01]}"),
                     ("{name: exp_avg_sq, shape: [R, C], dtype: T, range: [0.0, 0.001]}",
                      "{name: exp_avg_sq, shape: [R, C], dtype: T, range: [0.000001, 0.00001]}"),
                     ("{name: param, shape: [R, C], dtype: T, range: [-1.0, 1.0]}",
                      "{name: param, shape: [R, C], dtype: T, range: [-0.01, 0.01]}"),
                     ("step: 10", "step: 1")]:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    spec.write_text(text)
    stage = op_dir / "adamw_impl.py"
    src = stage.read_text().replace("STEP = 10", "STEP = 1")
    line = 0
    if bug:
        old = "v_new = v * BETA2 + g * g * (1.0 - BETA2)"
        assert src.count(old) == 1
        src = src.replace(old, "v_new = v * BETA2 + g * m * (1.0 - BETA2)")
        line = next(i + 1 for i, t in enumerate(src.splitlines()) if "g * m * (1.0 - BETA2)" in t)
    stage.write_text(src)
    return op_dir, stage, line


def test_vacuous_needs_both_sides_inside_atol_and_unequal() -> None:
    a = np.full((4, 8), 3e-6, np.float32)
    assert vacuous(a, a * 0.1, 1e-4)  # both tiny, different: no evidence
    assert not vacuous(a, a.copy(), 1e-4)  # bit-equal: evidence
    assert not vacuous(a + 1.0, a * 0.1 + 1.0, 1e-4)  # large values: a real comparison
    b = a.copy()
    b[3, 7] = 2e-4
    assert not vacuous(b, a, 1e-4)  # one element outside atol: the comparison means something
    assert not vacuous(np.zeros(0, np.float32), np.zeros(0, np.float32), 1e-4)


def test_a_value_inside_atol_is_unknown_not_match() -> None:
    """The analyzer: a computed value and a write that "match" a golden only inside ``atol`` are not matches
    (no evidence), while a value with real magnitude still matches."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (8, 16)).astype(np.float32)
    tiny = rng.uniform(0, 5e-6, (8, 16)).astype(np.float32)
    g = Golden({"x": x, "t": tiny, "big": x * 2, "out": tiny}, {"x": "input", "t": "intermediate",
                                                              "big": "intermediate", "out": "output"},
               atol=1e-4, rtol=1e-3)
    an = Analyzer(g)
    an.begin_call([("x", x), ("out", np.zeros_like(x))])
    def rec(seq: int, op: str, **kw: object) -> Rec:
        return Rec(seq=seq, node=seq, op=op, file="k.py", line=seq + 1, iteration={}, shape=[8, 16], **kw)  # type: ignore[arg-type]

    v = rec(0, "view", source="x", offsets=[0, 0])
    m = rec(1, "mul", name="t", inputs=[{"kind": "record", "seq": 0}])
    b = rec(2, "mul", name="big", inputs=[{"kind": "record", "seq": 0}])
    w = rec(3, "assemble", target="out", offsets=[0, 0], inputs=[{"kind": "record", "seq": 1}])
    an.add(v, x)
    an.add(m, tiny * 0.3)  # wrong, but inside atol like its golden
    an.add(b, x * 2)
    an.add(w, tiny * 0.3)
    an.finish()
    assert an.status[1] == "unknown" and "t" in (m.summ.vacuous if m.summ else ())
    assert an.status[2] == "match"
    assert an.status[3] == "unknown"


def test_tiny_output_write_off_by_more_than_the_tolerance_departs() -> None:
    """Inside atol both, but apart by more than the tolerance: an output element verify fails is a departure;
    bit-equal tiny values match."""
    g_out = np.full((8, 16), 9e-5, np.float32)
    g = Golden({"x": np.ones((8, 16), np.float32), "out": g_out}, {"x": "input", "out": "output"},
               atol=1e-4, rtol=1e-3)
    for value, want in [(-g_out, "mismatch"), (g_out.copy(), "match"), (g_out * 0.5, "unknown")]:
        an = Analyzer(g)
        an.begin_call([("x", g.arrays["x"]), ("out", np.zeros_like(g_out))])
        w = Rec(seq=0, node=0, op="assemble", file="k.py", line=1, iteration={}, shape=[8, 16], target="out",
                offsets=[0, 0])
        an.add(w, value)
        an.finish()
        assert an.status[0] == want, (value[0, 0], an.status[0])


def test_wrong_value_below_atol_gives_no_late_claim(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, stage, line = _tiny_adamw(tmp_path, bug=True)
    rep = bisect(op_dir, stage, golden_cache=golden_cache)
    assert rep.status in ("DIVERGENCE_FOUND", "NOT_LOCALIZED"), rep.summary
    f = rep.first_divergence
    if f is not None:
        assert (f.call_site or f.line) == line, f"named {f.line}, bug at {line}: {rep.evidence}"
    else:
        lines = {s.line for s in rep.suspects}
        assert line in lines and len(lines) <= 5, (lines, rep.evidence)
