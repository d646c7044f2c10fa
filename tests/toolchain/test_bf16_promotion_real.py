"""Where the real pypto 0.2.0 compiler for A2/A3 rounds a BF16 chain: read from the IR it compiles in SIM mode.

Each probe kernel of fixtures/bf16_promotion.py is compiled by the real wheel (SIM writes ``output/*/program.json``);
the leaf function's ops with their operand dtypes are the evidence for the emulator's A2/A3 rule
(runtime/emulator/device/_promote.py; the emulator side: tests/emulator/test_bf16_promotion.py). Runs where the
toolchain extra is installed (conftest); one SIM compile per probe, a few seconds each.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

PROBES = Path(__file__).resolve().parent / "fixtures" / "bf16_promotion.py"
FP32, BF16 = 7, 8
pytestmark = pytest.mark.slow  # a real SIM compile per test (~4 s each)  # pypto DataType codes in program.json (DT_FP32, DT_BF16)


def _leaf_ops(tmp_path: Path, name: str, pypto_python: str) -> list[tuple[str, tuple[int, ...], tuple[int, ...], dict]]:
    """(opcode, input dtypes, output dtypes, op_attr) of the compiled leaf function of probe ``name``."""
    work = tmp_path / name
    work.mkdir()
    proc = subprocess.run([pypto_python, str(PROBES), name], cwd=work, capture_output=True, text=True, timeout=600,
                          check=False)
    assert "RESULT ok" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    program = json.loads(next(work.glob("output/*/program.json")).read_text())
    leaves = [fn for fn in program["functions"] if fn["graphtype"] == 1]
    assert len(leaves) == 1, [fn["func_magicname"] for fn in leaves]
    fn = leaves[0]
    raw = {r.get("rawmagic", r.get("magic")): r for r in fn.get("rawtensors", [])}
    tensors = {t["magic"]: t for t in fn["tensors"]}

    def dtypes(ids: list[int]) -> tuple[int, ...]:
        return tuple(int(raw[tensors[i]["rawtensor"]]["datatype"]) for i in ids)

    return [(op["opcode"], dtypes(op.get("ioperands", [])), dtypes(op.get("ooperands", [])), op.get("op_attr", {}))
            for op in fn["operations"] if op["opcode"] not in ("SYNC_SRC", "SYNC_DST", "BAR.V", "PHASE1", "PHASE2")]


def _casts(ops: list) -> list[tuple[int, int]]:
    return [(i[0], o[0]) for c, i, o, _ in ops if c == "CAST"]


ARITH = {"ADD", "SUB", "MUL", "MULS", "ADDS", "EXP"}


def test_a_bf16_chain_is_fp32_and_rounded_once_at_the_write(tmp_path: Path, pypto_python: str) -> None:
    ops = _leaf_ops(tmp_path, "chain", pypto_python)
    assert all(set(i) | set(o) == {FP32} for c, i, o, _ in ops if c in ARITH), ops
    assert _casts(ops).count((FP32, BF16)) == 1
    assert [c for c, *_ in ops][-2:] == ["CAST", "COPY_OUT"] and ops[-2][1:3] == ((FP32,), (BF16,))


def test_locals_setitem_keeps_fp32_assemble_rounds(tmp_path: Path, pypto_python: str) -> None:
    ops = _leaf_ops(tmp_path, "local_tensors", pypto_python)
    # one round trip for the assemble into the local `u`, one rounding at the write; none for `t[:] =` or the
    # same-dtype cast
    assert _casts(ops) == [(BF16, FP32), (BF16, FP32), (FP32, BF16), (BF16, FP32), (FP32, BF16)], ops
    assert all(set(i) | set(o) == {FP32} for c, i, o, _ in ops if c in ARITH), ops


def test_an_explicit_cast_from_bf16_rounds_its_operand(tmp_path: Path, pypto_python: str) -> None:
    ops = _leaf_ops(tmp_path, "cast_up", pypto_python)
    cs = _casts(ops)
    i = cs.index((FP32, BF16))
    assert cs[i + 1] == (BF16, FP32), ops


def test_the_cube_reads_bf16_and_its_result_feeds_vector_ops_as_fp32(tmp_path: Path, pypto_python: str) -> None:
    ops = _leaf_ops(tmp_path, "cube", pypto_python)
    codes = [c for c, *_ in ops]
    l0a = codes.index("L1_TO_L0A")
    assert (FP32, BF16) in _casts(ops[:l0a]), ops  # the vector product is rounded before the cube reads it
    mm = next(op for op in ops if op[0] == "A_MUL_B")
    assert mm[1] == (BF16, BF16) and mm[2] == (FP32,)
    add = next(op for op in ops if op[0] == "ADD")
    assert add[1] == (FP32, FP32), ops
    assert ("COPY_OUT", (FP32,), (FP32,)) in [op[:3] for op in ops[codes.index("A_MUL_B"):]]


def test_python_scalars_are_bf16_elements_in_an_fp32_chain(tmp_path: Path, pypto_python: str) -> None:
    ops = _leaf_ops(tmp_path, "scalar", pypto_python)
    muls = next(op for op in ops if op[0] == "MULS")
    assert muls[1:3] == ((FP32,), (FP32,))
    assert muls[3]["SCALAR"]["data_type"] == BF16 and muls[3]["SCALAR"]["value"] == pytest.approx(0.1)
    assert _casts(ops) == [(BF16, FP32), (FP32, BF16)], ops
