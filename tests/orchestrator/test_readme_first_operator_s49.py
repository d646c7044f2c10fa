"""The README's "Your first operator" files, pasted as they are, pass intake (UX audit s49).

Each code block started with a label comment (``# my_op/SPEC.md — YAML front matter ...``): a newcomer who pasted
the SPEC.md block whole got ``SPEC.md must start with a YAML front matter block`` (its first line was the label, not
``---``). The labels are prose above the blocks now; this test pastes both blocks verbatim and runs intake.
"""

from __future__ import annotations

import re
from pathlib import Path

from runtime.opdir import intake

ROOT = Path(__file__).resolve().parents[2]


def _blocks() -> list[tuple[str, str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```(\w*)\n(.*?)```", text, flags=re.DOTALL)


def test_the_first_operator_pasted_verbatim_passes_intake(tmp_path: Path) -> None:
    spec = [body for lang, body in _blocks() if lang == "yaml" and "op_name: silu" in body]
    golden = [body for lang, body in _blocks() if lang == "python" and "def golden(" in body]
    assert len(spec) == 1 and len(golden) == 1, "the README's first-operator blocks moved"
    assert spec[0].startswith("---\n"), "the SPEC.md block must be the file: its first line is '---'"
    op = tmp_path / "my_op"
    op.mkdir()
    (op / "SPEC.md").write_text(spec[0], encoding="utf-8")
    (op / "golden.py").write_text(golden[0], encoding="utf-8")
    report = intake(op)
    assert report.ok, [p.model_dump() for p in report.problems]
    assert report.spec is not None and report.spec.op_name == "silu" and len(report.cases) >= 2
