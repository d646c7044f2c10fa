"""The source rules added for the fresh gym corpus (``gym_corpus_fresh``), on small kernels written here: no gym, no
emulator run (the real-kernel cases are in ``test_bisect_fresh_gym.py``).

* a kernel that raised, while it was traced, on operands whose shapes do not broadcast: the reduction upstream that
  made the odd shape is named (``keepdim=False``; an axis every other same reduction of the operand does not use),
  through a helper's parameter to the call's argument - not the line that raised (``fag_d_axis``,
  ``lstm_rms_keepdim``: named 57 / 65, the bug on 355 / 60);
* a mixed-dtype error: the statement that uses un-cast an *expression* the kernel casts wherever else it appears,
  followed through a helper's parameter (``fag_d_bf16``: line 46 was named, a line reading a value the kernel casts
  to bf16 for another reason);
* a wrapper that passes one input where another was meant: the host line that builds the argument
  (``fag_wrapper_ss``).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from runtime.bisect._rules import static_missing_cast, static_shape_source
from runtime.bisect.api import _argument_line, _held_inputs, _swapped_input

HELPER_KERNEL = '''\
import pypto


def tile(p, t, d):
    s = pypto.mul(p, t)
    out = pypto.sub(s, d)
    return out


@pypto.frontend.jit()
def kern(a, b, o):
    for i in pypto.loop(4):
        x = pypto.view(a, [128, 64], [i * 128, 0])
        y = pypto.view(b, [128, 64], [i * 128, 0])
        xy = pypto.cast(pypto.mul(x, y), pypto.DT_FP32)
        d = pypto.sum(xy, -1, keepdim=True)
        r = tile(x, y, d)
        pypto.assemble(r, [i * 128, 0], o)
    for k in pypto.loop(4):
        x = pypto.view(b, [128, 64], [k * 128, 0])
        y = pypto.view(a, [128, 64], [k * 128, 0])
        xy = pypto.cast(pypto.mul(x, y), pypto.DT_FP32)
        d = pypto.sum(xy, -1, keepdim=True)
        r = tile(y, x, d)
        pypto.assemble(r, [k * 128, 0], o)
    for j in pypto.loop(4):
        x = pypto.view(a, [128, 64], [j * 128, 0])
        y = pypto.view(b, [128, 64], [j * 128, 0])
        xy = pypto.cast(pypto.mul(x, y), pypto.DT_FP32)
        d = pypto.sum(xy, 0, keepdim=True)
        r = tile(x, y, d)
        pypto.assemble(r, [j * 128, 0], o)
'''

SHAPE_MSG = "shape not support binary operation (shapes [[128, 64], [1, 64]])"


def test_shape_error_names_the_reduction_over_the_odd_axis_through_the_helper() -> None:
    found = static_shape_source(HELPER_KERNEL, 6, SHAPE_MSG)
    assert found is not None and found[0] == 30, found
    assert "every other sum of xy" in found[1] and "axis -1" in found[1]


def test_shape_error_names_a_reduction_that_drops_its_axis() -> None:
    src = '''\
import pypto


def norm(x, eps):
    y = pypto.mul(x, x)
    y = pypto.sum(y, -1, keepdim=False)
    y = pypto.add(y, eps)
    y = pypto.sqrt(y)
    out = pypto.div(x, y)
    return out
'''
    found = static_shape_source(src, 9, "shape not support binary operation (shapes [[4, 4096], [1, 4]])")
    assert found is not None and found[0] == 6 and "keepdim=False" in found[1], found


def test_shape_error_without_an_odd_reduction_names_nothing() -> None:
    same_axes = HELPER_KERNEL.replace("pypto.sum(xy, 0, keepdim=True)", "pypto.sum(xy, -1, keepdim=True)")
    assert static_shape_source(same_axes, 6, SHAPE_MSG) is None
    assert static_shape_source(HELPER_KERNEL, 6, "operand dtypes differ") is None  # not a shape error


def test_mixed_dtypes_name_the_expression_used_uncast_through_the_helper() -> None:
    src = HELPER_KERNEL.replace("d = pypto.sum(xy, 0, keepdim=True)",
                                "d = pypto.sum(pypto.mul(x, y), -1, keepdim=True)")
    assert static_missing_cast(src, 6) == 30


def test_mixed_dtypes_without_an_uncast_expression_keep_the_name_rule() -> None:
    src = '''\
import pypto


@pypto.frontend.jit()
def kern(a, o):
    xt = pypto.view(a, [8, 64], [0, 0])
    xf = pypto.cast(xt, pypto.DT_FP32)
    s = pypto.sum(xt, -1, keepdim=True)
    d = pypto.sub(xf, s)
    pypto.assemble(d, [0, 0], o)
'''
    assert static_missing_cast(src, 9) == 8


WRAPPER = '''\
import pypto


@pypto.frontend.jit()
def kern(q, scale_max, scale_sum, out):
    pass


def wrapper(q, scale_max, scale_sum):
    m = scale_max.reshape(-1, 8).contiguous()
    s = scale_max.reshape(-1, 8).contiguous()
    out = q.new_empty(q.shape)
    kern(q, m, s, out)
    return out
'''


def test_the_wrapper_line_that_builds_an_argument_from_the_wrong_input() -> None:
    assert _argument_line(WRAPPER, "kern", "scale_sum", "scale_max") == 11
    assert _argument_line(WRAPPER, "kern", "scale_max", "scale_max") == 10


def _run(args: list[dict]) -> SimpleNamespace:
    return SimpleNamespace(kernel_args=[{"kernel": "kern", "args": args}])


def test_a_kernel_parameter_holding_another_input_is_a_wrapper_bug() -> None:
    rng = np.random.default_rng(0)
    q, mx, sm = (rng.standard_normal((4, 8)).astype(np.float32) for _ in range(3))
    plan = SimpleNamespace(params=["q", "scale_max", "scale_sum"])
    run = _run([{"name": "q", "input": 0}, {"name": "scale_max", "input": 1}, {"name": "scale_sum", "input": 1},
                {"name": "out"}])
    found = _swapped_input(run, plan, [q, mx, sm], WRAPPER)
    assert found is not None and found[0] == 11 and "'scale_sum' holds the data of input 'scale_max'" in found[1]
    # equal data says nothing; a parameter that holds its own input is right
    assert _swapped_input(run, plan, [q, mx, mx.copy()], WRAPPER) is None
    ok = _run([{"name": "q", "input": 0}, {"name": "scale_max", "input": 1}, {"name": "scale_sum", "input": 2}])
    assert _swapped_input(ok, plan, [q, mx, sm], WRAPPER) is None


def test_parameters_holding_a_case_input_are_no_checkpoints() -> None:
    run = _run([{"name": "q", "input": 0}, {"name": "dq"}])
    assert _held_inputs(run) == {"q"}


PADDED = '''\
import pypto
import torch


@pypto.frontend.jit(runtime_options={"run_mode": 1})
def kern(scores, out, n):
    pass


def wrapper(scores):
    m, s = scores.shape
    fill = 0.0
    if s % 128:
        pad = torch.full((m, 128 - s % 128), fill, dtype=scores.dtype)
        padded = torch.cat([scores, pad], dim=1)
    else:
        padded = scores
    out = torch.empty_like(padded)
    kern(padded, out, 1)
    return out[:, :s]
'''


def test_the_pad_value_of_a_padded_argument_is_traced_to_its_constant() -> None:
    from runtime.bisect.api import _pad_line

    assert _pad_line(PADDED, "kern", "scores") == 12  # through both branches of the if, to `fill = 0.0`


def test_a_helper_called_from_a_jit_kernel_with_options_gets_its_call_site() -> None:
    """``@pypto.frontend.jit(runtime_options=...)`` is a kernel too (read as a helper, no helper op had a call site:
    ``rms_core_arg``'s wrong argument was named inside the helper, not at the call)."""
    from runtime.bisect._claims import call_sites
    from runtime.bisect._records import Rec

    src = '''\
import pypto


def core(x, n):
    return x / n


@pypto.frontend.jit(runtime_options={"run_mode": 1})
def kern(x, out):
    for b in pypto.loop(4, name="LOOP_B", idx_name="b"):
        r = core(x, 64)
        pypto.assemble(r, [b, 0], out)
'''
    r = Rec(seq=3, node=None, op="div", file="k_impl.py", line=5, iteration={"LOOP_B": 0})
    assert call_sites(src, "k_impl.py", [r]) == {3: 11}
