"""The command ``import`` suggests next can be pasted into a shell, whatever the destination's name (UX audit s35:
only the first path was quoted, and ``verify imp/attn softmax imp/attn softmax/attn_softmax_impl.py`` failed)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # the import runs the task in child processes
def test_the_next_commands_quote_every_path(tmp_path: Path) -> None:
    task = tmp_path / "12_Scale.py"
    task.write_text("import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n"
                    "        return x * 2.0\n\ndef get_inputs():\n    return [torch.randn(40, 32)]\n\n"
                    "def get_init_inputs():\n    return []\n", encoding="utf-8")
    dest = tmp_path / "my tasks" / "scale op"
    p = subprocess.run([sys.executable, "-m", "orchestrator", "import", str(task), str(dest)], capture_output=True,
                       text=True, cwd=REPO, timeout=600)
    assert p.returncode == 0, p.stderr
    line = next(x for x in p.stdout.splitlines() if x.startswith("next: "))
    commands = [shlex.split(c) for c in line.removeprefix("next: ").split("; ")]
    assert [c[-2:] for c in commands] == [["intake", str(dest)], ["run", str(dest)]]
