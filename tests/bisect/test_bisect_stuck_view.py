"""A view stuck at one offset while the loop walks, seen through lane masks (gym interleave_rope, session 7).

``rope_heads`` is the gym RoPE's shape at a test size: ``x`` tiles walk heads and positions, ``cos``/``sin``
(broadcast over heads) walk positions only, and every tile goes through ``gathermask`` (even/odd lanes) before the
elementwise rotation. Two single-line bugs were named late on the real kernel:

* ``cos`` read at position 0 in every iteration: the rotation's operands come from tiles at different positions
  (``an.conflicts``), but no view "breaks the tiling grid", so the rotation line after the bug was named. The
  operand whose source view - followed back through the lane mask - never moves on that axis, while its tensor has
  room and the other operand's view does move, is named.
* ``x`` read at head 0 in every iteration: the values written at head 4 equal the golden at head 0 (a shifted
  read), but ``cos`` and ``sin`` are at head offset 0 too (broadcast: extent 1 on that axis), three candidate
  reads instead of one, so the write was named. A view broadcast on the axis where read and write disagree cannot
  have misplaced the values.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runtime.bisect import bisect

DATA = Path(__file__).parent / "stuck_data" / "rope_heads"
STAGE = "rope_heads_impl.py"


def _planted(tmp: Path, old: str, new: str) -> tuple[Path, Path, int]:
    op_dir = tmp / "rope_heads"
    shutil.copytree(DATA, op_dir)
    stage = op_dir / STAGE
    src = stage.read_text()
    assert src.count(old) == 1
    line = src[: src.index(old)].count("\n") + 1
    stage.write_text(src.replace(old, new))
    return op_dir, stage, line


@pytest.mark.parametrize(("old", "new"), [
    ("view(cos, [1, 1, ST, D], [b, 0, s_off, 0]", "view(cos, [1, 1, ST, D], [b, 0, 0, 0]"),
    ("view(x, [1, HT, ST, D], [b, h_off, s_off, 0]", "view(x, [1, HT, ST, D], [b, 0, s_off, 0]"),
], ids=["cos_stuck_position", "x_stuck_head"])
def test_a_view_stuck_while_the_loop_walks_is_named_through_lane_masks(tmp_path: Path, old: str, new: str) -> None:
    op_dir, stage, line = _planted(tmp_path, old, new)
    rep = bisect(op_dir, stage)
    assert rep.status == "DIVERGENCE_FOUND", (rep.summary, rep.evidence)
    assert rep.first_divergence is not None and rep.first_divergence.line == line, (rep.summary, rep.evidence)
    assert rep.first_divergence.op == "view"


def test_the_right_kernel_names_nothing(tmp_path: Path, tail_case) -> None:
    rep = bisect(DATA, DATA / STAGE, case=tail_case(DATA))
    assert rep.status == "NO_DIVERGENCE", rep.summary
