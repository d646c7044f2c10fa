"""Golden and candidate get one environment: same numerics settings, no secrets, no hint of a sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from verify_helpers import EMULATOR

from runtime.opdir import GoldenError, load_op_dir, run_golden
from runtime.sandbox import run_candidate
from runtime.sandbox.env_policy import blas_coretype, child_env

SPEC = """\
---
op_name: envprobe
inputs:
  - {name: x, shape: [B], dtype: fp32, range: [-1.0, 1.0]}
outputs:
  - {name: y, shape: [B], dtype: fp32}
p0_shapes: [{B: 4}]
supported_dtypes: [fp32]
tolerance: {fp32: {atol: 1.0e-5, rtol: 1.0e-5}}
seeds: [0, 1, 2]
---
# envprobe
"""

# the golden reports its environment through the one channel it has to us: an exception message
GOLDEN = """\
# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|------------------|----------------------|
# | 1 | copy             | [B] -> [B]           |
import json, os


def golden(x):
    raise RuntimeError("ENV=" + json.dumps(dict(os.environ), sort_keys=True))
"""

CANDIDATE = """\
import json, os
import numpy as np


def envprobe_wrapper(x):
    blob = json.dumps(dict(os.environ), sort_keys=True).encode()
    return np.frombuffer(blob, dtype=np.uint8).copy()
"""


def _golden_env(tmp_path: Path) -> dict[str, str]:
    root = tmp_path / "op"
    root.mkdir()
    (root / "SPEC.md").write_text(SPEC)
    (root / "golden.py").write_text(GOLDEN)
    op = load_op_dir(root)
    with pytest.raises(GoldenError) as info:
        run_golden(op, op.cases()[0])
    text = str(info.value) + " ".join(p.message for p in info.value.problems)
    start = text.index("ENV=") + 4
    return json.JSONDecoder().raw_decode(text[start:])[0]


def _candidate_env(tmp_path: Path) -> dict[str, str]:
    cand = tmp_path / "envprobe_impl.py"
    cand.write_text(CANDIDATE)
    run = run_candidate(cand, "envprobe_wrapper", [("c0", [np.zeros(4, np.float32)])], emulator=EMULATOR,
                        repeat_first=False)
    assert run.status == "ok", (run.reason, run.stderr_tail)
    return json.loads(run.runs[0].outputs[0].tobytes())


def test_golden_and_candidate_see_the_same_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("MY_PRIVATE_THING", "x")
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "8")
    golden, cand = _golden_env(tmp_path), _candidate_env(tmp_path)
    work_dependent = {"HOME", "TMPDIR", "PYTHONHASHSEED"}
    assert {k: v for k, v in golden.items() if k not in work_dependent} == \
        {k: v for k, v in cand.items() if k not in work_dependent}
    # the candidate's runner removes PYTHONHASHSEED (a host that randomizes hashing does not set it: red team s17)
    assert set(golden) == set(cand) | {"PYTHONHASHSEED"} == set(child_env("/w")) and golden["PYTHONHASHSEED"] == "0"
    for env in (golden, cand):
        assert "OPENAI_API_KEY" not in env and "MY_PRIVATE_THING" not in env
        assert env["MKL_CBWR"] == "AUTO"  # the user's numerics selection reaches both sides alike
        assert env.get("OPENBLAS_CORETYPE") == blas_coretype()  # the BLAS core: one for every host (session 42)
        assert env["OPENBLAS_NUM_THREADS"] == "1"
        # (the work-directory paths in HOME/TMPDIR are the sandbox runner's to make neutral)
        assert not any(w in (k + v).upper() for k, v in env.items() if k not in work_dependent
                       for w in ("SANDBOX", "FORGE", "VERIFY"))


def test_child_env_is_an_allow_list() -> None:
    env = child_env("/w", parent={"AWS_SECRET_ACCESS_KEY": "x", "MKL_CBWR": "AVX2", "PATH": "/x"})
    assert env["PATH"] == "/usr/bin:/bin" and env["HOME"] == env["TMPDIR"] == "/w"
    assert env["MKL_CBWR"] == "AVX2" and "AWS_SECRET_ACCESS_KEY" not in env
    assert "MKL_CBWR" not in child_env("/w", parent={})
