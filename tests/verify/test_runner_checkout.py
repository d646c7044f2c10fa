"""The sandbox runs the checkout that verifies, not the one an editable install points at.

Found by running a clone with another checkout's venv: the runner imported ``runtime.sandbox._wire`` before putting
its own checkout on ``sys.path``, so the editable install's finder served the other checkout - under Bubblewrap
(where that checkout is not mounted) every verification was ``ERROR ... No module named 'runtime'``; without it,
the child would have run the other checkout's code.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from verify_helpers import HOSTILE, make_op

ROOT = Path(__file__).resolve().parents[2]


def test_a_second_checkout_verifies_with_its_own_runner(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT / "runtime", checkout / "runtime", ignore=shutil.ignore_patterns("__pycache__"))
    op = make_op(tmp_path, "silu", {"silu_impl.py": (HOSTILE / "honest_silu.py").read_text()})
    out = subprocess.run([sys.executable, "-m", "runtime.verify", str(op), "silu_impl.py", "--json"], cwd=checkout,
                         capture_output=True, text=True, timeout=300)
    assert '"verdict": "PASS"' in out.stdout, (out.stdout[-3000:], out.stderr[-3000:])
