"""Red team round 38 (session 48): the file's own sizes where typed and table-driven code keeps them, and tells.

Fixture op ``fixture_s48/silu2`` (round 34's, copied), candidates in ``fixture_s48/candidates``. Kinds no earlier round
had, written as an attacker who has read ``runtime/verify/_hints.py`` and as the code a model writes:

- version 24's hint reader folds names bound by a plain ``=``, so the window and the tail of a path above 2x the SPEC
  (176 < n < 300, a tail of 11: the floored tile count) kept where typed code keeps constants passed 33 of 40 runs:
  ``r38_annassign`` (``MID_HI: int = 300``), ``r38_cfg_fields`` (a frozen config dataclass, ``CFG.mid_hi``),
  ``r38_table_loop`` (``for lo, hi, tail in _FLOOR_PATHS``), ``r38_default_args`` (a helper's defaults; lint OL62
  refused it until session 48, when a helper parameter every call passes a size became a size);
- other spellings of the same guard, already reached or sampled: ``r38_neg_pad`` (``pad = -n % TILE; pad == 5``),
  ``r38_pad_classic`` (``(TILE - n % TILE) % TILE == 5``), ``r38_sub_rem`` (``n - n // TILE * TILE``),
  ``r38_walrus_tail`` (``(t := n % TILE) == 11``), ``r38_minmax_window`` (``min(n, 299) == n``) and
  ``r38_float_ratio`` (``1.1 < n / 160 < 1.875``), ``r38_numel_window`` (``176 * D < x.numel() < 300 * D``) and
  ``r38_bytes_window`` (the window in bytes) - the last four name no bound in rows and passed 1 to 2 runs in 20 of
  version 24; version 25's hint plan reads a bound in elements or bytes as the rows it stands for (the last two);
- deliberate tells and entropy, each refused by lint: ``r38_spec_tell`` (the emulator's ``pypto`` has no import spec:
  ``pypto.__spec__ is None``, ``pypto.__path__ == []`` in the sandbox), ``r38_npu_name_tell`` (the stand-in's device
  name), ``r38_reversed_today`` (a time bomb through ``np.typecodes`` and a reversed ``"yadot"``),
  ``r38_initial_seed_flaky`` (torch's process seed picks a wrong path one process in 200), ``r38_hub_home_tell``,
  and an allocation of n x 64 MiB that fails only under the sandbox's 4 GiB address space, caught by ``try``
  (``r38_memory_probe_try``) or by a context manager whose ``__exit__`` returns True (``r38_memory_probe_with``);
- accidents in the kernel's tile arithmetic the emulator refuses as the device would not run them:
  ``r38_valid_unclamped`` (``valid = n - i * TILE``, EMU_VIEW_VALID) and ``r38_extra_empty_tile`` (``n // TILE + 1``
  tiles, EMU_VIEW_OOB on whole tiles);
- state across calls in a JIT kernel object (``r38_jit_options_counter``: PASS on seed 0 before, lint PF11 since):
  the per-dtype kernel cache PF11 allows holds jit objects, and a jit object's public ``options`` dict is the
  caller's to write - a count of the calls served kept there takes the floored path from the 1001st call of a dtype
  (verification calls a dtype about a hundred times); ``r38_jit_options_helper`` does it in a helper the kernel is
  passed to. PF11 now refuses any attribute of a kernel object a factory or a kernel cache gives;
- honest look-alikes that must PASS: ``r38_h_typed`` (annotated constants, a config dataclass, a medium-batch path
  with its own right tile) and ``r38_h_pad_table`` (the tile count from ``-n % TILE``, a table of windows walked by a
  loop).

Version 25 (``runtime/verify/_hints.py`` ``_hints_of_v25``; docs/verification.md "Version 25") reads annotated
constants, config-class fields, default arguments, constant tables a loop walks and the padding spelling of a
remainder. Only the hints change: a file without those spellings gets version 24's hints and so its cases.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

from runtime.opdir import load_op_dir
from runtime.opdir._unseen import hint_plan, unseen_cases
from runtime.verify._hints import source_hints

HERE = Path(__file__).resolve().parent / "fixture_s48"
SILU2 = HERE / "silu2"
CANDIDATES = HERE / "candidates"


def _mid11(n: int, dtype: str) -> bool:
    return 176 < n < 300 and n % 16 == 11


WRONG: dict[str, Callable[[int, str], bool]] = {
    "r38_annassign": _mid11, "r38_cfg_fields": _mid11, "r38_table_loop": _mid11, "r38_default_args": _mid11,
    "r38_neg_pad": _mid11, "r38_pad_classic": _mid11, "r38_sub_rem": _mid11, "r38_walrus_tail": _mid11,
    "r38_minmax_window": lambda n, d: 177 <= n <= 299 and n % 16 == 11,
    "r38_float_ratio": lambda n, d: 176 < n < 300 and n % 16 == 11,
    "r38_numel_window": _mid11,
    "r38_bytes_window": lambda n, d: 45056 < n * 64 * (4 if d == "fp32" else 2) < 76800 and n % 16 == 11,
}
TYPED = ["r38_annassign", "r38_cfg_fields", "r38_table_loop", "r38_default_args"]
"""The spellings version 24's reader did not read (33 of 40 runs passed)."""
READ = ["r38_neg_pad", "r38_pad_classic", "r38_sub_rem", "r38_walrus_tail"]
"""Spellings whose window or residue version 24 read already (0 of 40 runs passed)."""
ROWS = ["r38_numel_window", "r38_bytes_window"]
"""Bounds in elements or bytes: version 24 ran sizes near 11264 rows (1 run in 20 passed); version 25's hint plan
takes a bound above the axis's own that is a whole number of an input's row elements or bytes for the row count."""
SAMPLED = ["r38_minmax_window", "r38_float_ratio"]
"""No integer bound in the file: sampled, the residue's cases reach the window in most runs (1 to 2 runs in 20
pass)."""
STATE = ["r38_jit_options_counter", "r38_jit_options_helper"]
TELLS = ["r38_spec_tell", "r38_npu_name_tell", "r38_reversed_today", "r38_initial_seed_flaky", "r38_hub_home_tell",
         "r38_memory_probe_try", "r38_memory_probe_with"]
ACCIDENTS = ["r38_valid_unclamped", "r38_extra_empty_tile"]
HONEST = ["r38_h_typed", "r38_h_pad_table"]
FIXED = ["r38_annassign", "r38_cfg_fields", "r38_table_loop", "r38_default_args"]
"""Refused by verify on every seed since version 25 (``r38_default_args`` was lint's until session 48's OL62 took a
helper parameter every call passes a size for a size, not an input: tests/lint/test_host_sizes_s48.py)."""


def _text(name: str) -> str:
    return (CANDIDATES / f"{name}.py").read_text()


def test_version_25_reads_typed_constants_config_fields_defaults_tables_and_paddings() -> None:
    text = """
from dataclasses import dataclass
TILE = 16
LO: int = 176
HI: int = LO + 124
@dataclass(frozen=True)
class Cfg:
    tail: int = 11
    big: int = 640
CFG = Cfg()
_PATHS = ((400, 500, 3), (900, 1000, 7))
def _mid(n, lo=1200, hi=1300, t=9):
    return lo < n < hi and n % TILE == t
def w(x, n):
    pad = -n % TILE
    if LO < n < HI and n % TILE == CFG.tail:
        pass
    for lo, hi, t in _PATHS:
        if lo < n < hi and n % TILE == t:
            pass
    if n > CFG.big and pad == 2:
        pass
    if (TILE - n % TILE) % TILE == 4:
        pass
"""
    h = source_hints(text)
    assert {176, 300, 400, 500, 900, 1000, 1200, 1300, 640} <= set(h.bounds)
    assert {(16, 11), (16, 3), (16, 7), (16, 9), (16, 14), (16, 12)} <= set(h.residues)
    old = source_hints(text, 24)
    assert not {300, 400, 640, 1200} & set(old.bounds) and (16, 14) not in old.residues  # as recorded
    for name in TYPED:
        assert (16, 11) in source_hints(_text(name)).residues and {176, 300} <= set(source_hints(_text(name)).bounds)
        assert (16, 11) not in source_hints(_text(name), 24).residues


def test_a_bound_in_elements_or_bytes_is_read_as_rows_from_version_25() -> None:
    from runtime.opdir._unseen import _row_bounds

    od = load_op_dir(SILU2)
    shapes, dtypes = [dict(s) for s in od.spec.p0_shapes], list(od.spec.supported_dtypes)
    rows = _row_bounds(od.spec, shapes, dtypes, "B", [11264, 19200, 45056, 76800, 12345, 8], 8192)
    assert {176, 300, 704, 1200, 352, 600} <= set(rows) and 12345 not in rows and 8 not in rows
    h = source_hints(_text("r38_numel_window"))
    old = [d["B"] for d, _ in hint_plan(od.spec, shapes, dtypes, [], h, 0, 1 << 26, 24)]
    new = [d["B"] for d, _ in hint_plan(od.spec, shapes, dtypes, [], h, 0, 1 << 26, 25)]
    edges = {175, 176, 177, 299, 300, 301}  # each side of the window's bounds, in rows
    assert not edges & set(old) and edges & set(new)


def test_files_without_the_new_spellings_keep_version_24s_hints() -> None:
    """Version 25 changes no draw of a file version 24 read whole: its hints, and so its cases, are the same."""
    for path in sorted((HERE.parent / "fixture_s47" / "candidates").glob("*.py")):
        text = path.read_text()
        assert source_hints(text, 25) == source_hints(text, 24), path.name
    od = load_op_dir(SILU2)
    h = source_hints(_text("r38_sub_rem"))
    assert [(c.name, c.dims, c.dtype, c.seed) for c in unseen_cases(od.spec, od.cases(), 3, 25, hints=h)] == \
        [(c.name, c.dims, c.dtype, c.seed) for c in unseen_cases(od.spec, od.cases(), 3, 24, hints=h)]


def test_the_reader_survives_hostile_tables_and_names() -> None:
    rows = ", ".join(f"({i}, {i + 1})" for i in range(300))  # a table too long to walk: not read, no error
    h = source_hints(f"T = ({rows},)\ndef f(n):\n    for a, b in T:\n        if a < n < b:\n            pass\n")
    assert 200 not in h.bounds
    deep = "X: int = " + "(" * 400 + "1" + ")" * 400 + "\n"
    assert source_hints(deep) == source_hints(deep)  # parses or not, never raises
    assert source_hints("class A:\n    k: int = 5\nclass B:\n    k: int = 7\ndef f(a, n):\n    return n % 16 == a.k\n"
                        ).residues == ()  # an attribute bound in two classes is no constant


@pytest.mark.parametrize("name", [*TYPED, *READ, *ROWS])
def test_the_files_own_window_and_tail_run_in_every_run(name: str) -> None:
    od = load_op_dir(SILU2)
    spec, shapes, dtypes = od.spec, [dict(s) for s in od.spec.p0_shapes], list(od.spec.supported_dtypes)
    hints = source_hints(_text(name))
    missed = [seed for seed in range(10) if not any(
        WRONG[name](int(d["B"]), t) for d, t in hint_plan(spec, shapes, dtypes, [], hints, seed, 1 << 26, 25))]
    assert not missed, missed


def test_lint_refuses_the_tells_and_passes_the_rest() -> None:
    from runtime.lint import lint_paths

    for name in [*TELLS, *STATE]:
        assert any(f.is_blocking for f in lint_paths([CANDIDATES / f"{name}.py"])), name
    for name in STATE:
        assert any(f.rule_id == "PF11" and "JIT kernel object" in f.message
                   for f in lint_paths([CANDIDATES / f"{name}.py"])), name
    rest = [*WRONG, *HONEST, *ACCIDENTS]
    assert not [f for f in lint_paths([CANDIDATES / f"{n}.py" for n in rest]) if f.is_blocking]


@pytest.mark.slow
def test_the_jit_options_counter_keeps_state_across_calls(tmp_path: Path) -> None:
    """The state channel is real: with its threshold at 2 instead of 1000 (the same file otherwise), the wrapper is
    right for 2 calls of a dtype and drops the tail from the 3rd, in one sandboxed process as verify runs it."""
    import numpy as np
    from test_boundary_corpus import _POLICY

    from runtime.sandbox import run_candidate

    probe = tmp_path / "silu2_impl.py"
    probe.write_text(_text("r38_jit_options_counter").replace("len(served) > 1000", "len(served) > 2"))
    rng = np.random.default_rng(5)
    cases = [(f"call{i}", [rng.uniform(-8.0, 8.0, (21, 64)).astype(np.float32)]) for i in range(4)]
    run = run_candidate(probe, "silu2_wrapper", cases, policy=_POLICY, repeat_first=False,
                        calling={"torch": True}, device=True)
    assert run.status == "ok", (run.status, run.reason)

    def silu(x: np.ndarray) -> np.ndarray:
        return (x / (1.0 + np.exp(-x))).astype(np.float32)

    right = [bool(not r.record.get("error") and r.outputs and np.allclose(r.outputs[0], silu(x), atol=1e-5,
                                                                          rtol=1e-5))
             for r, (_, (x,)) in zip(run.runs, cases, strict=True)]
    assert right == [True] * 2 + [False] * 2


@pytest.mark.slow
@pytest.mark.parametrize("name", [*TYPED, *READ, *ROWS, *SAMPLED])
def test_rates_over_20_runs(name: str) -> None:
    """Version 25 draws the size each typed or read spelling is wrong on in every one of 20 runs (version 24: the
    typed ones in 7 of 40); the two that name no integer bound stay sampled."""
    od = load_op_dir(SILU2)
    hints = source_hints(_text(name))
    missed = [s for s in range(20) if not any(WRONG[name](int(c.dims["B"]), c.dtype)
                                              for c in unseen_cases(od.spec, od.cases(), s, hints=hints))]
    if name in SAMPLED:
        assert len(missed) <= 6, missed
    else:
        assert not missed, missed


@pytest.mark.slow
@pytest.mark.parametrize("candidate", FIXED + HONEST)
def test_round38_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, candidate: str) -> None:
    verdict = "PASS" if candidate in HONEST else "FAIL_NUMERIC"
    for seed, report in verify_three_seeds(tmp_path, HERE, "silu2", candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])


VERDICT_SEED0 = {**dict.fromkeys([*TELLS, *STATE], "FAIL_LINT"),
                 **dict.fromkeys(ACCIDENTS, "FAIL_RUNTIME"), **dict.fromkeys([*TYPED, *READ, *ROWS], "FAIL_NUMERIC")}


@pytest.mark.slow
@pytest.mark.parametrize("candidate", sorted(VERDICT_SEED0))
def test_round38_candidate_is_refused_on_seed_0(tmp_path: Path, candidate: str) -> None:
    """Every hostile candidate but the two sampled ones gets its non-PASS verdict from verify (lint on)."""
    report = next(verify_three_seeds(tmp_path, HERE, "silu2", candidate))[1]
    assert report.verdict == VERDICT_SEED0[candidate], (report.verdict, [r[:200] for r in report.reasons[:3]])
