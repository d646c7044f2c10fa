"""The debugger's read-only `bisect` tool runs runtime.bisect on the failing file (issue 9)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml

from agents.skills import SkillLibrary
from agents.tools import ROLE_TOOLS, ToolBox

ROOT = Path(__file__).resolve().parents[2]
OP = ROOT / "workspace" / "rms_norm"


def test_only_the_debugger_gets_the_bisect_tool() -> None:
    assert "bisect" in ROLE_TOOLS["debugger"]
    assert all("bisect" not in tools for role, tools in ROLE_TOOLS.items() if role != "debugger")


def test_bisect_tool_names_the_line_the_debugger_patch_changes(tmp_path: Path) -> None:
    op_dir = tmp_path / "rms_norm"
    op_dir.mkdir()
    for name in ("SPEC.md", "golden.py"):
        shutil.copy2(OP / name, op_dir / name)
    shutil.copy2(OP / "authoring" / "attempts" / "m1_a1.py", op_dir / "rms_norm_impl.py")  # tail rows never written
    before = {p.name: p.read_bytes() for p in op_dir.iterdir()}
    box = ToolBox("debugger", SkillLibrary(), op_dir=op_dir, target_file="rms_norm_impl.py")
    out = box.run("bisect", {})
    assert out.startswith("bisect result:\n"), out
    report = json.loads(out.split("\n", 1)[1])
    patch = yaml.safe_load((OP / "authoring" / "script.yaml").read_text())["debug"][1][0]["proposals"][0]
    assert report["status"] == "DIVERGENCE_FOUND"
    assert report["first_divergence"]["line"] == patch["line_start"]  # the loop whose trip count is too small
    assert any("never written" in e for e in report["evidence"])
    assert {p.name: p.read_bytes() for p in op_dir.iterdir()} == before  # read-only


def test_bisect_tool_without_an_op_dir_is_a_clean_error() -> None:
    out = ToolBox("debugger", SkillLibrary(), target_file="x_impl.py").run("bisect", {})
    assert out.startswith("error: bisect needs the operator directory")


def test_debugger_prompt_shows_floats_to_four_significant_digits() -> None:
    """Prompts must be identical on every machine for a recorded run to replay there (float32 last bits vary)."""
    import re

    from agents.contracts import DebugContext
    from agents.roles.debugger import _user_message, rounded

    assert rounded({"a": [0.9048941135406494, 1.5e-07, 3], "b": float("nan")})["a"] == [0.9049, 1.5e-07, 3]
    ctx = DebugContext(op_dir=".", op_name="x", module=1, failing_file="x_impl.py", source="pass\n",
                       report={"verdict": "FAIL_NUMERIC", "max_diff": 0.9048941135406494,
                               "outliers": [{"actual": 0.9875656962394714, "expected": 0.08267156034708023}]},
                       bisect={"stats": {"max_abs": 15.581380245830102}})
    text = _user_message(ctx)
    assert "0.9049" in text and "0.9876" in text and "15.58" in text
    assert not re.findall(r"\d\.\d{5,}", text)
