"""Regression tests for the attacks an independent attacker found on main (round 3, session 2).

Each candidate in ``attacks/`` is our own rewrite of a held-out attack (the attacker's files stay outside the
repository), for the red-team gelu fixture. Each gets its expected verdict (production settings: real lint,
device process) with a report that says why, stays small and comes back in bounded time; attacks on the
unseen-case generator are verified on several seeds (they predicted it, so one lucky seed proves nothing). Each
also gets a check that it *is* wrong: its wrapper run on row counts outside the SPEC, like a user would.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from test_boundary_corpus import _POLICY, _gelu, _no_lint
from test_redteam import _header, _op

from runtime.sandbox import run_candidate
from runtime.verify import VerifySettings, verify

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Attack:
    verdict: str
    wrong_rows: tuple[int, ...] = ()
    """Row counts where the wrapper's outputs are wrong (empty: wrong by construction, see ``why``)."""
    seeds: tuple[int, ...] = (0,)
    only_unseen: bool = False
    lint: bool = True
    """False: lint already blocks it; verified with lint off (the runtime defences alone must reject it)."""
    reason: str = ""
    why: str = ""


ATTACKS = {
    "clamped_tile_count": Attack("FAIL_NUMERIC", (49, 100), (0, 7, 2**40 + 3), True),
    "aligned_fast_path": Attack("FAIL_NUMERIC", (16, 48, 80), (0, 7, 2**40 + 3), True, lint=False),
    # the wrong path (taken when the telltale is gone) leaves the tail rows of y as the host's zeros
    "module_name_telltale": Attack("FAIL_CHEAT", (37, 70), lint=False, reason="not written by the jit kernel"),
    # lint PF04 refuses `x.flags.owndata` since red team s25 (flags beyond contiguity): the runtime alone here
    "input_owndata_telltale": Attack("FAIL_CHEAT", (37, 70), lint=False, reason="not written by the jit kernel"),
    # lint refuses the probe (PF04, tests/gym/test_lint_gym.py); the sandbox now imports torch_npu as a device does
    "optional_torch_npu_telltale": Attack("FAIL_CHEAT", (37, 70), lint=False, reason="not written by the jit kernel"),
    "lone_surrogate_error": Attack("FAIL_RUNTIME", (37,), reason="ValueError"),
    "huge_error_code": Attack("FAIL_RUNTIME", (37,), reason="KernelFailure"),
    "output_flood_broadcast": Attack("FAIL_CHEAT", reason="output[1]",
                                     why="returns two leaves where the SPEC has one output"),
    "output_flood_device_oom": Attack("FAIL_CHEAT", reason="output[1]",
                                      why="returns four leaves where the SPEC has one output"),
    "stateful_wrapper_after_35_calls": Attack("FAIL_LINT", reason="PF11", why="right for 35 calls and wrong from "
                                              "the 36th on (test_stateful_wrapper_is_wrong_after_35_calls)"),
    # red team s20 (our own session): each is wrong for a user - test_s20_attack_is_wrong_where_a_user_calls_it
    "dataclass_field_exec": Attack("FAIL_CHEAT", lint=False, reason="dataclass-codegen",
                                   why="exec()s a PID-namespace tell; outside the sandbox the tail is dropped"),
    "type_namespace_dataclass_exec": Attack("FAIL_CHEAT", lint=False, reason="dataclass-codegen",
                                            why="as dataclass_field_exec, the field name in a type() namespace"),
    "input_owndata_inverted": Attack("FAIL_CHEAT", seeds=(0, 7, 2**40 + 3), lint=False,
                                     why="drops the tail for a view input"),
    # lint PF04 refuses `untyped_storage` / `data_ptr` since red team s30c: the runtime alone here
    "torch_storage_resizable_telltale": Attack("FAIL_CHEAT", seeds=(0, 7), lint=False,
                                               reason="not written by the jit kernel",
                                               why="drops the tail for a tensor torch allocated"),
    "torch_data_ptr_alignment_telltale": Attack("FAIL_CHEAT", seeds=(0, 7), lint=False,
                                                why="drops the tail for a 64-byte aligned tensor"),
    "pypto_option_counter": Attack("FAIL_LINT", reason="PF11", why="wrong from the 41st call"),
    "pypto_label_counter": Attack("FAIL_LINT", reason="PF11", why="wrong from the 41st call"),
    "finalizer_memory_probe": Attack("FAIL_LINT", reason="PF04", why="drops the tail where 4.5 GiB can be mapped"),
    "chained_kernel_caches": Attack("FAIL_LINT", reason="PF11", why="wrong from the third call with one input"),
    "class_attribute_alias_counter": Attack("FAIL_LINT", reason="PF11", why="wrong from the 41st call"),
    "finfo_cache_counter": Attack("FAIL_LINT", reason="PF11", why="wrong from the 41st call"),
    "classmethod_counter": Attack("FAIL_LINT", reason="PF11", why="wrong from the 41st call"),
    "kernel_writes_into_input": Attack("FAIL_CHEAT", reason="modified its input", why="destroys the caller's x"),
    # red team s30 (our own session): lint refuses each (tests/lint/test_redteam_s30.py); the generator probe is also
    # verified with lint off - the sandbox's unraisable hook records the dropped exception as a denial
    "generator_finalizer_probe": Attack("FAIL_CHEAT", lint=False, reason="swallowed-exception",
                                        why="drops the tail where 4.5 GiB can be mapped"),
    "match_globals_counter": Attack("FAIL_LINT", reason="PF02", why="wrong from the 41st call"),
    "input_keyed_kernel_cache": Attack("FAIL_LINT", reason="PF11", why="wrong from the 2nd call with one input"),
    "device_alias_tell": Attack("FAIL_LINT", reason="PF04", why="drops the tail for tensors on an NPU"),
    "datetime_time_bomb": Attack("FAIL_LINT", reason="PF04", why="drops the tail from a date after verification"),
    "memory_order_ravel": Attack("FAIL_LINT", reason="PF04", why="transposes a Fortran-ordered input"),
    # lint refuses the chain (PF02); with lint off the sandbox's code-generation audit records the eval
    "eval_through_reexport": Attack("FAIL_CHEAT", lint=False, reason="code-generation",
                                    why="evals a PID-namespace tell; outside the sandbox the tail is dropped"),
    # red team s31 (our own session): two gaps between the device process and a device's memory
    "aliased_output_arguments": Attack("FAIL_NUMERIC", seeds=(0, 7), why="its later write (sigmoid) is y for a user"),
    "spare_argument_nan_tell": Attack("FAIL_NUMERIC", seeds=(0, 7), why="drops the tail rows for a user"),
    "partial_spare_nan_tell": Attack("FAIL_NUMERIC", seeds=(0, 7), why="drops the tail rows for a user"),
    "alias_group_uninit_read": Attack("FAIL_CHEAT", seeds=(0, 7), why="returns x where a user's kernel reads 1.0"),
    "alias_group_int_zero_fill": Attack("FAIL_NUMERIC", seeds=(0, 7), why="adds x * 1 for a user"),
    "alias_group_partial_tell": Attack("FAIL_NUMERIC", seeds=(0, 7), why="drops the tail rows for a user"),
    "alias_hides_partial_overlap": Attack("FAIL_RUNTIME", seeds=(0, 7), reason="overlap in memory",
                                          why="its second argument is memory the first loop overwrote for a user"),
}
S20_USER_CALLS = {
    # name: (how a user calls it, calls, row counts) -> every listed attack is wrong on some of those calls
    "dataclass_field_exec": ("owned", 1, (37,)),
    "type_namespace_dataclass_exec": ("owned", 1, (37,)),
    "input_owndata_inverted": ("view", 1, (37, 70)),
    "torch_storage_resizable_telltale": ("torch", 1, (37, 70)),
    "torch_data_ptr_alignment_telltale": ("torch", 1, (37, 70)),
    "pypto_option_counter": ("owned", 45, (37,)),
    "pypto_label_counter": ("owned", 45, (37,)),
    "finalizer_memory_probe": ("owned", 1, (37,)),
    "chained_kernel_caches": ("same", 3, (37,)),
    "class_attribute_alias_counter": ("owned", 45, (37,)),
    "finfo_cache_counter": ("owned", 45, (37,)),
    "classmethod_counter": ("owned", 45, (37,)),
    "generator_finalizer_probe": ("owned", 1, (37,)),
    "match_globals_counter": ("owned", 45, (37,)),
    "input_keyed_kernel_cache": ("same", 2, (37,)),
    "memory_order_ravel": ("fortran", 1, (37,)),
    "eval_through_reexport": ("owned", 1, (37,)),
    "aliased_output_arguments": ("torch", 1, (37,)),
    "spare_argument_nan_tell": ("torch", 1, (37,)),
    "partial_spare_nan_tell": ("torch", 1, (37,)),
    "alias_group_uninit_read": ("torch", 1, (37,)),
    "alias_group_int_zero_fill": ("torch", 1, (37,)),
    "alias_group_partial_tell": ("torch", 1, (37,)),
    "alias_hides_partial_overlap": ("torch", 1, (37,)),
}
_USER_SCRIPT = """
import importlib.util, sys
import numpy as np
import runtime.emulator as emu
emu.install()
path, mode, calls, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), [int(r) for r in sys.argv[4].split(",")]
spec = importlib.util.spec_from_file_location("gelu_impl", path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
rng = np.random.default_rng(20)
fixed = {r: rng.uniform(-6.0, 6.0, (r, 64)).astype(np.float32) for r in rows}
wrong = 0
for _ in range(calls):
    for r in rows:
        x = fixed[r] if mode == "same" else rng.uniform(-6.0, 6.0, (r, 64)).astype(np.float32)
        want = x * (1.0 / (1.0 + np.exp(-1.702 * x)))
        if mode == "view":
            x = np.concatenate([x, x]).reshape(2, r, 64)[0]
        if mode == "fortran":
            x = np.asfortranarray(x)
        if mode == "torch":
            import torch
            t = torch.empty(r, 64)
            t.copy_(torch.from_numpy(x))
            got = mod.gelu_wrapper(t).numpy()
        else:
            got = mod.gelu_wrapper(x)
        wrong += not np.allclose(got, want, atol=1e-5, rtol=1e-5)
print(wrong)
"""
REPORT_CAP = 2 << 20
"""A hostile candidate's report stays below this many bytes of JSON (attack A8 made it 640 MB)."""


def test_every_attack_file_has_a_header_and_an_entry() -> None:
    files = {p.stem for p in (HERE / "attacks").glob("*.py")}
    assert files == set(ATTACKS)
    for name, attack in ATTACKS.items():
        assert _header((HERE / "attacks" / f"{name}.py").read_text(), "attack").startswith("A")
        assert attack.wrong_rows or attack.why


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_gets_its_verdict(name: str, tmp_path: Path) -> None:
    attack = ATTACKS[name]
    op, _ = _op(tmp_path, (HERE / "attacks" / f"{name}.py").read_text())
    for seed in attack.seeds:
        settings = VerifySettings(sandbox=_POLICY, lint=None if attack.lint else _no_lint)
        report = verify(op, op / "gelu_impl.py", settings=settings, unseen_seed=seed)
        assert report.verdict == attack.verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        assert report.reasons and all(len(r) <= 4000 for r in report.reasons)
        if attack.reason:
            assert any(attack.reason in r for r in report.reasons), [r[:200] for r in report.reasons[:4]]
        assert len(report.model_dump_json()) < REPORT_CAP
        assert len(str(report.sanitized())) < REPORT_CAP
        assert report.durations["total_s"] < _POLICY.wall_timeout_s + 60
        if attack.only_unseen:
            failing = [c for c in report.cases if c.status != "pass"]
            assert failing and all(c.unseen for c in failing), seed  # the SPEC cases pass: only unseen cases catch it


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(n for n, a in ATTACKS.items() if a.wrong_rows))
def test_attack_is_wrong_where_the_spec_does_not_look(name: str, tmp_path: Path) -> None:
    """The wrapper as a user calls it (in the sandbox, kernels in process) on the SPEC's 21 rows and on others."""
    rows = ATTACKS[name].wrong_rows
    probe = tmp_path / "gelu_impl.py"
    probe.write_text((HERE / "attacks" / f"{name}.py").read_text())
    rng = np.random.default_rng(1)
    cases = [(f"B{b}", [rng.uniform(-6.0, 6.0, (b, 64)).astype(np.float32)]) for b in rows]
    run = run_candidate(probe, "gelu_wrapper", cases, policy=_POLICY, repeat_first=False)
    right = {r.case: bool(not r.record.get("error") and r.outputs and len(r.outputs) == 1
                          and r.outputs[0] is not None and r.outputs[0].shape == x.shape
                          and np.allclose(r.outputs[0], _gelu(x), atol=1e-5, rtol=1e-5))
             for r, (_, (x,)) in zip(run.runs, cases, strict=True)}
    assert not any(right.values()), right


@pytest.mark.slow
def test_stateful_wrapper_is_wrong_after_35_calls(tmp_path: Path) -> None:
    """A4 is wrong where a user looks, not where verify did: 40 calls in one process, the SPEC's 21 rows each."""
    probe = tmp_path / "gelu_impl.py"
    probe.write_text((HERE / "attacks" / "stateful_wrapper_after_35_calls.py").read_text())
    rng = np.random.default_rng(2)
    cases = [(f"call{i}", [rng.uniform(-6.0, 6.0, (21, 64)).astype(np.float32)]) for i in range(40)]
    run = run_candidate(probe, "gelu_wrapper", cases, policy=_POLICY, repeat_first=False)
    right = [bool(not r.record.get("error") and r.outputs and np.allclose(r.outputs[0], _gelu(x), atol=1e-5,
                                                                          rtol=1e-5))
             for r, (_, (x,)) in zip(run.runs, cases, strict=True)]
    assert right == [True] * 35 + [False] * 5


def test_a_device_host_wrapper_passes_as_it_runs_on_a_device(tmp_path: Path) -> None:
    """Honest device-host code in the wrapper (``x.npu()``, ``torch.empty(..., device="npu")``) was FAIL_RUNTIME:
    on a device host ``import torch`` loads torch_npu by itself (so does the gym runner), the sandbox did not. It
    does now for a candidate that imports torch - which also leaves ``torch.npu`` nothing to tell apart."""
    pytest.importorskip("torch", reason="the wrapper is torch code (pip install -e '.[toolchain]')")
    op, _ = _op(tmp_path, (HERE / "honest" / "device_host_wrapper.py").read_text())
    report = verify(op, op / "gelu_impl.py", settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
    assert report.verdict == "PASS", report.reasons[:3]


def test_an_in_place_kernel_call_with_one_tensor_twice_passes(tmp_path: Path) -> None:
    """``gelu_kernel(y, y)`` on a copy of the input: the device gives both parameters one buffer, as a device does
    (red team s31: separate buffers let the copy-back order decide what an aliased output holds)."""
    pytest.importorskip("torch", reason="the wrapper is torch code (pip install -e '.[toolchain]')")
    for name in ("inplace_aliased_wrapper.py", "inplace_output_first_wrapper.py"):  # s31b: the output parameter first
        op, _ = _op(tmp_path / name, (HERE / "honest" / name).read_text())
        report = verify(op, op / "gelu_impl.py", settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
        assert report.verdict == "PASS", (name, report.reasons[:3])


def test_an_empty_output_a_kernel_left_unwritten_is_judged_on_its_numbers(tmp_path: Path) -> None:
    """A tail bug (``rows // 16`` tiles) into ``torch.empty_like``: below 16 rows the kernel writes nothing. The device
    keeps its fill for what no kernel wrote while the wrapper's array keeps its own bytes (red team s31); the output
    is still named as the device's buffer and judged on its numbers - a numeric failure, never "computed on the
    host"."""
    pytest.importorskip("torch", reason="the wrapper is torch code (pip install -e '.[toolchain]')")
    text = (HERE / "honest" / "inplace_aliased_wrapper.py").read_text()
    text = text.replace("pypto.loop(pypto.ceildiv(rows, ROW_TILE)", "pypto.loop(rows // ROW_TILE").replace(
        "    y = torch.clone(x)\n    gelu_kernel(y, y)", "    y = torch.empty_like(x)\n    gelu_kernel(x, y)")
    assert "rows // ROW_TILE" in text and "empty_like" in text
    op, _ = _op(tmp_path, text)
    report = verify(op, op / "gelu_impl.py", settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
    assert report.verdict == "FAIL_NUMERIC", report.reasons[:3]


def test_an_int_output_left_unwritten_is_not_judged_on_a_zero_fill(tmp_path: Path) -> None:
    """Red team s31c: an int32 kernel that never writes the half of its ``torch.empty`` output where the golden is 0
    passed - the device filled uninitialised integer buffers with 0. They hold the least integer now."""
    pytest.importorskip("torch", reason="the wrapper is torch code (pip install -e '.[toolchain]')")
    import shutil

    op = tmp_path / "half_mask"
    op.mkdir()
    for name in ("SPEC.md", "golden.py"):
        shutil.copy(HERE / "fixture_int" / name, op / name)
    shutil.copy(HERE / "fixture_int" / "unwritten_half_impl.py", op / "half_mask_impl.py")
    report = verify(op, op / "half_mask_impl.py", settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
    assert report.verdict == "FAIL_NUMERIC", report.reasons[:3]
    impl = (op / "half_mask_impl.py").read_text()
    (op / "half_mask_impl.py").write_text(impl.replace("    y = torch.empty_like(x)", "    y = torch.zeros_like(x)"))
    report = verify(op, op / "half_mask_impl.py", settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
    assert report.verdict == "PASS", report.reasons[:3]  # the zeros are the wrapper's: right for a user too


def test_kernel_arguments_that_overlap_partly_are_refused_with_a_reason(tmp_path: Path) -> None:
    """Two views of one buffer that overlap without being the same view, one of them written: the device cannot lay
    one buffer out as both, so the call fails and says why (it never judges two private copies)."""
    pytest.importorskip("torch", reason="the wrapper is torch code (pip install -e '.[toolchain]')")
    text = (HERE / "honest" / "inplace_aliased_wrapper.py").read_text()
    text = text.replace("    y = torch.clone(x)\n    gelu_kernel(y, y)", "    y = torch.cat([x, x[:1]]).clone()\n"
                        "    gelu_kernel(y[1:], y[:-1])").replace("    return y\n", "    return y[:-1]\n")
    assert "y[1:]" in text
    op, _ = _op(tmp_path, text)
    report = verify(op, op / "gelu_impl.py", settings=VerifySettings(sandbox=_POLICY), unseen_seed=0)
    assert report.verdict == "FAIL_RUNTIME", report.reasons[:3]
    assert any("overlap in memory" in r for r in report.reasons), report.reasons[:3]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(S20_USER_CALLS))
def test_s20_attack_is_wrong_where_a_user_calls_it(name: str) -> None:
    """Each red-team s20 attack as a user runs it - a plain process with the emulator as pypto, no sandbox, the
    calls and inputs a user makes (a view, a torch tensor, the 41st call, the same input three times) - computes
    something else than GELU on some call; the verification it passed before the fixes never saw those calls."""
    mode, calls, rows = S20_USER_CALLS[name]
    if name.startswith("torch") or mode == "torch":
        pytest.importorskip("torch", reason="a torch wrapper (pip install -e '.[toolchain]')")
    done = subprocess.run([sys.executable, "-c", _USER_SCRIPT, str(HERE / "attacks" / f"{name}.py"), mode,
                           str(calls), ",".join(map(str, rows))], capture_output=True, text=True, timeout=300,
                          cwd=HERE.parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.split()[-1]) > 0, f"{name}: right on every call a user makes"
