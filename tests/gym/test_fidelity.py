"""Fidelity probes (issue #16): each records what the real pypto 0.2.0 toolchain does with a gym-style construct
and checks the emulator does the same.

Every probe in ``fidelity_probes/`` is an unmodified PyPTO script printing one ``RESULT`` line (and, for the
emulator, a ``VALUE`` line with the largest error against a numpy reference). ``REAL`` holds the outcome the
real wheel gave, recorded on this machine with
``cd /tmp/x && HOME=/tmp/x /work/pypto-venv/bin/python tests/gym/fidelity_probes/<probe>.py`` (pypto 0.2.0,
``RunMode.SIM``, torch 2.13.0 CPU). SIM compiles the kernel and runs a cost model but writes no numbers
(spec/pypto-api.md §0.3): what it tells is accept/reject and the error kind, never the values. Where a value
matters, the emulator's numbers are checked against numpy here instead, and the docstring says the real
toolchain cannot tell. ``bench/crosscheck_pypto.py --probes tests/gym/fidelity_probes`` re-runs the comparison
against the real wheel.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBES = Path(__file__).parent / "fidelity_probes"

# probe -> outcome of the real pypto 0.2.0 SIM: "ok" or the Python exception type it raised
REAL: dict[str, str] = {
    "f01_move_rank_differs": "ok",
    "f02_reshape_symbolic": "TypeError",  # 0.2.0: Reshape() dstShape must be ints (HEAD accepts symbols)
    "f03_poison_final_ok": "ok",
    "f04_broadcast_lower_rank": "ok",
    "f05_batched_matmul_no_vec_tiles": "ok",
    "f06_raise_in_pruned_branch": "ok",
    "f07_dynamic_loop_add_scalar": "ok",
    "f08_whole_param_read_bytes": "ok",
}


def _emulate(probe: str, *flags: str) -> tuple[str, str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_FORGE_EMULATOR_CHILD")}
    proc = subprocess.run([sys.executable, "-m", "runtime.emulator", *flags, str(PROBES / f"{probe}.py")],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    result = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")), "RESULT (none)")
    value = next((ln for ln in proc.stdout.splitlines() if ln.startswith("VALUE")), "")
    return result, value, proc.stderr


def _kind(result: str) -> str:
    return "ok" if result.strip() == "RESULT ok" else result.split()[1]


def test_every_probe_has_a_recorded_real_outcome() -> None:
    assert sorted(p.stem for p in PROBES.glob("f*.py")) == sorted(REAL)


@pytest.mark.parametrize("probe", sorted(REAL))
def test_emulator_agrees_with_the_real_toolchain(probe: str) -> None:
    result, value, err = _emulate(probe)
    kind = _kind(result)
    if kind == "EmulatorError":  # the emulator's error carries the Python kind the real toolchain raises
        kind = result.split()[3].rstrip(":")
    assert kind == REAL[probe], result + "\n" + err
    if value:  # the real SIM writes no numbers; the emulator's must be right
        assert float(value.split()[1]) < 1e-5, value


def test_reshape_with_a_symbolic_dim_runs_under_head_compat() -> None:
    """HEAD accepts SymbolicScalar dims in reshape (spec §4.4); 0.2.0 raises TypeError (above)."""
    result, value, err = _emulate("f02_reshape_symbolic", "--compat", "head")
    assert result == "RESULT ok", result + err
    assert float(value.split()[1]) < 1e-6


def test_per_iteration_poison_check_is_the_strict_switch() -> None:
    """The default checks the final output (correct here); --poison-check iteration rejects the transient."""
    result, _, _ = _emulate("f03_poison_final_ok", "--poison-check", "iteration")
    assert "EMU_POISON" in result
    result, _, _ = _emulate("f03_poison_final_ok", "--poison-check", "off")
    assert result == "RESULT ok"

