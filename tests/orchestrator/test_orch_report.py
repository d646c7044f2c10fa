"""The HTML run report: self-contained, the sections a person looks for, and it renders in a real browser."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = next((p for p in (shutil.which("chromium"), "/usr/bin/chromium", shutil.which("chromium-browser"),
                             shutil.which("google-chrome")) if p and Path(p).is_file()), None)


@pytest.fixture(scope="module")
def failed_then_passed(tmp_path_factory):
    """A real run (real verifier): attempt 1 fails numerically, the debugger runs, attempt 2 passes."""
    import sys

    here = Path(__file__).parent
    sys.path.insert(0, str(here))
    from orch_support import FIX, make_verifier, write_script

    from orchestrator import api
    from orchestrator.adapters.scripted import ScriptedAgents

    tmp = tmp_path_factory.mktemp("report")
    op = tmp / "affine"
    shutil.copytree(FIX / "ops" / "affine", op)
    s = write_script(tmp / "s.yaml", "affine", implement={1: ["impl_numeric.py", "impl.py"]})
    r = api.run(op, api.RunOptions(approve="auto", run_id="r1"),
                inject=api.Injected(agents=ScriptedAgents(s), verifier=make_verifier("real")))
    assert r.status == "delivered"
    return op


def test_report_is_one_self_contained_file_with_every_section(failed_then_passed):
    from orchestrator.ui.run_report import build_report

    pytest.importorskip("matplotlib", reason="plots need matplotlib (a dependency: pip install -e .[dev])")
    res = build_report(failed_then_passed)
    page = Path(res.path).read_text(encoding="utf-8")
    assert Path(res.path) == failed_then_passed / ".forge" / "run-r1" / "report.html"
    for section in ('id="timeline"', 'id="gates"', 'id="modules"', 'id="final"', 'id="calls"'):
        assert section in page
    assert "FAIL_NUMERIC" in page and "PASS" in page
    assert "code diff: attempt01-affine_impl.py" in page  # the diff between the two attempts
    assert "debugger&#x27;s diagnoses" in page or "debugger's diagnoses" in page
    assert page.count("data:image/png;base64,") == res.plots >= 3  # attempts plot + histogram + heat map
    assert not re.search(r"""(src|href)=["'](https?:)?//""", page)  # no CDN, no remote resource
    assert "<script" not in page
    for node in ("intake", "implement", "verify", "debug", "cleanup", "gate_final"):  # L0: no verify_final
        assert f"<td>{node}</td>" in page


def test_report_renders_in_headless_chromium(failed_then_passed, tmp_path):
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (Debian package `chromium`): the browser check cannot run")
    pytest.importorskip("PIL", reason="Pillow (a matplotlib dependency) reads the screenshot")
    from PIL import Image, ImageStat

    from orchestrator.ui.run_report import build_report

    res = build_report(failed_then_passed, out=tmp_path / "report.html")

    def render(page: Path, shot: Path) -> str:
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                            "--disable-component-update", "--disable-sync", "--no-first-run",
                            f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
                            f"--screenshot={shot}", "--window-size=1280,2000", page.resolve().as_uri()],
                           capture_output=True, text=True, timeout=120)
        assert shot.is_file(), p.stderr[-2000:]
        return "\n".join(ln for ln in p.stderr.splitlines() if ":CONSOLE" in ln)

    # the console check can fail: a page with a script error is caught by it
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><p>x</p><script>undefined_function();</script></body></html>")
    assert "undefined_function" in render(bad, tmp_path / "bad.png")

    console = render(Path(res.path), tmp_path / "report.png")
    assert console == "", console
    img = Image.open(tmp_path / "report.png").convert("L")
    stat = ImageStat.Stat(img)
    assert stat.stddev[0] > 20, "the screenshot is (nearly) blank"
    dark = sum(img.histogram()[:128]) / (img.width * img.height)
    assert dark > 0.01, f"only {dark:.2%} of the pixels carry ink"


def test_report_cli(failed_then_passed, capsys):
    from orchestrator.cli.main import main

    assert main(["report", str(failed_then_passed), "--out", str(failed_then_passed / "r.html")]) == 0
    assert "wrote" in capsys.readouterr().out and (failed_then_passed / "r.html").is_file()
    assert main(["report", str(failed_then_passed / "nope")]) == 1
    assert "not found" in capsys.readouterr().err
