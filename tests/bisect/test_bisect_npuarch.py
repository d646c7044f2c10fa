"""Bisect runs a kernel on the architecture and toolchain target verify runs it on (SPEC.md ``npuarch`` /
``pypto_target``).

Found in session 20's review: the bisect shim traced every kernel under ``Options(record=True)``, the defaults, so
an FP8 kernel for the Ascend 950 (``npuarch: DAV_3510``) that verify runs stopped in bisect with FC3000 ("only
DAV_3510 architecture is supported"), and the trusted replay ran its programs on the default architecture."""

from __future__ import annotations

from pathlib import Path

from npuarch_kernels import BF16_CHAIN, FP8MM_SPEC

from runtime.bisect import bisect

GOLDEN = """# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|------------------|----------------------|
# | 1 | matmul in fp32   | [16,32] x [32,16] -> [16,16] |
# | 2 | scale by 0.5     | [16,16] -> [16,16] |
import numpy as np


def golden(a, b):
    prod = a.astype(np.float32) @ b.astype(np.float32)
    c = prod * np.float32(0.5)
    return c
"""

KERNEL = """import numpy as np
import pypto


@pypto.frontend.jit
def fp8mm_kernel(a: pypto.Tensor([16, 32], pypto.DT_FP8E4M3), b: pypto.Tensor([32, 16], pypto.DT_FP8E4M3),
                 c: pypto.Tensor([16, 16], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    prod = pypto.matmul(a, b, pypto.DT_FP32)
    pypto.set_vec_tile_shapes(16, 16)
    c.move(pypto.mul(prod, 0.25))


def fp8mm_wrapper(a, b):
    c = np.zeros((16, 16), np.float32)
    fp8mm_kernel(a, b, c)
    return c
"""


def test_bisect_runs_an_fp8_kernel_on_the_950_its_spec_names(tmp_path: Path) -> None:
    op = tmp_path / "fp8mm"
    op.mkdir()
    (op / "SPEC.md").write_text(FP8MM_SPEC % "npuarch: DAV_3510\n")
    (op / "golden.py").write_text(GOLDEN)
    (op / "fp8mm_impl.py").write_text(KERNEL)
    report = bisect(op, "fp8mm_impl.py")
    assert "npuarch is DAV_2201" not in report.summary, report.summary  # (the default refuses the FP8 matmul)
    assert report.status == "DIVERGENCE_FOUND", (report.status, report.summary)
    assert report.first_divergence is not None and report.first_divergence.line == 11, report.summary


def test_the_trusted_replay_runs_the_captured_programs_on_the_architecture_they_ran_on(tmp_path: Path) -> None:
    """A BF16 chain whose bytes differ between A2/A3 (FP32 intermediates) and the 950 (each op rounded): bisect's
    replay of the captured program gives the candidate's own bytes on either architecture."""
    import ml_dtypes
    import numpy as np

    from runtime.bisect._replay import _run_calls
    from runtime.bisect._run import run_captured

    cand = tmp_path / "chain_impl.py"
    cand.write_text(BF16_CHAIN)
    x = np.random.default_rng(3).uniform(-3, 3, (8, 64)).astype(ml_dtypes.bfloat16)
    got = {}
    for arch in ("DAV_2201", "DAV_3510"):
        run = run_captured(cand, "chain_wrapper", [x], calling={"emulator_options": {"npuarch": arch}})
        assert run.status == "ok", (run.status, run.reason)
        assert [c.options.get("npuarch") for c in run.calls] == [arch]
        err, final, why, _kargs = _run_calls(run.calls, [x], None)
        assert err is None and not why, (err, why)
        assert final["y"].tobytes() == run.outputs[0].tobytes(), arch
        got[arch] = run.outputs[0]
    assert got["DAV_2201"].tobytes() != got["DAV_3510"].tobytes()  # the data tell the two architectures apart
