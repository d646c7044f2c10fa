"""OL62 and ``torch.library`` (session 49): a registration is not host math.

UX audit s48/s49: a kernel file that registers its wrapper as a torch operator (``torch.library.Library`` +
``@torch.library.impl``, as the gym's ``gated_delta_rule_impl.py`` does for graph capture) was told by OL62 that
``torch.library.Library`` "computes on the host" and to "move the computation into the JIT kernel" - advice that
cannot be followed, since nothing is computed. The file stays refused where it should be, for the reason that
holds: PF11 (a module-level ``Library`` is state that outlives a call). Math inside a registered function is host
code like any other and still OL62's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.lint import lint_source

KERNEL = '''import numpy as np
import pypto
import torch

TILE = 16
D = 256


@pypto.frontend.jit
def silu_kernel(
    x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
):
    n = x.shape[0]
    pypto.set_vec_tile_shapes(TILE, D)
    for i in pypto.loop((n + TILE - 1) // TILE, name="rows", idx_name="i"):
        valid = (n - i * TILE).min(TILE)
        xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
        e = pypto.exp(pypto.mul(xt, -1.0))
        pypto.assemble(pypto.div(xt, pypto.add(e, 1.0)), [i * TILE, 0], y)


def silu_wrapper(x):
    y = np.zeros_like(x)
    silu_kernel(x, y)
    return y

REGISTRATION
'''

LIBRARY = '''
_lib = torch.library.Library("forge_silu", "DEF")
_lib.define("silu(Tensor x) -> Tensor")


@torch.library.impl(_lib, "silu", "CPU")
def _silu_cpu(x):
    return torch.from_numpy(silu_wrapper(x.numpy()))
'''

CUSTOM_OP_MATH = '''
@torch.library.custom_op("forge::silu2", mutates_args=())
def _silu2(x: torch.Tensor) -> torch.Tensor:
    return torch.sigmoid(x) * x
'''


def _fails(registration: str) -> list[tuple[str, str]]:
    source = KERNEL.replace("REGISTRATION", registration)
    return [(f.rule_id, f.message) for f in lint_source(source, "silu_impl.py", stage="final") if f.status == "FAIL"]


def test_the_kernel_alone_is_clean() -> None:
    assert _fails("") == []


def test_a_library_registration_is_not_host_math_but_module_state() -> None:
    fails = _fails(LIBRARY)
    assert not [m for rule, m in fails if rule == "OL62"], fails
    pf11 = [m for rule, m in fails if rule == "PF11"]
    assert any("module-level `_lib`" in m and "torch.library.Library" in m for m in pf11), fails


def test_math_inside_a_registered_function_is_still_host_math() -> None:
    fails = _fails(CUSTOM_OP_MATH)
    assert any(rule == "OL62" and "torch.sigmoid" in m for rule, m in fails), fails
    assert not any("torch.library" in m for rule, m in fails if rule == "OL62"), fails


def test_a_torch_op_call_is_still_refused() -> None:
    fails = _fails("\ndef silu_via_ops(x):\n    return torch.ops.forge_silu.silu(x)\n")
    assert any("torch.ops" in m for _rule, m in fails), fails


GYM_FILE = ("gym/ops/gated_delta_rule/src/pypto_gym/ops/pypto_tensor/qwen3_5_9b/gated_delta_rule/"
            "gated_delta_rule_impl.py")


def test_the_gym_registration_is_named_for_its_state_not_as_math() -> None:
    import os

    path = Path(os.environ.get("FORGE_SHARED", "../shared")) / GYM_FILE
    if not path.is_file():
        pytest.skip(f"the vendor gym is not at {path} (set FORGE_SHARED)")
    findings = lint_source(path.read_text(encoding="utf-8"), "gated_delta_rule_impl.py", stage="final")
    fails = [(f.rule_id, f.message) for f in findings if f.status == "FAIL"]
    assert not any("torch.library" in m for rule, m in fails if rule == "OL62"), fails
    assert any(rule == "PF11" and "pyptolib" in m for rule, m in fails), fails
