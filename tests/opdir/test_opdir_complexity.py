"""Complexity signals and the module-count formula (workflow.md Part B §4.3), on small numpy goldens."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from opdir_helpers import SILU

from runtime.opdir import complexity, complexity_from_signals, load_op_dir
from runtime.opdir._complexity import golden_signals

FIXTURES = Path(__file__).parent / "fixtures" / "complexity"


def source(name: str) -> str:
    return (FIXTURES / f"{name}.py").read_text(encoding="utf-8")


def module(name: str):
    spec = importlib.util.spec_from_file_location(f"cx_{name}", FIXTURES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# upstream self-test expectations (derive_design_params): GELU 1, Softmax 1, LayerNorm 1, attention_fwd 1,
# attention_bwd 2, FA_fwd 1, FA_bwd 2
@pytest.mark.parametrize(("name", "signals", "modules"), [
    ("gelu", (4, 0, 0, 0), 1),
    ("softmax", (6, 0, 1, 0), 1),          # whole softmax = 1 reduction (the max is its stabiliser)
    ("layernorm", (6, 0, 2, 0), 1),
    ("attention_fwd", (8, 2, 1, 0), 1),
    ("attention_bwd", (15, 5, 2, 0), 2),
    ("fa_fwd", (20, 2, 1, 1), 1),          # online softmax: m/l/o carried by one loop = 1 state group
    ("fa_bwd", (19, 5, 1, 1), 2),          # helper _cast() is counted too
])
def test_upstream_expectations(name: str, signals: tuple[int, int, int, int], modules: int) -> None:
    c = complexity(source(name))
    assert (c.effective_lines, c.matmul_count, c.cross_tile_reduce_count, c.state_groups) == signals
    assert c.module_count == modules
    assert c.level == ("L0" if modules == 1 else "L1")


def test_gated_delta_rule_with_upstream_manual_state_groups() -> None:
    # upstream counts state + decay as 2 state groups by hand; our AST heuristic sees one carried loop.
    lines, mm, red, groups, _ = golden_signals(source("gated_delta_rule"))
    assert (mm, red, groups) == (3, 0, 1)
    assert complexity_from_signals(lines, mm, red, groups)[1] == 1
    assert complexity_from_signals(lines, mm, red, 2)[1] == 2  # the formula reproduces upstream's 2


@pytest.mark.parametrize(("signals", "total", "modules"), [
    ((10, 0, 0, 0), 10 / 30, 1),
    ((30, 0, 0, 0), 1.0, 1),
    ((39, 0, 0, 0), 1.3, 1),            # >= 1.3 but round(1.3) == 1
    ((45, 0, 0, 0), 1.5, 2),            # banker's rounding: round(1.5) == 2
    ((75, 0, 0, 0), 2.5, 2),            # round(2.5) == 2
    ((12, 6, 0, 0), 2.0, 1),            # capped by ceil(lines / 12) = 1
    ((13, 6, 0, 0), 2.0, 2),
    ((150, 3, 0, 0), 2.0, 2),           # line signal capped at structural + 1 when structural >= 1
    ((150, 0, 0, 0), 5.0, 5),           # no structural signal: lines alone decide
    ((60, 0, 0, 3), 3.0, 3),            # state groups
    ((40, 4, 5, 0), 3.0, 3),            # O = (4 + 5) / 3
])
def test_formula(signals: tuple[int, int, int, int], total: float, modules: int) -> None:
    t, n = complexity_from_signals(*signals)
    assert t == pytest.approx(total)
    assert n == modules


def test_reduction_and_matmul_spellings() -> None:
    src = (
        "import numpy as np\n"
        "def helper(a):\n    return np.einsum('ij,jk->ik', a, a)\n"
        "def golden(x, w):\n"
        "    a = x @ w\n    b = np.matmul(x, w)\n    c = np.dot(x, w)\n    d = helper(x)\n"
        "    e = max(1, 2)\n    f = x.sum(-1) + np.amax(x) + np.var(x)\n    a @= w\n"
        "    return a + b + c + d + e + f\n"
        "def make_inputs(case, rng):\n    return [x @ x for x in range(3)]\n"
    )
    lines, mm, red, groups, names = golden_signals(src)
    assert mm == 5 and red == 3 and groups == 0  # builtin max is a scalar; make_inputs is not counted
    assert names == ["golden", "helper"] and lines == 8 + 1


def test_loop_without_carried_state_is_not_a_state_group() -> None:
    src = ("import numpy as np\n"
           "def golden(x):\n    out = np.zeros_like(x)\n    for i in range(x.shape[0]):\n"
           "        row = x[i] * 2\n        out[i] = row\n    return out\n")
    assert golden_signals(src)[3] == 0
    carried = src.replace("        out[i] = row\n", "        out = out + row\n")
    assert golden_signals(carried)[3] == 1


def test_fixtures_are_real_goldens() -> None:
    rng = np.random.default_rng(0)
    q, k, v, do = (rng.standard_normal((2, 3, 128, 16)).astype(np.float32) for _ in range(4))
    o = module("attention_fwd").golden(q, k, v)
    np.testing.assert_allclose(module("fa_fwd").golden(q, k, v), o, rtol=1e-4, atol=1e-5)
    s = (q @ np.swapaxes(k, -1, -2)) / np.sqrt(16)
    lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1, keepdims=True)) + s.max(-1, keepdims=True)
    ref = module("attention_bwd").golden(q, k, v, do)
    got = module("fa_bwd").golden(q, k, v, o, do, lse)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4)
    x = rng.standard_normal((4, 32)).astype(np.float32)
    np.testing.assert_allclose(module("softmax").golden(x).sum(-1), 1.0, rtol=1e-6)


def test_silu_is_l0() -> None:
    c = complexity(load_op_dir(SILU))
    assert (c.module_count, c.level, c.matmul_count) == (1, "L0", 0)
    dumped = c.model_dump()
    assert dumped["signals"] == {"effective_lines": 4, "matmul_count": 0, "cross_tile_reduce_count": 0,
                                 "loop_carried_state_groups": 0}
    assert dumped["total_complexity"] == pytest.approx(4 / 30, abs=1e-4)


KB_MODEL = '''
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_f, out_f, groups):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)
        self.group_norm = nn.GroupNorm(groups, out_f)

    def forward(self, x):
        x = self.linear(x)
        x = torch.sigmoid(x) * x
        x = self.group_norm(x)
        return torch.sum(x, dim=1)


_model = None


def _module():
    return Model(8, 16, 4)


def golden(x):
    return _module()(x)
'''


def test_a_kernelbench_model_counts_where_the_operator_is() -> None:
    """An imported KernelBench task's golden builds the task's ``Model``: its layers (``nn.Linear`` = a matmul,
    ``nn.GroupNorm`` = a reduction) and forward count; a layer called through ``self`` is not counted twice. Before,
    only the adapter's own lines were read (every imported matmul task: matmul count 0)."""
    lines, mm, red, groups, names = golden_signals(KB_MODEL)
    assert (mm, red, groups) == (1, 2, 0)
    assert {"golden", "_module", "__init__", "forward"} <= set(names)
    assert golden_signals(KB_MODEL.replace("self.linear(x)", "x @ x.T"))[1] == 2  # the layer and the @
