"""Parsing what pypto 0.2.0 writes (recorded samples in data/), and mapping its errors to kernel lines.

These run everywhere: no toolchain needed. The samples were captured from real runs (spec §0.3).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.toolchain import CostFigures, ToolchainUsageError, compile_kernel, find_pypto_python
from runtime.toolchain._engine import _infer_line, _is_host_line, _map_error
from runtime.toolchain._parse import (
    cost_figures,
    frontend_location,
    plog_errors,
    stdout_summary,
    toolchain_code,
)

DATA = Path(__file__).with_name("data")
ROOT = Path(__file__).resolve().parents[2]


def test_stat_report_and_stdout_parse_to_cost_figures() -> None:
    cost = cost_figures((DATA / "stat_report_silu_b77.txt").read_text(), (DATA / "stdout_silu_b77.txt").read_text())
    assert cost is not None
    assert cost.total_cycles == 7303
    assert cost.e2e_time == pytest.approx(1.91)
    assert cost.utilization_percent == pytest.approx(5.33)
    assert cost.task_count == 5 and cost.vector_tasks == 5 and cost.cube_tasks == 0
    assert cost.pipes["vector"].used == 5 and cost.pipes["vector"].percent == pytest.approx(7.26)
    assert cost.pipes["mte_in"].average_cycles == pytest.approx(1577.0)
    assert set(cost.pipes) == {"cube", "vector", "mte_in", "mte1", "mte_out"}


def test_report_without_cycles_is_none_not_zero() -> None:
    assert cost_figures("nothing here\n") is None
    assert stdout_summary("") == {}


def test_rounded_figures_are_coarse() -> None:
    cost = CostFigures(total_cycles=7303, utilization_percent=5.3349, task_count=5)
    assert cost.rounded() == {"total_cycles": 7300, "utilization_percent": 5.3, "tasks": 5}
    assert CostFigures(total_cycles=12).rounded()["total_cycles"] == 12


def test_plog_errors_drop_noise_and_keep_the_reason() -> None:
    assert plog_errors((DATA / "plog_missing_alloc.log").read_text())[0] == "ADD[10004] Tensor[8] is missing Alloc."
    msgs = plog_errors((DATA / "plog_tile_rank.log").read_text() + "\n[ERROR] PYPTO(1):x [a.cpp:1][X]:F7A001 idx < size_")
    assert msgs[0].endswith("Tile shape size 1 is not matched the output shape size 3.")
    assert not any("idx < size_" in m for m in msgs)


def test_codes_and_rendered_locations() -> None:
    assert toolchain_code("RuntimeError: Errcode: FC0000!\nshape not support") == "FC0000"
    assert toolchain_code("\x1b[1mErrcode: FFFFFF!\x1b[0m Run pass failed.") == "FFFFFF"
    assert toolchain_code("plain ValueError") is None
    out = "\x1b[1m\x1b[91mERROR\x1b[0m \x1b[1m/w/silu_impl.py:32:17:\x1b[0m TypeError: View()"
    assert frontend_location(out, "silu_impl.py") == (32, 17)
    assert frontend_location(out, "other.py") is None


KERNEL = '''import pypto

def host(x):
    return x

@pypto.frontend.jit
def k(x: pypto.Tensor([16, 32], pypto.DT_FP32), out: pypto.Tensor([16, 32], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(32)
    t = pypto.tensor([16, 32], pypto.DT_FP32)
    out[:] = pypto.add(t, x)

def wrapper(x):
    return host(x)
'''


def test_pass_failures_map_to_the_op_or_tile_line() -> None:
    assert _infer_line(KERNEL, ["ADD[10004] Tensor[8] is missing Alloc."]) == 10
    assert _infer_line(KERNEL, ["ExpandFunction failed: Tile shape size 1 is not matched the output shape size 3."]) == 8
    assert _infer_line(KERNEL, ["something else entirely"]) == 7  # the jit function's def line


def test_map_error_pass_stage_reads_the_plog() -> None:
    entry = {"error": {"type": "RenderedParserError", "message": "Errcode: FFFFFF!\nRun pass failed., func X",
                       "node_line": 1},
             "plog": (DATA / "plog_missing_alloc.log").read_text(), "report": "", "output_dirs": []}
    err = _map_error(entry, "", "k.py", KERNEL)
    assert err.stage == "pass" and err.code == "FFFFFF" and err.line == 10 and not err.line_exact
    assert err.message == "ADD[10004] Tensor[8] is missing Alloc."


def test_map_error_frontend_uses_the_rendered_line() -> None:
    entry = {"error": {"type": "RenderedParserError", "message": "RuntimeError: Errcode: FC0000!\nshape not support",
                       "node_line": 9}, "plog": "", "report": "", "output_dirs": []}
    err = _map_error(entry, "ERROR /tmp/x/k.py:9:13: RuntimeError: Errcode: FC0000!", "k.py", KERNEL)
    assert (err.stage, err.code, err.line, err.line_exact) == ("frontend", "FC0000", 9, True)


def test_host_lines_are_told_from_kernel_lines() -> None:
    assert _is_host_line(KERNEL, 4) and _is_host_line(KERNEL, 13)
    assert not _is_host_line(KERNEL, 9)


def test_unavailable_when_no_interpreter(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PTO_FORGE_PYPTO_PYTHON", raising=False)
    import runtime.toolchain._engine as eng

    monkeypatch.setattr(eng, "find_pypto_python", lambda explicit=None: None)
    op = ROOT / "workspace" / "silu"
    kernel = tmp_path / "silu" / "silu_impl.py"
    import shutil

    shutil.copytree(op, tmp_path / "silu", ignore=shutil.ignore_patterns("traces"))
    shutil.copyfile(op / "authoring" / "attempts" / "m1_a2.py", kernel)
    res = compile_kernel(tmp_path / "silu", kernel)
    assert res.status == "unavailable" and "PTO_FORGE_PYPTO_PYTHON" in res.reason and not res.available


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(ToolchainUsageError, match="does not exist"):
        compile_kernel(tmp_path / "nope", "x.py")
    with pytest.raises(ToolchainUsageError, match="not an executable"):
        find_pypto_python(str(tmp_path / "no-python"))


def test_toolchain_off_disables_implicit_choices_only(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import sys

    monkeypatch.setenv("PTO_FORGE_PYPTO_PYTHON", sys.executable)
    assert find_pypto_python() == sys.executable
    monkeypatch.setenv("PTO_FORGE_TOOLCHAIN", "off")
    assert find_pypto_python() is None
    assert find_pypto_python(sys.executable) == sys.executable  # an explicit interpreter still counts


def test_an_installed_toolchain_is_found_after_the_emulator_was_loaded_as_pypto(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Found in CI: with the extra installed in .venv, tests/toolchain skipped, because an earlier test in the
    same process had loaded the emulator as ``pypto`` and the lookup asked ``sys.modules``."""
    import sys
    import types

    import runtime.emulator

    monkeypatch.delenv("PTO_FORGE_PYPTO_PYTHON", raising=False)
    monkeypatch.delenv("PTO_FORGE_TOOLCHAIN", raising=False)
    site = tmp_path / "site"
    for pkg in ("pypto", "torch"):
        (site / pkg).mkdir(parents=True)
        (site / pkg / "__init__.py").write_text("")
    emulated = types.ModuleType("pypto")
    emulated.__file__ = runtime.emulator.__file__
    monkeypatch.setitem(sys.modules, "pypto", emulated)
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    assert find_pypto_python() == sys.executable
    monkeypatch.setattr(sys, "path", [str(tmp_path / "empty")])  # only the emulator: no second opinion
    assert find_pypto_python() is None
