"""Intake: the full check of an op dir, the degenerate-golden rejection, and the CLI (exit codes, no writes)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from opdir_helpers import BASE_GOLDEN, BASE_SPEC, REPO, SILU, copy_silu, snapshot, write_op

from runtime.opdir import intake


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrator", "intake", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_silu_intake_ok_and_writes_nothing(tmp_path: Path) -> None:
    root = copy_silu(tmp_path / "silu")
    before = snapshot(root)
    report = intake(root)
    assert report.ok, [str(p) for p in report.problems]
    assert report.spec is not None and report.spec.op_name == "silu"
    assert len(report.cases) == 12 and len(report.golden) == 12
    assert report.golden[0].outputs == {"y": "fp32[64, 256]"}
    assert report.complexity is not None and report.complexity.level == "L0"
    assert [r.index for r in report.inventory] == [1, 2, 3, 4]
    assert snapshot(root) == before


def test_base_fixture_ok(tmp_path: Path) -> None:
    report = intake(write_op(tmp_path / "op"))
    assert report.ok, [str(p) for p in report.problems]


def test_notes_for_many_cases_and_static_shapes(tmp_path: Path) -> None:
    spec = BASE_SPEC.replace("p0_shapes: [{B: 16, D: 32}, {B: 21, D: 32}]",
                             "p0_shapes: [" + ", ".join(f"{{B: {b}, D: 8}}" for b in range(1, 10)) + "]")
    report = intake(write_op(tmp_path / "op", spec=spec), run_golden=False)
    assert report.ok and len(report.cases) == 27
    assert any("27 cases" in n for n in report.notes)
    assert intake(SILU, run_golden=False).notes == []


def test_constant_golden_rejected(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("return y.astype(x.dtype)", "return np.full_like(x, 3.5)")
    report = intake(write_op(tmp_path / "op", golden=golden))
    assert not report.ok
    (p,) = report.problems
    assert p.field == "outputs.y" and "golden output is constant (3.5 everywhere)" in p.message
    assert (p.file, p.line) == ("golden.py", 9)  # the def golden line


def test_all_zero_golden_rejected(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("return y.astype(x.dtype)", "return np.zeros_like(x)")
    (p,) = intake(write_op(tmp_path / "op", golden=golden)).problems
    assert "all zeros" in p.message


def test_input_independent_golden_rejected(tmp_path: Path) -> None:
    # not constant within one case, but the same for every seed: ignores its inputs
    golden = BASE_GOLDEN.replace("return y.astype(x.dtype)",
                                 "return np.arange(x.size, dtype=x.dtype).reshape(x.shape)")
    (p,) = intake(write_op(tmp_path / "op", golden=golden)).problems
    assert "identical for seeds 0 and 1" in p.message and "does not depend on the inputs" in p.message


def test_golden_all_zero_on_the_probe_pair_only_is_accepted(tmp_path: Path) -> None:
    """KernelBench level2/9 (`relu((x @ W.T + b - 2) * 1.5)` at K=10) is all zeros on both probe seeds of its first
    shape and not elsewhere: that is no evidence it ignores its inputs (its import was refused)."""
    golden = BASE_GOLDEN.replace("return y.astype(x.dtype)",
                                 "return (np.zeros_like(x) if x.shape[0] == 16 else y).astype(x.dtype)")
    report = intake(write_op(tmp_path / "op", golden=golden))
    assert report.ok, [str(p) for p in report.problems]
    # still refused: the same non-constant output for both seeds
    golden = BASE_GOLDEN.replace("return y.astype(x.dtype)",
                                 "return (np.arange(x.size).reshape(x.shape) if x.shape[0] == 16 else y).astype(x.dtype)")
    (p,) = intake(write_op(tmp_path / "op2", golden=golden)).problems
    assert "does not depend on the inputs" in p.message


def test_output_shape_and_dtype_checked(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("return y.astype(x.dtype)", "return y[:, :4].astype(np.float64)")
    report = intake(write_op(tmp_path / "op", golden=golden))
    assert not report.ok
    assert "golden returned fp64[16, 4], SPEC.md declares fp32[16, 32]" in report.problems[0].message


def test_nan_output_rejected(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("return y.astype(x.dtype)", "return np.log(y).astype(x.dtype)")
    report = intake(write_op(tmp_path / "op", golden=golden))
    assert any("contains NaN" in p.message for p in report.problems)


def test_intake_collects_spec_problems_without_raising(tmp_path: Path) -> None:
    report = intake(write_op(tmp_path / "op", spec=BASE_SPEC.replace("dtype: fp32}", "dtype: fp33}")))
    assert not report.ok and report.spec is None
    assert str(report.problems[0]).startswith("SPEC.md:5: inputs[1].dtype: unknown dtype 'fp33'")


def test_impossible_input_range_reported(tmp_path: Path) -> None:
    spec = BASE_SPEC.replace("range: [-2.0, 2.0]", "range: [100000.0, 200000.0]").replace(
        "supported_dtypes: [fp32]", "supported_dtypes: [fp16]").replace("tolerance: {fp32", "tolerance: {fp16")
    report = intake(write_op(tmp_path / "op", spec=spec))
    (p,) = report.problems
    assert p.file == "SPEC.md" and "no fp16 value lies in the range" in p.message


def test_golden_exception_reported(tmp_path: Path) -> None:
    golden = BASE_GOLDEN.replace("    y = scaled + b\n", "    y = scaled + b[:3]\n")
    report = intake(write_op(tmp_path / "op", golden=golden))
    (p,) = report.problems
    assert p.line == 11 and p.message.startswith("golden raised ValueError")


def test_cli_ok() -> None:
    proc = cli("workspace/silu")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for needle in ("contract: silu", "B77_D256-bf16-s2-small", "golden function inventory", "module_count", "L0",
                   "intake ok"):
        assert needle in out
    assert "Traceback" not in proc.stderr


def test_cli_broken_dir_exit_1_with_problem_list(tmp_path: Path) -> None:
    root = write_op(tmp_path / "op", spec=BASE_SPEC.replace("{B: 21, D: 32}", "{B: 21}"),
                    golden=BASE_GOLDEN.replace("return y.astype(x.dtype)", "return y +"))
    before = snapshot(root)
    proc = cli(str(root))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "2 problems" in proc.stderr
    assert "SPEC.md:9: p0_shapes[1]: does not bind the named dim(s) D" in proc.stderr
    assert "golden.py:12: golden: syntax error" in proc.stderr
    assert snapshot(root) == before


def test_cli_missing_dir_and_json(tmp_path: Path) -> None:
    proc = cli(str(tmp_path / "nowhere"))
    assert proc.returncode == 1 and "nowhere: does not exist" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("--json", "--no-golden", "workspace/silu")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["ok"] is True and data["complexity"]["module_count"] == 1 and data["golden"] == []


ATTN_SPEC = """\
---
op_name: attention_bwd
inputs:
  - {name: q, shape: [B, S, K], dtype: T}
  - {name: k, shape: [B, S, K], dtype: T}
  - {name: v, shape: [B, S, K], dtype: T}
  - {name: do, shape: [B, S, K], dtype: T}
outputs:
  - {name: dq, shape: [B, S, K], dtype: T}
  - {name: dk, shape: [B, S, K], dtype: T}
  - {name: dv, shape: [B, S, K], dtype: T}
dynamic_axes: [S]
p0_shapes: [{B: 2, S: 32, K: 16}]
supported_dtypes: [fp32]
tolerance: {fp32: {atol: 1.0e-4, rtol: 1.0e-4}}
---
"""

ATTN_HEADER = """\
# Golden function inventory
# | # | Golden operation             | Shape transformation        |
# |---|------------------------------|-----------------------------|
# --- Module M1: recompute probabilities, dV and dS ---
# | 1 | s = q @ k^T * scale          | [B,S,K]@[B,K,S] -> [B,S,S]  |
# | 2 | softmax(s)                   | [B,S,S] -> [B,S,S]          |
# | 3 | dv = p^T @ do                | [B,S,S]@[B,S,K] -> [B,S,K]  |
# | 4 | ds = p * (dp - rowsum(dp*p)) | [B,S,S] -> [B,S,S]          |
# --- Module M2: dQ and dK ---
# | 5 | dq = ds @ k * scale          | [B,S,S]@[B,S,K] -> [B,S,K]  |
# | 6 | dk = ds^T @ q * scale        | [B,S,S]@[B,S,K] -> [B,S,K]  |
"""


def test_multi_module_op_dir(tmp_path: Path) -> None:
    golden = ATTN_HEADER + (Path(__file__).parent / "fixtures" / "complexity" / "attention_bwd.py").read_text()
    report = intake(write_op(tmp_path / "attn", spec=ATTN_SPEC, golden=golden))
    assert report.ok, [str(p) for p in report.problems]
    assert report.complexity is not None and (report.complexity.module_count, report.complexity.level) == (2, "L1")
    assert [(r.index, r.module) for r in report.inventory] == [(1, 1), (2, 1), (3, 1), (4, 1), (5, 2), (6, 2)]
    # markers in the table and in the code are all reported, with their lines
    assert [(m.module, m.line) for m in report.markers] == [(1, 4), (2, 9), (1, 21), (2, 29)]
    assert report.cases[-1].tail and report.cases[-1].dims["S"] == 45  # derived tail case
    g = report.golden[0]
    assert {"ds", "dv", "p", "dq", "dk"} <= set(g.intermediates)  # module boundary candidates
    assert g.outputs == {"dq": "fp32[2, 32, 16]", "dk": "fp32[2, 32, 16]", "dv": "fp32[2, 32, 16]"}
