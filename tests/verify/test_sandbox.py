"""The sandbox on its own: confinement layers, environment, limits, the array round trip."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from verify_helpers import EMULATOR

from runtime.arrays import load_arrays, save_arrays
from runtime.sandbox import SandboxPolicy, isolation_level, run_candidate

PROBE = '''
import os, sys, socket
import numpy as np
import pypto

@pypto.frontend.jit
def k(x: pypto.Tensor([2, 8], pypto.DT_FP32), y: pypto.Tensor([2, 8], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(2, 8)
    for i in pypto.loop(1, name="one", idx_name="i"):
        pypto.assemble(pypto.view(x, [2, 8], [0, 0]) + 1.0, [0, 0], y)

def _try(f):
    try:
        f()
        return 1.0
    except Exception:
        return 0.0

def probe_wrapper(x):
    y = np.zeros_like(x)
    k(x, y)
    facts = np.array([
        float("OPENAI_API_KEY" in os.environ or "SECRET_FOR_TEST" in os.environ),
        float("PYTHONHASHSEED" not in os.environ and sys.flags.hash_randomization == 0),
        float(os.environ.get("OPENBLAS_NUM_THREADS") == "1"),
        _try(lambda: open("/etc/hostname").read()),
        _try(lambda: open("scratch.txt", "w").write("ok")),
        _try(lambda: socket.socket()),
        _try(lambda: os.listdir("/")),
        float(len(os.listdir(".")) <= 8),
    ], dtype=np.float32)
    return y, facts
'''


def _probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SECRET_FOR_TEST", "x")
    cand = tmp_path / "probe_impl.py"
    cand.write_text(PROBE)
    x = np.arange(16, dtype=np.float32).reshape(2, 8)
    run = run_candidate(cand, "probe_wrapper", [("c0", [x])], emulator=EMULATOR)
    assert run.status == "ok", (run.reason, run.stderr_tail)
    first = run.runs[0]
    assert first.record["kernel_calls"] == 1 and first.record["from_kernel"] == [True, False]
    np.testing.assert_array_equal(first.outputs[0], x + 1)
    assert len(run.runs) == 2  # the first case is repeated at the end
    return run, first.outputs[1].tolist()


def test_environment_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With or without Bubblewrap: no secrets in the child's environment, the hash seed (0 here: no verification's
    secret) not in it, one BLAS thread."""
    _, (secret, hashseed, blas, *_) = _probe(tmp_path, monkeypatch)
    assert (secret, hashseed, blas) == (0.0, 1.0, 1.0)


def test_layers_environment_and_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The OS layers (Bubblewrap + seccomp): no /etc, no socket, no listing of /, a small private work dir."""
    level, why = isolation_level()
    if not level.startswith("bwrap"):
        pytest.skip(f"bubblewrap is not usable here: {why}")
    run, facts = _probe(tmp_path, monkeypatch)
    assert all(run.layers.values()), run.layers
    secret, hashseed, blas, read_etc, write_cwd, sock, list_root, small_cwd = facts
    assert (secret, hashseed, blas) == (0.0, 1.0, 1.0)
    assert (read_etc, write_cwd, sock, list_root, small_cwd) == (0.0, 1.0, 0.0, 0.0, 1.0)
    assert any("/etc/hostname" in d for d in run.denied)


def test_address_space_limit_turns_allocation_into_memory_error(tmp_path: Path) -> None:
    cand = tmp_path / "hog_impl.py"
    cand.write_text("import numpy as np\n\ndef hog_wrapper(x):\n    return np.ones(2**31, dtype=np.float64)\n")
    run = run_candidate(cand, "hog_wrapper", [("c0", [np.zeros(2, np.float32)])],
                        policy=SandboxPolicy(memory_bytes=2 * 1024**3), emulator=EMULATOR, repeat_first=False)
    assert run.status == "ok"
    assert run.runs[0].record["error"]["type"] == "MemoryError"


def test_import_error_is_reported_not_raised(tmp_path: Path) -> None:
    cand = tmp_path / "broken_impl.py"
    cand.write_text("def broken_wrapper(x):\n    return x +\n")
    run = run_candidate(cand, "broken_wrapper", [("c0", [np.zeros(2, np.float32)])], emulator=EMULATOR)
    assert run.status == "import_error" and "SyntaxError" in run.reason


def test_npz_round_trip_keeps_low_precision_dtypes(tmp_path: Path) -> None:
    arrays = {"a": np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4).astype(ml_dtypes.bfloat16),
              "b": np.ones(5, dtype=ml_dtypes.float8_e5m2), "c": np.arange(3, dtype=np.int64),
              "d": np.array([True, False])}
    save_arrays(tmp_path / "x.npz", arrays)
    back = load_arrays(tmp_path / "x.npz")
    for k, v in arrays.items():
        assert back[k].dtype == v.dtype and back[k].tobytes() == v.tobytes()
