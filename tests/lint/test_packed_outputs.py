"""OL51 and outputs packed into one buffer (red team s31d).

OL51 compared the SPEC's outputs with the kernel parameters the kernel writes, so a wrapper returning two outputs as
views of one buffer the kernel writes (``buf[:, :D], buf[:, D:]``, ``buf[0], buf[1]``) was refused - an honest
layout that verification runs fine. Views of what the wrapper passed as a written parameter now count; anything else
(an input returned as an output) does not.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from runtime.lint import blocking, lint_paths

FIXTURE = Path(__file__).with_name("fixtures_s31") / "pair"


def _findings(tmp_path: Path, wrapper_body: str) -> list:
    op = tmp_path / "pair"
    shutil.copytree(FIXTURE, op)
    text = (op / "pair_impl.py").read_text()
    head = text[:text.index("def pair_wrapper(x):")]
    (op / "pair_impl.py").write_text(head + "def pair_wrapper(x):\n" + wrapper_body)
    return [f for f in blocking(lint_paths([op / "pair_impl.py"], stage="final", op_dir=op)) if f.rule_id == "OL51"]


def test_two_outputs_as_views_of_the_buffer_the_kernel_writes_are_not_refused(tmp_path: Path) -> None:
    columns = ("    xc = x.contiguous()\n    buf = torch.empty(xc.shape[0], 2 * COLS, dtype=xc.dtype)\n"
               "    pair_kernel(xc, buf)\n    return buf[:, :COLS], buf[:, COLS:]\n")
    assert _findings(tmp_path / "a", columns) == []
    stacked = ("    xc = x.contiguous()\n    buf = torch.empty(2, xc.shape[0], COLS, dtype=xc.dtype)\n"
               "    pair_kernel(xc, buf.view(xc.shape[0], 2 * COLS))\n    return buf[0], buf[1]\n")
    assert _findings(tmp_path / "b", stacked) == []


def test_an_input_returned_beside_the_written_buffer_is_still_refused(tmp_path: Path) -> None:
    body = ("    xc = x.contiguous()\n    buf = torch.empty(xc.shape[0], 2 * COLS, dtype=xc.dtype)\n"
            "    pair_kernel(xc, buf)\n    return buf[:, :COLS], xc[:, :COLS]\n")
    found = _findings(tmp_path, body)
    assert found and "2 outputs declared" in found[0].message
