"""The instrumentation of ``bench/emulator_real.py`` times kernel calls without breaking them.

Why: the hook wraps emulator internals by signature (`_executor.prepared_for`, the executor, `lower`). When
``prepared_for`` gained its ``npuarch`` argument (A2/A3 BF16 promotion) the hook's wrapper kept the old
one-argument form, and every gym operator of the speed table failed with a TypeError - the table the emulator's
speed work steers by could not be produced at all, and nothing in the suite noticed.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / "bench" / "emulator_real_hook"

SCRIPT = """
import numpy as np
import pypto

@pypto.frontend.jit
def double(x: pypto.Tensor([64, 32], pypto.DT_FP32), out: pypto.Tensor([64, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, 32)
    for i in pypto.loop(4):
        pypto.assemble(pypto.view(x, [16, 32], [i * 16, 0]) * 2.0, [i * 16, 0], out)

def reference(x):
    return x * 2.0

x = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
for _ in range(2):  # the second call hits the trace cache: the path that prepares a program through the hook
    out = np.zeros_like(x)
    double(x, out)
    assert (out == reference(x)).all()
print("ok")
"""


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
@pytest.mark.heavy_in_ci  # a CLI process that imports the emulator (~4 s of CPU), in CI: the bench broke unseen once
def test_the_hook_times_kernel_calls_and_the_calls_still_work(tmp_path: Path) -> None:
    out = tmp_path / "records.jsonl"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(FORGE_EMUREAL_OUT=str(out), FORGE_EMUREAL_GOLDEN=json.dumps([{"func": "reference"}]),
               PYTHONPATH=os.pathsep.join([str(HOOK), str(ROOT)]))
    script = tmp_path / "user_script.py"  # a kernel needs a source file, as with real pypto
    script.write_text(SCRIPT, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "runtime.emulator", "--quiet", str(script)], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr
    recs = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    kernels = [k for k in recs if k["type"] == "kernel"]
    assert [k["ok"] for k in kernels] == [True, True]
    assert all(k["exec_cpu"] > 0 and k["args_bytes"] == 2 * 64 * 32 * 4 for k in kernels)
    assert "program_cpu" in kernels[0] and "lower_cpu" in kernels[0]
    # the collector's time inside kernel calls, when it ran there (see the hook's _gc_callback)
    assert all(0 <= k.get("gc_cpu", 0.0) <= k["cpu"] for k in kernels)
    goldens = [g for g in recs if g["type"] == "golden"]
    assert [g["func"] for g in goldens] == ["reference", "reference"]  # the golden, timed apart from the kernel
    assert all(0 <= g["gc_cpu"] <= g["cpu"] for g in goldens)
    assert not [r for r in recs if r["type"] == "hook-error"]


def test_each_gym_operator_runs_in_the_setting_its_test_is_written_for(tmp_path: Path) -> None:
    """runs.tsv's line, but quant_batch_matmul on a 950 and gqa_decode_attn installed (`SETTING`): their lines fail
    for reasons that are not the emulator's (docs/emulator-fidelity.md), and a table without them is not the gym's."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import emulator_real as bench
    finally:
        sys.path.remove(str(ROOT / "bench"))
    gym = tmp_path / "gym"
    plain, path = bench.gym_command(gym, "sigmoid", "test_sigmoid.py", [])
    assert plain[-1] == "test_sigmoid.py" and "--npuarch" not in plain and "--site-path" not in plain
    assert path.split(os.pathsep)[0] == str(gym / "ops" / "sigmoid" / "src")
    qbm, _ = bench.gym_command(gym, "quant_batch_matmul", "test_quant_batch_matmul.py", ["--compat=head"])
    assert qbm[qbm.index("--npuarch") + 1] == "DAV_3510" and qbm[-2:] == ["--compat=head", "test_quant_batch_matmul.py"]
    gqa, gpath = bench.gym_command(gym, "gqa_decode_attn", "tests/x.py", [])
    src = str(gym / "ops" / "gqa_decode_attn" / "src")
    assert gqa[gqa.index("--site-path") + 1] == src and src not in gpath.split(os.pathsep)
    assert gpath.split(os.pathsep)[-1] == ""  # the working directory, as an unset PYTHONPATH gives the child


def test_bench_run_kills_the_whole_group_on_timeout(tmp_path):
    """A measured run that hangs ends with its whole process group: py-spy stops the process it samples, and a
    hung ``--native`` profile (quant_batch_matmul, 4 Dec) held the bench for 55 minutes; killing py-spy alone
    would leave the stopped emulator behind."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import emulator_real
    finally:
        sys.path.remove(str(ROOT / "bench"))
    marker = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time\n"
            f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
            "print('started', flush=True)\n"
            "time.sleep(60)\n")
    out, rc = emulator_real.run_group([sys.executable, "-c", code], cwd=tmp_path, env=dict(os.environ), timeout=3)
    assert rc == -1 and "started" in out and out.rstrip().endswith("timeout")
    pid = int(marker.read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), "the grandchild outlived the timeout"
    out, rc = emulator_real.run_group([sys.executable, "-c", "print('ok'); raise SystemExit(3)"], cwd=tmp_path,
                                      env=dict(os.environ), timeout=30)
    assert (out, rc) == ("ok\n", 3)


def _gone(pid: int) -> bool:
    """The process is dead (a zombie waiting for init to reap it counts)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def test_bench_gym_folder_is_absolute_for_a_relative_forge_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """``FORGE_SHARED=../shared bench/emulator_real.py`` ran every operator whose test imports ``<op>/src`` with
    ``ModuleNotFoundError``: each run changes into its operator's folder, where the relative path named nothing
    (5 Dec: flash_attention_score_grad "fail", rc 3). Both bench entry points resolve it first."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import emulator_real
        import gym_runs
    finally:
        sys.path.remove(str(ROOT / "bench"))
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("FORGE_SHARED", "../shared")
    assert gym_runs.gym_dir(None) == (ROOT.parent / "shared" / "gym").resolve()
    assert gym_runs.gym_dir("../x/gym").is_absolute()
    assert emulator_real.shared() == (ROOT.parent / "shared").resolve()
