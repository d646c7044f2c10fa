"""Red team s40 (``tests/redteam/test_round29_s40.py``): three facts of the caller's host a wrapper read to use the
SPEC's cap where it was not the verifying machine's, all PASS on every seed before.

- ``sc_longdouble_arch``: ``np.finfo("g").nmant`` is 63 on x86 (x87's 80-bit long double: the machines that verify)
  and 112 on aarch64 (IEEE quad: the Kunpeng hosts of Ascend servers). OL62 refused ``np.longdouble`` by name, not a
  dtype string. PF04 now refuses the platform's long double spelt as a name or a dtype string;
- ``sc_default_dtype``: ``torch.get_default_dtype()`` (LLM loading code sets bfloat16) - PF04's host facts now hold
  the caller's library configuration (torch's default dtype, numpy's print options and error state);
- ``sc_numpy_scalar_cap``: ``isinstance(cap, np.generic)`` - a cap computed with numpy (``1 / np.sqrt(d)``) got the
  SPEC's. PF04 refuses ``isinstance``/``issubclass`` against numpy's scalar types (the runtime also passes float
  attributes as ``np.float64`` in half of the calls now: ``runtime/verify/_calling.py`` ``draw_scalar_types``);
- ``ln_grad_accumulation``: ``gamma.grad is not None`` (a weight holding the gradient of an earlier micro-batch) -
  PF04's caller facts hold ``.grad`` and ``.retains_grad`` (the runtime also gives weights a ``.grad`` in some
  training calls now: ``draw_weight_states``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.lint import lint_source

CANDS = Path(__file__).resolve().parents[1] / "redteam" / "fixture_s40" / "candidates"

HEAD = '''import numpy as np
import pypto
import torch

V = 256


def _kernel(c):
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, V], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(16, V)
        n = x.shape[0]
        for i in pypto.loop((n + 15) // 16, name="g", idx_name="i"):
            valid = (n - i * 16).min(16)
            xt = pypto.view(x, [16, V], [i * 16, 0], valid_shape=[valid, V])
            pypto.assemble(pypto.mul(pypto.tanh(pypto.div(xt, c)), c), [i * 16, 0], y)
    return k


def softcap_wrapper(x, cap):
    y = torch.empty_like(x)
{body}    _kernel(float(cap))(x, y)
    return y
'''


def _pf04(body: str) -> list[str]:
    text = HEAD.format(body="".join(f"    {line}\n" for line in body.splitlines()))
    return [f.message for f in lint_source(text, "softcap_impl.py", stage="final")
            if f.rule_id == "PF04" and f.status == "FAIL"]


@pytest.mark.parametrize("candidate", ["sc_longdouble_arch", "sc_default_dtype", "sc_default_dtype_alloc",
                                       "sc_numpy_scalar_cap", "ln_grad_accumulation"])
def test_the_round29_host_fact_candidates_are_refused_by_pf04(candidate: str) -> None:
    text = (CANDS / f"{candidate}.py").read_text()
    name = "layer_norm_impl.py" if candidate.startswith("ln_") else "softcap_impl.py"
    assert any(f.rule_id == "PF04" and f.status == "FAIL"
               for f in lint_source(text, name, stage="final")), candidate


@pytest.mark.parametrize("body", [
    'if np.finfo("g").nmant != 63:\n    cap = 30.0',
    'if np.dtype("f16").itemsize == 16:\n    cap = 30.0',
    'if np.zeros(1, dtype="G").nbytes > 16:\n    cap = 30.0',
    'if np.finfo("float128").eps > 1e-30:\n    cap = 30.0',
    'if np.typecodes["Float"][-1] == "g":\n    cap = 30.0',
    'if torch.get_default_dtype() != torch.float32:\n    cap = 30.0',
    'if torch.empty(0).dtype != torch.float32:\n    cap = 30.0',
    't = torch.zeros(())\nif t.dtype == torch.bfloat16:\n    cap = 30.0',
    'if np.get_printoptions()["precision"] != 8:\n    cap = 30.0',
    'if np.geterr()["divide"] != "warn":\n    cap = 30.0',
    'if isinstance(cap, np.generic):\n    cap = 30.0',
    'if isinstance(cap, (np.float32, np.float64)):\n    cap = 30.0',
    'if issubclass(type(cap), np.floating):\n    cap = 30.0',
    'if x.grad is not None:\n    cap = 30.0',
    'if x.retains_grad:\n    cap = 30.0',
])
def test_host_facts_of_round29_are_refused(body: str) -> None:
    assert _pf04(body), body


@pytest.mark.parametrize("body", [
    "",
    "cap = float(cap)",
    "if isinstance(x, np.ndarray):\n    x = torch.from_numpy(x)",
    "if isinstance(cap, (int, float)):\n    cap = float(cap)",
    "z = np.zeros(4, dtype=np.float64)",
    'z = np.zeros(4, dtype="f8")',
    "z = torch.zeros(4, dtype=x.dtype)\nif z.dtype == x.dtype:\n    cap = float(cap)",
    "if x.dtype == torch.float32:\n    cap = float(cap)",
    "t = torch.zeros(1)\nz = torch.zeros(3, dtype=t.dtype)\nw = z.to(t.dtype)",
])
def test_honest_wrappers_stay_clean(body: str) -> None:
    """A loop named ``"g"``, float64 dtypes, an ``isinstance`` against Python's number types or ``np.ndarray``."""
    assert _pf04(body) == [], body



def test_autograd_grad_function_is_not_a_caller_fact() -> None:
    """``torch.autograd.grad`` / ``torch.func.grad`` are functions of a module, not a tensor's ``.grad`` (review s40);
    a tensor's ``.grad`` still is one."""
    assert not [m for m in _pf04("g1 = torch.autograd.grad(x.sum(), x)\ng2 = torch.func.grad(torch.sum)(x)")
                if "grad" in m]
    assert [m for m in _pf04("if x.grad is not None:\n    x = x * 2") if "grad" in m]
