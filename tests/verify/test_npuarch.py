"""SPEC.md ``npuarch``: verify runs the candidate and the device on the architecture the kernels are written for.

Found on the real gym (session 20): quant_batch_matmul is an FP8 matmul for the Ascend 950 (``DAV_3510``); its gym
test runs with ``python -m runtime.emulator --npuarch DAV_3510``, but verify had no way to say so and every case
stopped with FC3000 ("only DAV_3510 architecture is supported ... run with --npuarch DAV_3510", a flag verify does
not take)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from npuarch_kernels import BF16_CHAIN, FP8MM_SPEC

from runtime.opdir import OpDirError, load_op_dir
from runtime.verify import verify

GOLDEN = """# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|------------------|----------------------|
# | 1 | matmul in fp32   | [16,32] x [32,16] -> [16,16] |
import numpy as np


def golden(a, b):
    c = a.astype(np.float32) @ b.astype(np.float32)
    return c
"""

KERNEL = """import numpy as np
import pypto


@pypto.frontend.jit
def fp8mm_kernel(a: pypto.Tensor([16, 32], pypto.DT_FP8E4M3), b: pypto.Tensor([32, 16], pypto.DT_FP8E4M3),
                 c: pypto.Tensor([16, 16], pypto.DT_FP32)):
    pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
    c.move(pypto.matmul(a, b, pypto.DT_FP32))


def fp8mm_wrapper(a, b):
    c = np.zeros((16, 16), np.float32)
    fp8mm_kernel(a, b, c)
    return c
"""


def _op(tmp_path: Path, arch_line: str) -> Path:
    op = tmp_path / "fp8mm"
    op.mkdir(parents=True)
    (op / "SPEC.md").write_text(FP8MM_SPEC % arch_line)
    (op / "golden.py").write_text(GOLDEN)
    (op / "fp8mm_impl.py").write_text(KERNEL)
    return op


def test_spec_npuarch_is_read_and_checked(tmp_path: Path) -> None:
    assert load_op_dir(_op(tmp_path / "a", "npuarch: DAV_3510\n")).spec.npuarch == "DAV_3510"
    assert load_op_dir(_op(tmp_path / "b", "")).spec.npuarch is None
    with pytest.raises(OpDirError, match="npuarch: must be one of 'DAV_2201' or 'DAV_3510', got 'DAV_9999'"):
        load_op_dir(_op(tmp_path / "c", "npuarch: DAV_9999\n"))


@pytest.mark.slow
def test_an_fp8_kernel_passes_on_the_950_it_is_written_for_and_fails_on_the_default(tmp_path: Path) -> None:
    op = _op(tmp_path / "950", "npuarch: DAV_3510\n")
    rep = verify(op, op / "fp8mm_impl.py", unseen_seed=0)
    assert rep.verdict == "PASS", rep.reasons
    assert rep.npuarch == "DAV_3510" and "npuarch" in rep.canonical_dict()
    op = _op(tmp_path / "a2", "")
    rep = verify(op, op / "fp8mm_impl.py", unseen_seed=0)
    assert rep.verdict == "FAIL_RUNTIME" and "FC3000" in " ".join(rep.reasons), rep.reasons
    assert rep.npuarch == "DAV_2201" and "npuarch" not in rep.canonical_dict()  # recorded hashes stay as they were


def test_the_device_process_runs_kernels_on_the_architecture_the_verifier_chose(tmp_path: Path) -> None:
    """A BF16 chain: the A2/A3 compiler keeps its intermediates in FP32, the 950 rounds each op (device/_promote) -
    the trusted device, not the candidate, decides, from the verifier's request."""
    import ml_dtypes

    import runtime.emulator as emu
    from runtime.sandbox import run_candidate

    emu.install()  # the in-process reference's `import pypto` is the emulator (as in tests/emulator)

    cand = tmp_path / "chain_impl.py"
    cand.write_text(BF16_CHAIN)
    x = np.random.default_rng(3).uniform(-3, 3, (8, 64)).astype(ml_dtypes.bfloat16)
    got = {}
    for arch in ("DAV_2201", "DAV_3510"):
        run = run_candidate(cand, "chain_wrapper", [("c0", [x])], device=True, repeat_first=False,
                            calling={"emulator_options": {"npuarch": arch}})
        assert run.status == "ok", (run.status, run.reason, run.stderr_tail[-2000:])
        got[arch] = run.runs[0].outputs[0]
        ns: dict = {}
        exec(compile(BF16_CHAIN, str(cand), "exec", dont_inherit=True), ns)  # noqa: S102 - the test's own kernel, in-process reference
        with emu.session(emu.Options(npuarch=arch)):
            want = ns["chain_wrapper"](x.copy())
        assert got[arch].tobytes() == want.tobytes(), arch
    assert got["DAV_2201"].tobytes() != got["DAV_3510"].tobytes()  # the data tell the two architectures apart


def test_the_device_accepts_exactly_the_architectures_a_spec_may_name() -> None:
    from runtime.sandbox import _device
    from runtime.targets import NPUARCHS

    assert set(_device._NPUARCHS) == set(NPUARCHS)
