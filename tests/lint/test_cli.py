"""`python -m runtime.lint`: text with source line and caret, JSON, exit 2 on S0/S1 FAIL or misuse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.lint.__main__ import main

FIX = Path(__file__).parent / "fixtures" / "ops"
ROOT = Path(__file__).resolve().parents[2]


def _bad_kernel(tmp_path: Path) -> Path:
    src = (FIX / "silu" / "silu_impl.py").read_text(encoding="utf-8")
    path = tmp_path / "silu_impl.py"
    path.write_text(src.replace("pypto.assemble(yt, [i * ROW_TILE, 0], y)", "y = yt"), encoding="utf-8")
    return path


def test_clean_file_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(FIX / "silu" / "silu_impl.py")]) == 0
    assert "0 fail (0 blocking)" in capsys.readouterr().out


def test_blocking_finding_exits_2_with_source_line_and_caret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bad_kernel(tmp_path)
    assert main([str(path), "--stage", "final"]) == 2
    out = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(out) if " OL02 [S1] " in line)
    assert out[head].startswith(f"{path}:21:9: FAIL OL02")
    assert out[head + 1].strip() == "y = yt"
    assert out[head + 2] == "    " + " " * 8 + "^"
    assert out[head + 3].strip().startswith("fix: ")


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _bad_kernel(tmp_path)
    assert main([str(path), "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["passed"] is False and doc["blocking"] >= 1
    f = next(f for f in doc["findings"] if f["rule_id"] == "OL02")
    assert set(f) >= {"rule_id", "severity", "status", "message", "file", "line", "col", "fix"}
    assert (f["severity"], f["status"], f["line"]) == ("S1", "FAIL", 21)


def test_warnings_only_exit_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = (FIX / "silu" / "silu_impl.py").read_text(encoding="utf-8").replace("pypto.DYNAMIC", "64")
    path = tmp_path / "k.py"
    path.write_text(src, encoding="utf-8")
    assert main([str(path), "--stage", "module"]) == 0
    assert "WARN OL29" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    ([], "no paths given"),
    (["/no/such/file.py"], "no such file or directory"),
    (["README.md"], "cannot lint this kind of file"),
    (["--stage", "bogus", "x.py"], "invalid choice"),
    (["--previous-stage", "/no/such.py", "tests/lint/fixtures/ops/silu/silu_impl.py"], "--previous-stage"),
])
def test_misuse_is_one_clear_line_and_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_list_rules_prints_the_skills_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--list-rules"]) == 0
    assert capsys.readouterr().out == (ROOT / "skills" / "lint-rules.md").read_text(encoding="utf-8")


def test_module_entry_point(tmp_path: Path) -> None:
    path = _bad_kernel(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "runtime.lint", str(path), "--json"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert json.loads(proc.stdout)["blocking"] >= 1
