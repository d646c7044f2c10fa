"""The declared target toolchain (issue #25 item 1): one PyPTO version's semantics at a time, chosen per op dir.

`runtime.targets` resolves it (SPEC.md ``pypto_target`` > forge.toml ``[toolchain]`` > the default, head); the
verifier runs the candidate with it and names it in every report. The differences between the targets are the
probes of tests/gym/test_fidelity.py.
"""

from __future__ import annotations

import importlib.machinery
import json
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from runtime.emulator import API_SURFACE, Options
from runtime.emulator._module import HEAD_ONLY
from runtime.emulator._session import DEFAULT_COMPAT, Compat
from runtime.opdir import OpDirError, load_op_dir
from runtime.targets import DEFAULT_TARGET, TARGETS, TargetError, forge_toml_target, parse_target

SPEC = """---
op_name: th
{target}inputs:
  - {{name: x, shape: [8, 16], dtype: fp32, range: [-2.0, 2.0]}}
outputs:
  - {{name: y, shape: [8, 16], dtype: fp32}}
supported_dtypes: [fp32]
tolerance: {{fp32: {{atol: 1.0e-5, rtol: 1.0e-5}}}}
---
tanh, written with a HEAD-only API name
"""
GOLDEN = '''# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|---|---|
# | 1 | tanh | [8,16] -> [8,16] |
import numpy as np


def golden(x):
    return np.tanh(x).astype(x.dtype)
'''
KERNEL = '''import numpy as np
import pypto


@pypto.frontend.jit
def th_kernel(x: pypto.Tensor([8, 16], pypto.DT_FP32), y: pypto.Tensor([8, 16], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(8, 16)
    for i in pypto.loop(1, name="one", idx_name="i"):
        y[:] = pypto.tanh(x)


def th_wrapper(x):
    y = np.zeros_like(x)
    th_kernel(x, y)
    return y
'''


def _op(tmp_path: Path, target: str | None = None) -> Path:
    d = tmp_path / "th"
    d.mkdir()
    (d / "SPEC.md").write_text(SPEC.format(target=f"pypto_target: {target}\n" if target else ""))
    (d / "golden.py").write_text(GOLDEN)
    (d / "th_impl.py").write_text(KERNEL)
    return d


def test_the_emulator_and_runtime_targets_agree_on_the_names_and_the_default() -> None:
    assert TARGETS == get_args(Compat) and DEFAULT_TARGET == DEFAULT_COMPAT == Options().compat == "head"


def test_target_names_are_checked_with_one_line() -> None:
    assert parse_target("HEAD") == "head" and parse_target("0.2.0") == "0.2.0"
    with pytest.raises(TargetError, match=r"unknown PyPTO target 0\.2; use one of: head, 0\.2\.0"):
        parse_target(0.2)


def test_forge_toml_names_the_target_of_an_op_dir(tmp_path: Path) -> None:
    assert forge_toml_target(tmp_path, cwd=tmp_path) is None
    (tmp_path / "forge.toml").write_text('[models]\ndefault = "m"\n\n[toolchain]\npypto_target = "0.2.0"\n')
    assert forge_toml_target(tmp_path, cwd=tmp_path / "elsewhere") == ("0.2.0", str(tmp_path / "forge.toml"))
    (tmp_path / "forge.toml").write_text('[toolchain]\npypto_targte = "head"\n')
    with pytest.raises(TargetError, match=r"unknown key\(s\) \['pypto_targte'\]"):
        forge_toml_target(tmp_path, cwd=tmp_path)


def test_the_agents_config_accepts_the_toolchain_table(tmp_path: Path) -> None:
    from agents.config import load_config

    (tmp_path / "forge.toml").write_text('[toolchain]\npypto_target = "head"\n')
    assert load_config(tmp_path, cwd=tmp_path, env={}).source == str(tmp_path / "forge.toml")


def test_spec_declares_the_target(tmp_path: Path) -> None:
    d = _op(tmp_path, '"0.2.0"')
    assert load_op_dir(d).spec.pypto_target == "0.2.0"
    (d / "SPEC.md").write_text(SPEC.format(target="pypto_target: 0.3\n"))
    with pytest.raises(OpDirError, match="unknown PyPTO target"):
        load_op_dir(d)


@pytest.mark.slow
def test_every_verify_report_names_the_target_it_checked_against(tmp_path: Path) -> None:
    from runtime.verify import verify

    d = _op(tmp_path)
    rep = verify(d, d / "th_impl.py")
    assert (rep.verdict, rep.pypto_target, rep.pypto_target_source) == ("PASS", "head", "default"), rep.reasons
    (d / "forge.toml").write_text('[toolchain]\npypto_target = "0.2.0"\n')
    rep = verify(d, d / "th_impl.py")
    assert (rep.pypto_target, rep.pypto_target_source) == ("0.2.0", str(d / "forge.toml"))
    assert rep.verdict == "FAIL_RUNTIME" and "has no attribute 'tanh'" in json.dumps(rep.model_dump(mode="json"))
    (d / "SPEC.md").write_text(SPEC.format(target="pypto_target: head\n"))  # SPEC.md wins over forge.toml
    rep = verify(d, d / "th_impl.py")
    assert (rep.verdict, rep.pypto_target, rep.pypto_target_source) == ("PASS", "head", "SPEC.md")


_WHEEL = importlib.machinery.PathFinder.find_spec("pypto")  # sys.path, not sys.modules (the emulator may be there)
HAS_WHEEL = _WHEEL is not None and "site-packages" in str(_WHEEL.origin)


@pytest.mark.slow  # over ~6 s of a 2-core CI (session 21's budget cut; `make test-all` runs it)
@pytest.mark.skipif(not HAS_WHEEL, reason="the real pypto 0.2.0 wheel is not installed (the toolchain extra)")
def test_head_only_names_are_exactly_what_the_0_2_0_wheel_lacks(tmp_path: Path) -> None:
    code = ("import json, pypto; print('NAMES' + json.dumps(sorted(n for n in dir(pypto) if not n.startswith('_'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=True).stdout
    real = set(json.loads(next(ln for ln in out.splitlines() if ln.startswith("NAMES"))[5:]))
    ours = {n for n in API_SURFACE if "." not in n}
    assert not HEAD_ONLY & real, "a name the wheel has is gated as HEAD-only"
    assert ours - real - HEAD_ONLY <= {"EmulatorError", "jit_legacy"}, "a name the wheel lacks is not gated"


def test_agents_see_a_declared_target_but_never_its_source_path() -> None:
    """The sanitized report (what agents see) names a non-default target; the source (possibly an absolute
    forge.toml path) is a host fact and stays in the audit copy only. The default goes without saying, so the
    reports of recorded runs did not change."""
    from runtime.verify import VerifyReport

    declared = VerifyReport(target="k_impl.py", verdict="PASS", pypto_target="0.2.0",
                            pypto_target_source="/home/u/op/forge.toml").sanitized()
    assert declared["pypto_target"] == "0.2.0" and "pypto_target_source" not in declared
    assert "pypto_target" not in VerifyReport(target="k_impl.py", verdict="PASS").sanitized()
