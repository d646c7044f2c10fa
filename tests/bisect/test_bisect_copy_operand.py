"""A copy that writes the wrong (but correctly computed) value into an output is the culprit.

Gym AdamW (``adam_m_out``): ``pypto.assemble(m_hat, ..., m_out)`` where ``m_new`` belongs. ``m_hat`` matches the
golden's ``m_hat``; the copy into ``m_out`` departs "while its operand matches golden 'm_hat'". Bisect used to
dismiss that as a coincidence (a copy cannot turn one golden into another - right for a Sinkhorn loop whose wrong
axis converges to another golden) and ended NOT_LOCALIZED. Here the operand's match is corroborated: ``m_hat``
also feeds ``m_hat / denom * lr`` and then ``p_new``, which matches its golden - so the value is what it seems
and the copy chose it wrongly. The held-out AdamW reproduces it at a small size.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from heldout_corpus import HELDOUT

from runtime.bisect import bisect

_RIGHT = "pypto.assemble(m_new, [i * TR, j * TC], m_out)"


def _adamw(tmp: Path, write: str) -> tuple[Path, Path, int]:
    op_dir = tmp / "adamw"
    shutil.copytree(HELDOUT / "adamw", op_dir)
    spec = op_dir / "SPEC.md"
    text = spec.read_text()
    old = "{R: 2048, C: 1024}\n  - {R: 2000, C: 1024}"
    assert text.count(old) == 1
    spec.write_text(text.replace(old, "{R: 64, C: 1024}"))
    stage = op_dir / "adamw_impl.py"
    src = stage.read_text()
    assert src.count(_RIGHT) == 1
    src = src.replace(_RIGHT, _RIGHT.replace("m_new", write))
    stage.write_text(src)
    line = next(i + 1 for i, t in enumerate(src.splitlines()) if "m_out)" in t and "assemble" in t)
    return op_dir, stage, line


def test_a_copy_of_a_corroborated_value_into_the_wrong_output_is_named(tmp_path: Path) -> None:
    op_dir, stage, line = _adamw(tmp_path, "m_hat")
    rep = bisect(op_dir, stage)
    assert rep.status == "DIVERGENCE_FOUND", rep.summary
    assert rep.first_divergence is not None and rep.first_divergence.line == line
    assert rep.first_divergence.op == "assemble"
    assert not any("coincidence" in e for e in rep.evidence), rep.evidence


def test_the_right_copy_is_not_named(tmp_path: Path, tail_case) -> None:
    op_dir, stage, _ = _adamw(tmp_path, "m_new")
    rep = bisect(op_dir, stage, case=tail_case(op_dir))
    assert rep.status != "DIVERGENCE_FOUND", rep.summary
    assert rep.first_divergence is None
