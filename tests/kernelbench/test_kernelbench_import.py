"""`python -m orchestrator import TASK.py DEST` on KernelBench task files (real ones from ../shared/kernelbench and
small synthetic ones): what the op dir holds, that its golden computes the task, and one-line refusals."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from orchestrator.adapters.kernelbench import TaskImportError, import_task
from runtime.opdir import load_op_dir, run_golden

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("FORGE_SHARED") or REPO.parent / "shared") / "kernelbench"
needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="task files are torch code: pip install torch==2.13.0 (CPU)")
needs_corpus = pytest.mark.skipif(not SHARED.is_dir(), reason=f"KernelBench corpus not found at {SHARED} "
                                                              "(set FORGE_SHARED)")
pytestmark = [pytest.mark.slow, needs_torch]


@needs_corpus
def test_relu_task_becomes_an_op_dir_with_a_tail_case(tmp_path: Path) -> None:
    rep = import_task(SHARED / "level1" / "19_ReLU.py", tmp_path / "relu")
    assert rep.op_name == "relu" and rep.level == "level1"
    assert rep.written == ["SPEC.md", "golden.py", "IMPORT.md"]
    op = load_op_dir(tmp_path / "relu")
    assert op.spec.dynamic_axes == ["B"]
    assert [t.shape for t in op.spec.inputs] == [["B", "D"]]
    assert op.spec.p0_shapes == [{"B": 16, "D": 16384}, {"B": 29, "D": 16384}]  # batch_size 16; 29 = a tail
    assert op.spec.inputs[0].distribution == "normal"  # get_inputs() draws torch.randn
    assert rep.cases == 6
    case = op.cases()[1]
    run = run_golden(op, case)
    x = run.inputs[0]
    assert np.array_equal(run.outputs["out"], np.maximum(x, 0))


@needs_corpus
def test_parameters_become_inputs_and_the_golden_is_the_model(tmp_path: Path) -> None:
    rep = import_task(SHARED / "level2" / "30_Gemm_GroupNorm_Hardtanh.py", tmp_path / "g")
    op = load_op_dir(tmp_path / "g")
    names = [t.name for t in op.spec.inputs]
    assert names == ["x", "gemm_weight", "gemm_bias", "group_norm_weight", "group_norm_bias"]
    assert op.spec.inputs[1].shape == [512, 1024]
    # GroupNorm's weight is all ones in the task: the op dir draws it from a range so that ignoring it fails
    assert op.spec.inputs[3].range == (0.5, 1.5)
    assert any("constant" in n for n in rep.notes)
    run = run_golden(op, op.cases()[0])
    x, w, b, gamma, beta = (a.astype(np.float64) for a in run.inputs)
    z = x @ w.T + b
    g = z.reshape(z.shape[0], 8, -1)
    norm = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)
    want = np.clip(norm.reshape(z.shape) * gamma + beta, -2.0, 2.0)
    np.testing.assert_allclose(run.outputs["out"], want, atol=1e-4, rtol=1e-4)
    golden = (tmp_path / "g" / "golden.py").read_text()
    assert golden.startswith("# Golden function inventory")
    assert "linear (PyPTO: pypto.matmul(b_trans=True) + add)" in golden
    assert (SHARED / "level2" / "30_Gemm_GroupNorm_Hardtanh.py").read_text().rstrip() in golden  # unchanged


def _task(tmp_path: Path, name: str, body: str, inputs: str, init: str = "[]") -> Path:
    path = tmp_path / name
    path.write_text("import torch\nimport torch.nn as nn\n\nFORMULA = 'out[b, d] = f(x[b, d])'\nDYNAMIC_AXIS = ['B']\n\n"
                    f"class Model(nn.Module):\n{body}\n\ndef get_inputs():\n    return {inputs}\n\n"
                    f"def get_init_inputs():\n    return {init}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("body", "inputs", "init", "why"), [
    ("    def __init__(self):\n        super().__init__()\n        self.d = nn.Dropout(0.5)\n"
     "    def forward(self, x):\n        return self.d(x)", "[torch.randn(32, 16)]", "[]", "dropout with p=0.5"),
    # a convolution has a route since round 12; a recurrence over a sequence still has none
    ("    def __init__(self):\n        super().__init__()\n        self.g = nn.GRU(16, 8)\n"
     "    def forward(self, x):\n        return self.g(x)[0]", "[torch.randn(5, 32, 16)]", "[]", "gru: recurrent cell"),
    # a sorted offsets vector is imported with a make_inputs now (test_kernelbench_structured.py); one whose
    # get_inputs() ignores every seed and has no float input would make every verification case the same
    ("    def forward(self, offsets):\n        return offsets[1:] - offsets[:-1]", "[torch.arange(0, 32, 8)]", "[]",
     "none changes with the seed"),
    ("    def forward(self, x):\n        raise RuntimeError('broken task')", "[torch.randn(32, 16)]", "[]",
     "RuntimeError: broken task"),
])
def test_tasks_that_cannot_be_imported_say_why_and_write_nothing(tmp_path: Path, body: str, inputs: str, init: str,
                                                                 why: str) -> None:
    task = _task(tmp_path, "t.py", body, inputs, init)
    with pytest.raises(TaskImportError, match=why.replace("(", r"\(")):
        import_task(task, tmp_path / "dest")
    assert not (tmp_path / "dest").exists()


def test_cli_import_runs_the_task_only_in_children_and_refuses_in_one_line(tmp_path: Path) -> None:
    marker = tmp_path / "seen.jsonl"
    good = _task(tmp_path, "12_Scale.py", "    def forward(self, x):\n        return x * 2.0", "[torch.randn(40, 32)]")
    good.write_text(f"import json, os\nwith open({str(marker)!r}, 'a') as fh:\n"
                    "    fh.write(json.dumps({'pid': os.getpid(), 'key': os.environ.get('OPENAI_API_KEY')}) + '\\n')\n"
                    + good.read_text(encoding="utf-8"), encoding="utf-8")
    bad = _task(tmp_path, "13_Drop.py", "    def __init__(self):\n        super().__init__()\n"
                "        self.d = nn.Dropout(0.2)\n    def forward(self, x):\n        return self.d(x)",
                "[torch.randn(40, 32)]")
    cmd = [sys.executable, "-m", "orchestrator", "import"]
    env = {**os.environ, "OPENAI_API_KEY": "sk-secret-for-the-test"}
    ok = subprocess.Popen([*cmd, str(good), str(tmp_path / "scale")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, cwd=REPO, env=env)
    out, err = ok.communicate(timeout=600)
    assert ok.returncode == 0, err
    assert "imported scale" in out and "B=40" in out and "B=53" in out
    seen = [json.loads(line) for line in marker.read_text().splitlines()]
    assert len(seen) >= 3  # describe, trace, and intake's golden run: each its own process
    assert all(s["pid"] != ok.pid for s in seen)  # never the CLI process
    assert all(s["key"] is None for s in seen)  # the allow-listed environment: no API key
    no = subprocess.run([*cmd, str(bad), str(tmp_path / "drop")], capture_output=True, text=True, cwd=REPO,
                        timeout=600, check=False)
    assert no.returncode == 1
    assert no.stderr.strip().startswith("error:") and "Traceback" not in no.stderr
    assert "dropout" in no.stderr and len(no.stderr.strip().splitlines()) <= 2
    assert not (tmp_path / "drop").exists()
    again = subprocess.run([*cmd, str(good), str(tmp_path / "scale")], capture_output=True, text=True, cwd=REPO,
                           timeout=600, check=False)
    assert again.returncode == 1 and "never overwrites" in again.stderr
