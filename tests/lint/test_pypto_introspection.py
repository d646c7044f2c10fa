"""PF02 refuses reading the pypto API's own names: the text or identity of its module, classes and functions.

Why: such text differs between toolchains (the emulator gives its objects the wheel's names, `_wheel_identity`, but
cannot be the wheel object for object), so a wrapper that branches on it can run a right kernel under verification
and a wrong one on the device (session 16's red team: ``str(pypto.Tensor)``, ``repr(pypto)``, ``pypto.min.__name__``).
"""

from __future__ import annotations

import pytest

from runtime.lint import lint_source

HEAD = "import pypto\nimport pypto as pp\nfrom pypto import Tensor as T2\nT = pypto.Tensor\nM = pp\n"


def _pf02(line: str) -> list[str]:
    hits = lint_source(HEAD + line + "\n", "silu_impl.py")
    return [h.message for h in hits if h.rule_id == "PF02"]


@pytest.mark.parametrize("line", [
    "a = str(pypto.Tensor)", "b = repr(pypto)", 'c = f"{pypto.min}"', "d = pypto.min.__name__",
    'e = "%s" % pp.add', 'f = "{}".format(T)', "g = str(M)", "h = type(T2)", "i = pypto.Tensor.__module__",
    "j = pypto.add.__qualname__", 'k = "x" in pypto.__doc__', "m = format(pypto.frontend)", "n = dir(pypto)",
])
def test_text_or_identity_of_an_api_object_is_refused(line: str) -> None:
    assert _pf02(line), line


@pytest.mark.parametrize("line", [
    "a = str(pypto.DT_FP32)", 'b = f"{pypto.CastMode.CAST_RINT}"', "c = isinstance(T, type)",
    "d = pypto.add", 'e = f"loop_{3}"', "f = str(3)", "g = type(3).__name__",
])
def test_constants_values_and_other_text_are_not(line: str) -> None:
    assert not _pf02(line), line


@pytest.mark.parametrize("line", [
    'a = x.device.type == "cpu"', "b = x.is_cpu", "c = x.device.index", 'd = str(x.device) == "npu:0"',
    'e = x.device == torch.device("cpu")', "f = x.is_cuda"])
def test_reading_which_device_a_tensor_lives_on_is_refused(line: str) -> None:
    """PF04: the CPU under verification, the NPU in use - a wrapper branching on it got PASS (red team s16, c23)."""
    hits = lint_source(HEAD + "import torch\nx = y = torch.zeros(1)\n" + line + "\n", "silu_impl.py")
    assert [h for h in hits if h.rule_id == "PF04"], line


def test_passing_the_device_on_is_not() -> None:
    src = HEAD + ("import torch\nx = torch.zeros(1)\ny = torch.zeros(3, device=x.device, dtype=x.dtype)\n"
                  "same = x.device != y.device\n")  # two tensors' devices: gather_pa_kv_cache's argument check
    assert not [h for h in lint_source(src, "silu_impl.py") if h.rule_id == "PF04"]
