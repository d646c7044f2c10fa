"""`python -m orchestrator import`: gym operators become PTO Forge op dirs whose impl verifies PASS unedited.

Needs torch (gym goldens are torch, and the imported wrappers take torch tensors); without it the import
refuses with one line, which is tested too.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.adapters.gym import GymImportError, import_gym_op
from runtime.opdir import load_op_dir
from runtime.verify import verify

CORPUS = Path(__file__).parent / "corpus_data"
HAS_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason="gym goldens are torch; torch is not installed "
                                 "(pip install torch==2.13.0, a CPU build)")


@needs_torch
# one in CI (several outputs with attributes: ~12 s), the rest in the slow tier
@pytest.mark.parametrize("op", ["adamw", *[pytest.param(o, marks=pytest.mark.slow)
                                          for o in ("softmax", "rms_norm", "silu", "bias_leaky")]])
def test_corpus_op_imports_and_its_impl_verifies_pass(op: str, tmp_path: Path) -> None:
    dest = tmp_path / op
    report = import_gym_op(CORPUS / op, dest)
    assert sorted(report.written) == sorted(["SPEC.md", "golden.py", f"{op}_impl.py", "IMPORT.md"])
    assert report.unmapped == []  # the corpus is written to map completely
    spec = load_op_dir(dest).spec
    assert spec.op_name == op
    result = verify(dest, dest / f"{op}_impl.py")
    assert result.verdict == "PASS", result.reasons


@needs_torch
def test_attributes_and_outputs_are_mapped_with_types(tmp_path: Path) -> None:
    import_gym_op(CORPUS / "adamw", tmp_path / "a")
    spec = load_op_dir(tmp_path / "a").spec
    assert [t.name for t in spec.outputs] == ["p", "m", "v"]  # from the golden's `return p, m, v`
    assert spec.attributes["step"].type == "int" and spec.attrs["step"] == 3
    assert spec.attributes["lr"].type == "float" and spec.attrs["lr"] == pytest.approx(1e-3)
    assert spec.dynamic_axes and all(t.shape[0] == spec.dynamic_axes[0] for t in spec.inputs)
    assert spec.tolerance["fp32"].atol == pytest.approx(1e-5)
    wrapper = (tmp_path / "a" / "adamw_impl.py").read_text()
    assert "def adamw_wrapper(param, grad, exp_avg, exp_avg_sq, lr=0.001" in wrapper


@needs_torch
def test_import_from_the_test_file_and_per_dtype_kernels(tmp_path: Path) -> None:
    import_gym_op(CORPUS / "silu" / "test_silu.py", tmp_path / "s")
    spec = load_op_dir(tmp_path / "s").spec
    assert spec.supported_dtypes == ["fp32", "bf16"] and spec.inputs[0].dtype == "T"


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
@needs_torch
def test_never_overwrites_and_reports_what_it_cannot_map(tmp_path: Path) -> None:
    src = tmp_path / "gym" / "softmax"
    shutil.copytree(CORPUS / "softmax", src)
    (src / "test_cases.json").write_text("[]")
    text = (src / "SPEC.md").read_text().replace("tolerance: {atol: 0.0078125, rtol: 0.0078125}",
                                                "tolerance: {mare_matrix: 0.01}")
    (src / "SPEC.md").write_text(text)
    dest = tmp_path / "out"
    report = import_gym_op(src, dest)
    assert any("custom metrics" in u for u in report.unmapped)
    assert any("test_cases.json" in u for u in report.unmapped)
    assert "Not mapped" in (dest / "IMPORT.md").read_text()
    before = (dest / "SPEC.md").read_text()
    with pytest.raises(GymImportError, match="never overwrites"):
        import_gym_op(src, dest)
    assert (dest / "SPEC.md").read_text() == before
    import_gym_op(src, dest, force=True)


def test_cli_gives_one_line_for_a_folder_that_is_not_a_gym_op(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PTO_FORGE_EMULATOR_CHILD"}
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "import", str(tmp_path), str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and "error:" in proc.stderr
    assert not (tmp_path / "o").exists()


def _cli_import(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PTO_FORGE_EMULATOR_CHILD"}
    return subprocess.run([sys.executable, "-m", "orchestrator", "import", *args], capture_output=True, text=True,
                          timeout=120, check=False, env=env)


def test_broken_spec_yaml_is_one_line_at_the_spec_line(tmp_path: Path) -> None:
    """User trial: a missing `}` in the gym SPEC front matter gave a 40-line yaml traceback."""
    src = tmp_path / "bias_leaky"
    shutil.copytree(CORPUS / "bias_leaky", src)
    text = (src / "SPEC.md").read_text().replace("rtol: 0.0078125}", "rtol: 0.0078125")
    (src / "SPEC.md").write_text(text)
    proc = _cli_import(str(src), str(tmp_path / "o"))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert f"{src / 'SPEC.md'}:8: the SPEC front matter is not valid YAML" in proc.stderr, proc.stderr
    assert not (tmp_path / "o").exists()


def test_typo_in_the_source_path_is_one_line(tmp_path: Path) -> None:
    proc = _cli_import(str(CORPUS / "bias_leak"), str(tmp_path / "o"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "does not exist" in proc.stderr


def test_dest_that_is_a_file_or_the_gym_folder_is_refused(tmp_path: Path) -> None:
    """User trial: a file as the destination died in mkdir with a traceback; the gym folder itself as the
    destination would have been written into (and, with --force, its SPEC.md replaced)."""
    src = tmp_path / "bias_leaky"
    shutil.copytree(CORPUS / "bias_leaky", src)
    proc = _cli_import(str(src), str(src / "SPEC.md"))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "is a file" in proc.stderr
    with pytest.raises(GymImportError, match="the gym folder itself"):
        import_gym_op(src, src, force=True)
    assert (src / "SPEC.md").read_text() == (CORPUS / "bias_leaky" / "SPEC.md").read_text()


def test_another_file_of_the_op_folder_names_the_folder(tmp_path: Path) -> None:
    """User trial: pointing at the impl (or SPEC.md) instead of the folder was refused; it now means the folder
    (here the folder lacks a golden, so the error is about the folder's content, not the file given)."""
    src = tmp_path / "bias_leaky"
    shutil.copytree(CORPUS / "bias_leaky", src)
    (src / "bias_leaky_golden.py").unlink()
    for given in ("bias_leaky_impl.py", "SPEC.md"):
        with pytest.raises(GymImportError, match="no <op>_golden.py"):
            import_gym_op(src / given, tmp_path / "o")


def test_real_layout_run_folder_mistakes_are_one_line(tmp_path: Path) -> None:
    """`--cwd` names where a gym user runs `--run` from: a folder outside the operator, one that does not exist,
    or `--cwd` without `--run` is one line before anything runs (it was a FileNotFoundError from the child)."""
    op = tmp_path / "my_op"
    (op / "src" / "pypto_gym").mkdir(parents=True)
    (op / "tests").mkdir()
    (op / "tests" / "test_my_op.py").write_text("print('never runs')\n")
    out = tmp_path / "o"
    for kw, words in ([{"command": "test_my_op.py", "cwd": ".."}, "is not a folder of the gym operator"],
                      [{"cwd": "tests"}, "needs the command to run there (--run)"],
                      [{"command": "  "}, "is empty"]):
        with pytest.raises(GymImportError, match=re.escape(words)):
            import_gym_op(op, out, **kw)
        assert not out.exists()
    proc = _cli_import(str(op), str(out), "--run", "test_my_op.py", "--cwd", "nope/there")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "nope/there is not a folder of the gym operator" in proc.stderr
    assert not out.exists()


def test_an_object_argument_takes_the_wrappers_attribute_parameters() -> None:
    """s36: the wrapper took ``alpha`` and passed the recorded ``LstmConfig(alpha=0.1, ...)`` to the kernel - a call
    with another alpha computed with 0.1 (verify, varying the attributes, then failed the gym's own sum_lstm)."""
    from orchestrator.adapters.gym._observed import _with_attrs

    attrs = {"alpha": 0.1, "eps_cell": 1e-06, "n": 3}
    assert _with_attrs("LstmConfig(alpha=0.1, eps_cell=1e-06, eps_state=1e-06)", attrs) == \
        "LstmConfig(alpha=alpha, eps_cell=eps_cell, eps_state=1e-06)"
    assert _with_attrs("Cfg(alpha=0.2, n=3.0)", attrs) == "Cfg(alpha=0.2, n=3.0)"  # another value or type: kept
    assert _with_attrs("SOME_CONSTANT", attrs) == "SOME_CONSTANT"
