"""A gym golden's imports from the operator's own package are copied into golden.py (`adapters.gym._inline`).

Found on the real gym (session 20): quant_batch_matmul's golden imports its config dataclasses and a scale helper
from the impl module's package path, which an op dir does not have - verify stopped with ``No module named
'experimental'``. These tests build small gym folders of their own (no vendor code)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from orchestrator.adapters.gym._inline import inline_package_imports
from orchestrator.adapters.gym._observed import golden_source

IMPL = '''\
import struct
from dataclasses import dataclass

import pypto
import torch_npu  # noqa: F401 - a device import the copied helpers do not use

_MASK = 0xFFFFE000


@dataclass
class Config:
    n: int
    scale: float = 1.0


def _masked(x):
    return struct.unpack("f", struct.pack("I", struct.unpack("I", struct.pack("f", x))[0] & _MASK))[0]


def combined(a, b):
    return _masked(a * b)


@pypto.frontend.jit
def kernel(x: pypto.Tensor([4], pypto.DT_FP32)):
    pass
'''


def _gym(tmp_path: Path, impl: str = IMPL) -> Path:
    pkg = tmp_path / "op" / "src" / "pypto_gym" / "ops" / "pypto_tile" / "exp" / "myop"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "myop_impl.py").write_text(impl)
    return tmp_path / "op" / "src"


def _run(text: str) -> dict:
    ns: dict = {}
    exec(compile(text, "golden.py", "exec"), ns)  # noqa: S102 - the test's own golden text
    return ns


GOLDEN = '''\
import math

from exp.myop.myop_impl import Config, combined as comb


def myop_golden(x, cfg: Config):
    return [v * comb(cfg.scale, 2.0) + math.pi * 0 for v in x][: cfg.n]
'''


def test_a_golden_module_gets_what_it_imports_from_the_package_and_what_that_uses(tmp_path: Path) -> None:
    src = _gym(tmp_path)
    text, refused, notes = inline_package_imports(GOLDEN.replace("import struct\n", ""), "myop_golden.py", src)
    assert refused == []
    assert "exp.myop" not in text.replace("copied by `python -m orchestrator import` from exp.myop.myop_impl", "")
    assert len(notes) == 1 and "Config, combined" in notes[0]
    for name in ("class Config", "def combined", "def _masked", "_MASK = 0xFFFFE000", "import struct"):
        assert name in text, name
    assert "def kernel" not in text and "torch_npu" not in text  # only what the golden needs
    assert "comb = combined" in text  # the import's alias
    ns = _run(text.replace("import pypto\n", ""))  # pypto: imported unused by the copied helpers here
    assert ns["myop_golden"]([1.0, 2.0, 3.0], ns["Config"](n=2, scale=1.5)) == [3.0, 6.0]


def test_a_kernel_the_golden_imports_is_not_copied(tmp_path: Path) -> None:
    src = _gym(tmp_path)
    golden = "from exp.myop.myop_impl import kernel\n\n\ndef myop_golden(x):\n    return kernel(x)\n"
    text, refused, notes = inline_package_imports(golden, "myop_golden.py", src)
    assert text == golden and notes == []
    assert len(refused) == 1 and "pypto kernel" in refused[0] and "myop_golden.py:1" in refused[0]


@pytest.mark.parametrize(("golden", "why"), [
    ("from exp.myop.myop_impl import nothing_here\n", "does not define nothing_here"),
    ("from exp.myop.myop_impl import *\n", "`import *`"),
    # the golden binds `_masked` itself: copying the impl's `_masked` (which `combined` uses) would replace it
    ("from exp.myop.myop_impl import combined\n\n\ndef _masked(x):\n    return x\n", "_masked"),
])
def test_what_cannot_be_copied_stays_an_import_and_says_why(tmp_path: Path, golden: str, why: str) -> None:
    text, refused, notes = inline_package_imports(golden, "g.py", _gym(tmp_path))
    assert text == golden and notes == []
    assert len(refused) == 1 and why in refused[0], refused


def test_helpers_that_need_another_module_of_the_package_are_not_copied(tmp_path: Path) -> None:
    impl = "from exp.common import K\n\n\ndef scaled(x):\n    return x * K\n"
    src = _gym(tmp_path, impl)
    text, refused, _ = inline_package_imports("from exp.myop.myop_impl import scaled\n", "g.py", src)
    assert "from exp.myop.myop_impl import scaled" in text
    assert len(refused) == 1 and "cannot make" in refused[0]


def test_imports_of_other_packages_are_left_alone(tmp_path: Path) -> None:
    golden = "import torch\nfrom collections import OrderedDict\nfrom somewhere.else_ import f\n"
    assert inline_package_imports(golden, "g.py", _gym(tmp_path)) == (golden, [], [])


def test_a_golden_defined_in_the_test_gets_the_package_helpers_too(tmp_path: Path) -> None:
    src = _gym(tmp_path)
    test = tmp_path / "test_myop.py"
    test.write_text(textwrap.dedent('''\
        import sys
        import torch
        from exp.myop.myop_impl import combined


        def helper(v):
            return combined(v, 2.0)


        def reference(xs):
            return [helper(v) for v in xs]


        def test_it():
            assert reference([1.0]) == [2.0]
        '''))
    text, lacks, notes = golden_source(test, "reference", True, src)
    assert lacks == [] and len(notes) == 1
    assert "def combined" in text and "def _masked" in text and "def test_it" not in text
    assert _run(text.replace("import torch\n", ""))["reference"]([1.0, 3.0]) == [2.0, 6.0]
    # without the package folder: the import is left out and reported, as before
    text, lacks, notes = golden_source(test, "reference", True)
    assert notes == [] and any("exp.myop.myop_impl" in ln for ln in lacks) and "def combined" not in text


@pytest.mark.parametrize("dtype", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float32", "int8"])
def test_golden_py_hands_the_gym_golden_torch_tensors_of_every_input_dtype(dtype: str) -> None:
    """golden() receives numpy arrays; ml_dtypes' bfloat16 / FP8 have no torch.from_numpy (quant_batch_matmul's FP8
    inputs stopped its golden with a TypeError): they go over by their bytes, values and dtype kept."""
    torch = pytest.importorskip("torch", reason="gym goldens are torch; torch is not installed")
    import ml_dtypes
    import numpy as np

    from orchestrator.adapters.gym._observed import TO_TORCH

    ns = _run(TO_TORCH)
    values = [0.5, 1.0, 2.0, 64.0] if dtype == "float8_e8m0fnu" else [0.5, -1.25, 3.0, 0.0]  # (e8m0: powers of 2 only)
    a = np.array(values, dtype=getattr(ml_dtypes, dtype, None) or np.dtype(dtype))
    t = ns["_pto_forge_torch"](a)
    assert t.dtype == getattr(torch, dtype)
    assert t.to(torch.float32).tolist() == a.astype(np.float32).tolist()
