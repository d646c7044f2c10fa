"""``torch_npu.testing`` of the stand-in: the unittest base class and helpers torch_npu's own operator tests use.

Why: tests written in torch_npu's style start with ``from torch_npu.testing.testcase import TestCase, run_tests``
and compare with ``self.assertRtolEqual(cpu_out, npu_out)``; the stand-in's ``torch_npu.testing`` was an empty
package, so the import stopped the script before any kernel ran (s37). Behaviour follows torch_npu's documented use
of these names (read for behaviour, nothing copied):

* ``testcase.TestCase`` is a ``unittest.TestCase`` with ``assertRtolEqual(x, y, prec=1e-4, prec16=1e-3,
  auto_trans_dtype=False, message=None)`` - same shape and dtype, NaNs in the same places, and per element an absolute
  or relative (to the larger magnitude) error within ``prec`` (``prec16`` for float16; bf16 compared in float32),
  failing when more than a ``prec`` fraction of the elements miss both; bools compare exactly - and an
  ``assertEqual(x, y, prec=None, message="")`` that compares tensors and arrays by their largest absolute error
  (``prec``, default ``self.precision`` = 1e-5; integers and bools exactly) and anything else as unittest does;
* ``testcase.run_tests()`` runs the ``__main__`` module's tests (``unittest.main``, the script's arguments);
* ``common_utils.create_common_tensor([np_dtype, acl_format, shape], min, max, device=None)`` returns ``(cpu, npu)``
  uniformly drawn from ``numpy.random``: two distinct tensors (a device host copies to the NPU; here ``npu`` is a
  clone, so a kernel writing it in place leaves ``cpu`` as drawn), ``npu`` tagged with the format
  (``npu_format_cast``) unless it is -1; ``SupportedDevices([...])`` skips unless the emulated chip's name starts
  with one of them; ``skipIfUnsupportMultiNPU(n)`` skips below ``n`` devices (the emulator has one).

Any other name of these modules raises the stand-in's ``NotProvidedError``.
"""

from __future__ import annotations

import sys
import types
import unittest
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["common_utils_module", "testcase_module"]

_MIN16, _MIN = 6.1e-05, 1e-9


def _as_numpy(x: Any) -> Any:
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor (bf16 has no numpy dtype: float32 first)
        x = x.detach().cpu()
        if str(x.dtype) == "torch.bfloat16":
            x = x.float()
        return x.numpy()
    return np.asarray(x)


class TestCase(unittest.TestCase):
    """``torch_npu.testing.testcase.TestCase`` of the stand-in (module doc)."""

    precision = 1e-5
    maxDiff = None

    def assertRtolEqual(self, x: Any, y: Any, prec: float = 1e-4, prec16: float = 1e-3,  # noqa: N802 - torch_npu's
                        auto_trans_dtype: bool = False, message: str | None = None) -> None:
        if auto_trans_dtype and hasattr(x, "to") and hasattr(y, "dtype"):
            x = x.to(y.dtype)
        a, b = _as_numpy(x), _as_numpy(y)
        note = f": {message}" if message else ""
        if a.shape != b.shape:
            self.fail(f"shape error: {a.shape} vs {b.shape}{note}")
        if a.dtype != b.dtype:
            self.fail(f"dtype error: {a.dtype} vs {b.dtype}{note}")
        if a.dtype == np.bool_:
            if not np.array_equal(a, b):
                self.fail(f"result error{note}")
            return
        if a.dtype.kind not in "fiu":
            self.fail(f"required a numeric or bool tensor, got {a.dtype}{note}")
        tol, floor = (prec16, _MIN16) if a.dtype == np.float16 else (prec, _MIN)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        nan = np.isnan(a64)
        if not np.array_equal(nan, np.isnan(b64)):
            self.fail(f"NaN inconsistent{note}")
        diff = np.abs(np.where(nan, 0.0, b64 - a64))
        diff = np.where(np.isinf(a64) & (a64 == b64), 0.0, diff)
        rel = diff / (np.maximum(np.abs(a64), np.abs(b64)) + floor)
        bad_abs, bad_rel = int(np.sum(diff > tol)), int(np.sum(rel > tol))
        if bad_abs > a.size * tol and bad_rel > a.size * tol:
            self.fail(f"result error: {min(bad_abs, bad_rel)} of {a.size} elements beyond {tol} "
                      f"(max abs error {float(diff.max()) if diff.size else 0.0:.6g}){note}")

    def assertEqual(  # type: ignore[override]  # noqa: N802 - unittest's name, torch_npu's signature (prec)
            self, x: Any, y: Any, prec: float | None = None, message: str = "", *args: Any, **kwargs: Any) -> None:
        if isinstance(prec, str):  # unittest's assertEqual(first, second, msg)
            prec, message = None, prec
        message = kwargs.get("msg") or message
        arrays = [v for v in (x, y) if isinstance(v, np.ndarray) or hasattr(v, "detach")]
        if not arrays:
            if isinstance(x, float | int) and isinstance(y, float | int) and not isinstance(x, bool) \
                    and prec is not None:
                self.assertLessEqual(abs(x - y), prec, message or None)
                return
            super().assertEqual(x, y, message or None)
            return
        a, b = _as_numpy(x), _as_numpy(y)
        super().assertEqual(a.shape, b.shape, message or "shape mismatch")
        if a.dtype.kind in "biu" and b.dtype.kind in "biu":
            self.assertTrue(np.array_equal(a, b), message or "values differ")
            return
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        self.assertTrue(np.array_equal(np.isnan(a64), np.isnan(b64)), message or "NaN inconsistent")
        same = (a64 == b64) | np.isnan(a64)
        err = float(np.abs(np.where(same, 0.0, a64 - b64)).max()) if a64.size else 0.0
        self.assertLessEqual(err, self.precision if prec is None else prec, message or None)


def run_tests() -> None:
    """``torch_npu.testing.testcase.run_tests``: the ``__main__`` module's tests with the script's arguments."""
    unittest.main(module="__main__", argv=list(sys.argv))


def testcase_module(provided_getattr: Callable[[list[str], str], Any]) -> types.ModuleType:
    mod = types.ModuleType("torch_npu.testing.testcase", "torch_npu.testing.testcase of the PTO Forge stand-in")
    names = {"TestCase": TestCase, "run_tests": run_tests}
    mod.__dict__.update(names, __getattr__=provided_getattr(sorted(names), mod.__name__))
    return mod


def common_utils_module(torch: Any, npu_format_cast: Callable[[Any, int], Any], device_name: Callable[[], str],
                        provided_getattr: Callable[[list[str], str], Any]) -> types.ModuleType:
    def create_common_tensor(item: Any, min_value: float, max_value: float, device: Any = None) -> tuple[Any, Any]:
        dtype, fmt, shape = item[0], item[1], item[2]
        data = np.random.uniform(min_value, max_value, shape).astype(dtype)
        cpu = torch.from_numpy(data)
        npu = cpu.clone().to(device if device is not None else "npu")
        if fmt != -1:
            npu = npu_format_cast(npu, fmt)
        return cpu, npu

    def SupportedDevices(devices: list[str]) -> Callable[[Any], Any]:  # noqa: N802 - torch_npu's name
        name = device_name()
        run = any(name.startswith(d) for d in devices)
        return unittest.skipUnless(run, f"the emulated {name} is none of {devices}")

    def skipIfUnsupportMultiNPU(n: int) -> Callable[[Any], Any]:  # noqa: N802 - torch_npu's name
        return unittest.skipIf(n > 1, f"needs {n} NPUs; the emulator has one")

    mod = types.ModuleType("torch_npu.testing.common_utils", "torch_npu.testing.common_utils of the PTO Forge stand-in")
    names = {"create_common_tensor": create_common_tensor, "SupportedDevices": SupportedDevices,
             "skipIfUnsupportMultiNPU": skipIfUnsupportMultiNPU}
    mod.__dict__.update(names, __getattr__=provided_getattr(sorted(names), mod.__name__))
    return mod
