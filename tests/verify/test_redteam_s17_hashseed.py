"""Red team s17, c01: the candidate's hash seed was 0 in every verification, a "being verified" trigger.

``hash("pto-forge")`` had one known value inside the sandbox (``PYTHONHASHSEED=0``) and a random one on a real host,
so a kernel that computed its tail tile only when it saw that value passed every verification. The candidate's seed
is now derived from the verification's secret seed (unpredictable, identical in a replay) and the runner removes the
variable from the candidate's ``os.environ``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from verify_helpers import EMULATOR, KERNELS, make_op, settings

import runtime.verify._engine as engine
from runtime.sandbox import SandboxError, run_candidate
from runtime.sandbox.env_policy import candidate_hash_seed, child_env
from runtime.verify import verify

PROBE = '''\
import os, sys
import numpy as np


def probe_wrapper(x):
    return np.array([hash("pto-forge"), "PYTHONHASHSEED" in os.environ, sys.flags.hash_randomization], np.int64)
'''


def _hash_with(seed: int) -> int:
    out = subprocess.run([sys.executable, "-c", 'print(hash("pto-forge"))'], capture_output=True, text=True,
                         check=True, env={**child_env("/tmp"), "PYTHONHASHSEED": str(seed)})
    return int(out.stdout)


def test_the_hash_seed_is_a_function_of_the_secret_never_0_and_spread() -> None:
    seeds = [candidate_hash_seed(s) for s in range(2000)]
    assert seeds == [candidate_hash_seed(s) for s in range(2000)]  # a replay hashes the same way
    assert all(1 <= s <= 0xFFFFFFFF for s in seeds) and len(set(seeds)) == len(seeds)
    assert candidate_hash_seed(2**63 - 1) != candidate_hash_seed(0)
    assert child_env("/w")["PYTHONHASHSEED"] == "0"  # trusted children (golden, device) keep 0
    assert child_env("/w", hash_seed=seeds[0])["PYTHONHASHSEED"] == str(seeds[0])
    with pytest.raises(ValueError):
        child_env("/w", hash_seed=1 << 32)


def test_the_candidate_hashes_with_its_seed_and_cannot_read_it(tmp_path: Path) -> None:
    cand = tmp_path / "probe_impl.py"
    cand.write_text(PROBE)
    seed = candidate_hash_seed(123456789)
    run = run_candidate(cand, "probe_wrapper", [("c0", [np.zeros(2, np.float32)])], emulator=EMULATOR,
                        repeat_first=False, hash_seed=seed)
    assert run.status == "ok", (run.reason, run.stderr_tail)
    value, visible, randomized = run.runs[0].outputs[0].tolist()
    assert value == _hash_with(seed) != _hash_with(0)
    assert (visible, randomized) == (0, 1)  # as on a host that randomizes hashing: no variable, randomization on


def test_verify_derives_the_seed_from_the_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    op = make_op(tmp_path, "silu")
    seen: list[int] = []

    def spy(*args, **kwargs):
        seen.append(kwargs["hash_seed"])
        raise SandboxError("spy: nothing runs")

    monkeypatch.setattr(engine, "run_candidate", spy)
    for seed in (5, 5, 6):
        assert verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=seed).verdict == "ERROR"
    assert seen[0] == seen[1] != seen[2] and 0 not in seen
    (op / "silu_impl.py").write_text((op / "silu_impl.py").read_text() + "\n# another file text\n")
    verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=5)
    assert seen[3] != seen[0]  # the secret is the run's seed x the verified file, like the unseen cases'


@pytest.mark.parametrize("trigger,verdict", [("==", "FAIL_NUMERIC"), ("!=", "PASS")])
def test_a_kernel_keyed_on_the_seed_0_hash_fails(tmp_path: Path, trigger: str, verdict: str) -> None:
    """``==``: correct only where the hash is the seed-0 one (passed every verification before); ``!=``: the control,
    correct everywhere but there - it passes now, so the trigger really is off in the sandbox."""
    text = (KERNELS / "s17_c01_hashseed_trigger.py").read_text()
    op = make_op(tmp_path, "silu", {"silu_impl.py": text.replace('== SEED0_HASH', f'{trigger} SEED0_HASH')})
    report = verify(op, op / "silu_impl.py", settings=settings(), unseen_seed=1717)
    assert report.verdict == verdict, report.reasons[:3]
