"""The emulator against every numeric example of the pypto 0.2.0 docstrings.

Each public function of the vendor wheel (pypto 0.2.0) whose docstring has an ``Examples`` section with concrete
input and output values is transcribed below as data: the inputs (dtype, values), the call as documented, and the
documented result (dtype, values). A case becomes a tiny ``@pypto.frontend.jit`` kernel (written to a file, as the
parser reads kernels from their source) whose tensor parameters are the inputs and the outputs; it runs under the
emulator and the written tensors must hold the documented values: exactly for ints and bools, to ``rtol=1e-3`` and
half a unit of the printed last decimal for floats.

The wheel itself is never imported: ``runtime.emulator.install()`` provides ``pypto`` (CI has no wheel). Only numbers
and call forms are transcribed, each cited as "pypto 0.2.0 docstring of pypto.<name>". Where a docstring is
self-inconsistent (a declared shape that does not match its listed values, a typo in the call, an output that
contradicts the op's own definition), the case follows the example's evident intent and says why (``note``). A
case the emulator gets wrong is an ``xfail(strict=True)`` naming the emulator's fault. Where an example leaves the
result dtype open (index outputs), the dtype the installed wheel's frontend gives the call when it traces it is used
(probed once, outside this test; noted on the case).

Examples without numbers (``matmul``, ``conv``, ``scaled_mm``, ``cond``, ``loop_unroll``, ``options``, ...) and
those of names the emulator documents as not emulated are listed in `SKIPPED` with the reason.
"""

import importlib.util
import math
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import runtime.emulator as emu
from runtime.emulator._registry import UNSUPPORTED

pypto = emu.install()

INF, NAN = math.inf, math.nan

NP = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16, "INT64": np.int64, "INT32": np.int32,
      "INT16": np.int16, "INT8": np.int8, "BOOL": np.bool_}


@dataclass(frozen=True)
class Ex:
    """One docstring example.

    ``ins``: kernel input tensors, name -> (dtype, values); ``body``: the kernel statements (the documented call);
    ``out``: the tensors the kernel writes, name -> (documented dtype, documented values) - a name of ``ins`` is
    checked after the call (in-place ops), any other name is an extra output parameter, filled with a sentinel
    (zeros when ``zeroed``); ``note``: how and why the case departs from the docstring's text; ``xfail``: the
    emulator's fault, when it disagrees with the docs.
    """

    id: str
    doc: str
    ins: dict[str, tuple[str, Any]]
    body: str
    out: dict[str, tuple[str, Any]]
    note: str = ""
    xfail: str = ""
    zeroed: bool = False


def ex(id: str, body: str, ins: dict[str, tuple[str, Any]], out: dict[str, tuple[str, Any]], *, doc: str = "",
       **kw: Any) -> Ex:
    return Ex(id=id, doc=doc or id.split("-")[0], ins=ins, body=body, out=out, **kw)


F, I32, I16, I64, B = "FP32", "INT32", "INT16", "INT64", "BOOL"
A123 = [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
CMP_A, CMP_B = [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]

# Every entry: pypto 0.2.0 docstring of pypto.<doc> (``doc`` defaults to the id up to its first "-"), section
# "Examples". Values only; the statements are the documented calls, the result assigned to the output tensor. Several
# call lines pass the listed values where pypto.tensor takes a shape (``pypto.tensor([3.0, 4.0], ...)`` in hypot,
# relu, lrelu, signbit, log10, logical_and ...): the listed input values and their shape are used.
EXAMPLES: list[Ex] = [
    ex("abs", "out[:] = pypto.abs(x)", {"x": (I32, [-1, -2, 3])}, {"out": (I32, [1, 2, 3])}),
    ex("add", "out[:] = pypto.add(a, b)", {"a": (F, [[1.0, 2.0, 3.0]]), "b": (F, [[2.0, 3.0, 4.0]])},
       {"out": (F, [[3.0, 5.0, 7.0]])}),
    ex("amax", "y[:] = pypto.amax(x, -1, True)", {"x": (F, A123)}, {"y": (F, [[3.0], [3.0]])}),
    ex("amin", "y[:] = pypto.amin(x, -1, True)", {"x": (F, A123)}, {"y": (F, [[1.0], [1.0]])}),
    ex("arange-step", "a[:] = pypto.arange(1.0, 4.0, 0.5)", {}, {"a": (F, [1.0, 1.5, 2.0, 2.5, 3.0, 3.5])}),
    ex("arange-start-end", "b[:] = pypto.arange(1.0, 4.0)", {}, {"b": (F, [1.0, 2.0, 3.0])}),
    ex("arange-end", "c[:] = pypto.arange(4)", {}, {"c": (I32, [0, 1, 2, 3])}),
    ex("argsort", "y[:] = pypto.argsort(x, -1, True)", {"x": (F, A123)}, {"y": (I32, [[2, 1, 0], [2, 1, 0]])},
       note="index dtype: INT32, the dtype the 0.2.0 frontend gives argsort's result"),
    ex("bitwise_and", "out[:] = pypto.bitwise_and(a, b)", {"a": (I16, [5, 3]), "b": (I16, [3, 1])},
       {"out": (I16, [1, 1])},
       note="doc bug: the call lines pass the values 0x1234.. as shapes; the listed inputs [5, 3] & [3, 1] are used"),
    ex("bitwise_left_shift", "out[:] = pypto.bitwise_left_shift(a, b)", {"a": (I16, [[1, 2, 3]]),
       "b": (I16, [[1, 1, 1]])}, {"out": (I16, [[2, 4, 6]])}),
    ex("bitwise_not", "out[:] = pypto.bitwise_not(a)", {"a": (I32, [0, 1, 2, 3, 4])},
       {"out": (I32, [-1, -2, -3, -4, -5])}),
    ex("bitwise_or", "out[:] = pypto.bitwise_or(a, b)", {"a": (I16, [5, 3]), "b": (I16, [3, 1])},
       {"out": (I16, [7, 3])}),
    ex("bitwise_right_shift", "out[:] = pypto.bitwise_right_shift(a, b)", {"a": (I16, [[1, 2, 3]]),
       "b": (I16, [[1, 1, 1]])}, {"out": (I16, [[0, 1, 1]])}),
    ex("bitwise_xor", "out[:] = pypto.bitwise_xor(a, b)", {"a": (I16, [5, 3]), "b": (I16, [3, 1])},
       {"out": (I16, [6, 2])}),
    ex("cast", "y[:] = pypto.cast(x, pypto.DT_FP16)", {"x": (F, [2.0, 3.0])}, {"y": ("FP16", [2.0, 3.0])}),
    ex("cast-saturation", "y[:] = pypto.cast(x, pypto.DT_INT8, satmode=pypto.SaturationMode.ON)",
       {"x": ("FP16", [300.0, -300.0, 50.0])}, {"y": ("INT8", [127, -128, 50])},
       note="the doc gives no output list, only 'values will be clamped to [-128, 127]': the clamped values"),
    ex("cbrt", "y[:] = pypto.cbrt(x)", {"x": (F, [[8.0, -8.0]])}, {"y": (F, [[2.0, -2.0]])}),
    ex("ceil", "y[:] = pypto.ceil(x)", {"x": (F, [[1.2, 4.7], [-1.1, 9.0]])}, {"y": (F, [[2.0, 5.0], [-1.0, 9.0]])},
       note="doc bug: the call line declares shape [2.1, -2.1, 5.0, 3.9]; the listed 2x2 input is used"),
    ex("ceil_div", "out[:] = pypto.ceil_div(x, y)", {"x": (I32, [[1, 6, 6], [4, 6, 6]]),
       "y": (I32, [[1, 1, 2], [3, 4, 5]])}, {"out": (I32, [[1, 6, 3], [2, 2, 2]])},
       note="doc bug: the example calls pypto.ceildiv (the symbolic-scalar helper); the documented op is ceil_div"),
    ex("clip", "out[:] = pypto.clip(x, 1, 3)", {"x": (I32, [[0, 2, 4], [3, 4, 6]])},
       {"out": (I32, [[1, 2, 3], [3, 3, 3]])}),
    ex("clone", "y[:] = pypto.clone(x)", {"x": (F, [[1.0, 2.0], [3.0, 4.0]])}, {"y": (F, [[1.0, 2.0], [3.0, 4.0]])},
       note="doc typo: pypto.clone(y) for pypto.clone(x)"),
    ex("concat", "out[:] = pypto.concat([x, y], 0)", {"x": (F, [[1.0, 1.0], [1.0, 1.0]]),
       "y": (F, [[0.0, 0.0], [0.0, 0.0]])}, {"out": (F, [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])}),
    ex("copysign", "out[:] = pypto.copysign(x, y)", {"x": (F, [[1, -2, 3], [4, 5, -6], [-7, 8, 9]]),
       "y": (F, [[-1, 6, -8], [1, -1, 0], [7, -8, 9]])}, {"out": (F, [[-1, 2, -3], [4, -5, 6], [7, -8, 9]])}),
    ex("cos", "y[:] = pypto.cos(x)", {"x": (F, [0.0, 0.7854, 1.5708, 2.3562])},
       {"y": (F, [1.0, 0.7071, 0.0, -0.7071])}),
    ex("cumsum", "out[:] = pypto.cumsum(x, 0)", {"x": (I32, [[0, 1, 2], [3, 4, 5]])},
       {"out": (I32, [[0, 1, 2], [3, 5, 7]])}),
    ex("div", "out[:] = pypto.div(a, b)", {"a": (F, [[2.0, 4.0, 6.0]]), "b": (F, [[2.0, 2.0, 2.0]])},
       {"out": (F, [[1.0, 2.0, 3.0]])}),
    ex("eq", "out[:] = pypto.eq(a, b)", {"a": (F, CMP_A), "b": (F, CMP_B)}, {"out": (B, [False, True, False])}),
    ex("exp", "y[:] = pypto.exp(x)", {"x": (F, [0.0, 1.0, 2.0])}, {"y": (F, [1.0, 2.7183, 7.3891])}),
    ex("exp2", "y[:] = pypto.exp2(x)", {"x": (F, [0.0, 1.0, 2.0])}, {"y": (F, [1.0, 2.0, 4.0])}),
    ex("expand_clone", "y[:] = pypto.expand_clone(x, [3, 4])", {"x": (I32, [[1], [2], [3]])},
       {"y": (I32, [[1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]])},
       note="doc bug: declares x of shape [1, 3] but lists [[1], [2], [3]] (shape [3, 1]); [1, 3] cannot expand to "
            "[3, 4], the listed [3, 1] is used"),
    ex("expand_exp_dif-row", "z[:] = pypto.expand_exp_dif(x, y)", {"x": (F, [[1, 2, 3], [4, 5, 6]]),
       "y": (F, [[1, 2, 3]])}, {"z": (F, [[1.0, 1.0, 1.0], [20.085537, 20.085537, 20.085537]])}),
    ex("expand_exp_dif-col", "z[:] = pypto.expand_exp_dif(x, y)", {"x": (F, [[1, 2, 3], [4, 5, 6]]),
       "y": (F, [[1], [2]])}, {"z": (F, [[1.0, 2.718282, 7.3890557], [7.3890557, 20.085537, 54.59815]])}),
    ex("expm1", "y[:] = pypto.expm1(x)", {"x": (F, [0.0, 1.0, 2.0])}, {"y": (F, [0.0, 1.7183, 6.3891])}),
    ex("fillpad", 't = pypto.view(a, [4, 4], [0, 0], valid_shape=[2, 2])\nout[:] = pypto.fillpad(t, "constant", "-inf")',
       {"a": (F, [[1.0, 2.0, 0.0, 0.0], [3.0, 4.0, 0.0, 0.0], [0.0] * 4, [0.0] * 4])},
       {"out": (F, [[1.0, 2.0, -INF, -INF], [3.0, 4.0, -INF, -INF], [-INF] * 4, [-INF] * 4])},
       note="the doc 'assumes' valid_shape [2, 2]: a view of the input with that valid shape"),
    ex("fillpad-float", 't = pypto.view(a, [4, 4], [0, 0], valid_shape=[2, 2])\n'
       'out[:] = pypto.fillpad(t, "constant", float("-inf"))',
       {"a": (F, [[1.0, 2.0, 0.0, 0.0], [3.0, 4.0, 0.0, 0.0], [0.0] * 4, [0.0] * 4])},
       {"out": (F, [[1.0, 2.0, -INF, -INF], [3.0, 4.0, -INF, -INF], [-INF] * 4, [-INF] * 4])},
       note="the fillpad example with the value as the float the wheel makes of '-inf'"),
    ex("floor", "y[:] = pypto.floor(x)", {"x": (F, [1.2, 4.2, 9.8, 6.9, 25.5])},
       {"y": (F, [1.0, 4.0, 9.0, 6.0, 25.0])}),
    ex("fmod", "out[:] = pypto.fmod(a, b)", {"a": (F, [[2.0, 5.0, 9.0]]), "b": (F, [[2.0, 2.0, 2.0]])},
       {"out": (F, [[0.0, 1.0, 1.0]])}),
    ex("full-float", "y1[:] = pypto.full([2, 2], 1.0, pypto.DT_FP32, valid_shape=[2, 2])", {},
       {"y1": (F, [[1.0, 1.0], [1.0, 1.0]])}),
    ex("full-element", "y2[:] = pypto.full([2, 2], pypto.Element(pypto.DT_INT32, 1), pypto.DT_INT32, "
       "valid_shape=[2, 2])", {}, {"y2": (I32, [[1, 1], [1, 1]])}),
    ex("full-int", "y3[:] = pypto.full([2, 2], 1, pypto.DT_INT32)", {}, {"y3": (I32, [[1, 1], [1, 1]])}),
    ex("gather", "y[:] = pypto.gather(x, 0, index)",
       {"x": (I32, [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11, 12, 13, 14]]),
        "index": (I32, [[0, 1, 2, 0], [1, 2, 0, 1], [2, 2, 1, 0]])},
       {"y": (I32, [[0, 6, 12, 3], [5, 11, 2, 8], [10, 11, 7, 3]])}),
    ex("gathermask", "y[:] = pypto.gathermask(x, 1)",
       {"x": (I32, [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11], [12, 13, 14, 15, 16, 17]])},
       {"y": (I32, [[0, 2, 4], [6, 8, 10], [12, 14, 16]])}),
    ex("gcd", "out[:] = pypto.gcd(x, y)", {"x": (I32, [[1, 1, 2], [3, 4, 5]]), "y": (I32, [[6, 6, 6], [6, 6, 6]])},
       {"out": (I32, [[1, 1, 2], [3, 2, 1]])}),
    ex("ge", "out[:] = pypto.ge(a, b)", {"a": (F, CMP_A), "b": (F, CMP_B)}, {"out": (B, [False, True, True])}),
    ex("greater", "out[:] = pypto.greater(a, b)", {"a": (F, CMP_A), "b": (F, CMP_B)},
       {"out": (B, [False, False, True])}),
    ex("gt", "out[:] = pypto.gt(a, b)", {"a": (F, CMP_A), "b": (F, CMP_B)}, {"out": (B, [False, False, True])}),
    ex("hypot", "out[:] = pypto.hypot(a, b)", {"a": (F, [3.0, 4.0]), "b": (F, [4.0, 3.0])}, {"out": (F, [5.0, 5.0])}),
    ex("index_add_-alpha", "y[:] = pypto.index_add_(x, 0, index, source, alpha=1)",
       {"x": (I32, [[0, 0, 0], [0, 0, 0]]), "source": (I32, [[1, 1, 1]] * 3), "index": (I32, [0, 1, 0])},
       {"y": (I32, [[2, 2, 2], [1, 1, 1]]), "x": (I32, [[2, 2, 2], [1, 1, 1]])},
       note="the result shares x's storage (documented): x holds it too"),
    ex("index_add_", "y[:] = pypto.index_add_(x, 0, index, source)",
       {"x": (I32, [[0, 0, 0], [0, 0, 0]]), "source": (I32, [[1, 1, 1]] * 3), "index": (I32, [0, 1, 0])},
       {"y": (I32, [[2, 2, 2], [1, 1, 1]]), "x": (I32, [[2, 2, 2], [1, 1, 1]])}),
    ex("index_put_", "pypto.index_put_(x, (indices,), values)",
       {"x": (F, [[0, 0]] * 4), "indices": (I32, [0, 1, 3]), "values": (F, [[1, 1], [2, 2], [3, 3]])},
       {"x": (F, [[1, 1], [2, 2], [0, 0], [3, 3]])}),
    ex("index_select-dim0", "out0[:] = pypto.index_select(x, 0, indices)",
       {"x": (F, [[0.1427, 0.0231, -0.5414, -1.0009], [-0.4664, 0.2647, -0.1228, -1.1068],
                  [-1.1734, -0.6571, 0.7230, -0.6004]]), "indices": (I32, [0, 2])},
       {"out0": (F, [[0.1427, 0.0231, -0.5414, -1.0009], [-1.1734, -0.6571, 0.7230, -0.6004]])},
       note="the doc prints out0 as 'out1' and out1 as 'out2'"),
    ex("index_select-dim1", "out1[:] = pypto.index_select(x, 1, indices)",
       {"x": (F, [[0.1427, 0.0231, -0.5414, -1.0009], [-0.4664, 0.2647, -0.1228, -1.1068],
                  [-1.1734, -0.6571, 0.7230, -0.6004]]), "indices": (I32, [0, 2])},
       {"out1": (F, [[0.1427, -0.5414], [-0.4664, -0.1228], [-1.1734, 0.7230]])}),
    ex("isfinite", "out[:] = pypto.isfinite(x)", {"x": (F, [[1, NAN, 3], [INF, 1, 1], [1, 1, -INF]])},
       {"out": (B, [[True, False, True], [False, True, True], [True, True, False]])}),
    ex("le", "out[:] = pypto.le(a, b)", {"a": (F, CMP_A), "b": (F, CMP_B)}, {"out": (B, [True, True, False])}),
    ex("log", "y[:] = pypto.log(x)", {"x": (F, [1.0, 2.0, 3.0])}, {"y": (F, [0.0, 0.6931, 1.0986])}),
    ex("log10", "y[:] = pypto.log10(x)", {"x": (F, [1.0, 10.0, 100.0])}, {"y": (F, [0.0, 1.0, 2.0])}),
    ex("log1p", "y[:] = pypto.log1p(x)", {"x": (F, [0.0, 1.0, 2.0])}, {"y": (F, [0.0, 0.6931, 1.0986])}),
    ex("log2", "y[:] = pypto.log2(x)", {"x": (F, [1.0, 2.0, 4.0])}, {"y": (F, [0.0, 1.0, 2.0])}),
    ex("logical_and", "z[:] = pypto.logical_and(x, y)", {"x": (B, [True, False]), "y": (B, [True, True])},
       {"z": (B, [True, False])}),
    ex("logical_and-broadcast", "z[:] = pypto.logical_and(x, y)",
       {"x": (B, [[True, False], [False, True]]), "y": (B, [True, False])}, {"z": (B, [[True, False], [False, False]])}),
    ex("logical_not", "out[:] = pypto.logical_not(a)", {"a": ("INT8", [0, 1, 2, 3, 4])},
       {"out": (B, [True, False, False, False, False])},
       note="the doc's DT_INT32 input is refused by the 0.2.0 frontend itself (FC0001, runtime/emulator/"
            "_wheel_dtypes.py, which the emulator mirrors): the same values as INT8, an integer dtype it takes"),
    ex("lrelu", "y[:] = pypto.lrelu(x)", {"x": (F, [-1.0, 2.0, 0.0, -0.5])}, {"y": (F, [-0.01, 2.0, 0.0, -0.005])}),
    ex("lrelu-slope", "y2[:] = pypto.lrelu(x, negative_slope=0.1)", {"x": (F, [-1.0, 2.0, 0.0, -0.5])},
       {"y2": (F, [-0.1, 2.0, 0.0, -0.05])}),
    ex("lt", "out[:] = pypto.lt(a, b)", {"a": (F, CMP_A), "b": (F, CMP_B)}, {"out": (B, [True, False, False])}),
    ex("maximum", "out[:] = pypto.maximum(a, b)", {"a": (I32, [0, 2, 4]), "b": (I32, [3, 1, 3])},
       {"out": (I32, [3, 2, 4])}),
    ex("minimum", "out[:] = pypto.minimum(a, b)", {"a": (I32, [0, 2, 4]), "b": (I32, [3, 1, 3])},
       {"out": (I32, [0, 1, 3])}),
    ex("mul", "z[:] = pypto.mul(x, y)", {"x": (F, A123), "y": (F, A123)}, {"z": (F, [[1.0, 4.0, 9.0]] * 2)},
       note="doc typo: pypto.mul(a, b) for the declared x, y"),
    ex("ne", "out[:] = pypto.ne(a, b)", {"a": (F, CMP_A), "b": (F, CMP_B)}, {"out": (B, [True, False, True])}),
    ex("neg", "y[:] = pypto.neg(x)", {"x": (F, [0.0090, -0.2262, -0.0682, -0.2866, 0.3940])},
       {"y": (F, [-0.0090, 0.2262, 0.0682, 0.2866, -0.3940])}),
    ex("one_hot", "out[:] = pypto.one_hot(a, 5)", {"a": (I32, [0, 2, 4])},
       {"out": (I64, [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 1]])},
       note="documented result: a LongTensor (INT64) - the 0.2.0 frontend's one_hot of this INT32 input is "
            "DT_INT64 too (traced with the wheel)"),
    ex("ones", "x1[:] = pypto.ones(2, 3)", {}, {"x1": (F, [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])}),
    ex("pad", 'out[:] = pypto.pad(t4d, (0, 1, 0, 1), "constant", 0.0)', {"t4d": (F, [[[[0.0, 1.0], [2.0, 3.0]]]])},
       {"out": (F, [[[[0.0, 1.0, 0.0], [2.0, 3.0, 0.0], [0.0, 0.0, 0.0]]]])}),
    ex("pow-scalar", "y[:] = pypto.pow(x, 2)", {"x": (F, [[1.0, 2.0], [-3.0, 4.0]])},
       {"y": (F, [[1.0, 4.0], [9.0, 16.0]])}),
    ex("pow-tensor", "z[:] = pypto.pow(x, b)", {"x": (F, [[1.0, 2.0], [-3.0, 4.0]]), "b": (F, [[2.0, 2.0], [1.0, 1.0]])},
       {"z": (F, [[1.0, 4.0], [-3.0, 4.0]])}),
    ex("prelu", "y[:] = pypto.prelu(x, weight)", {"x": (F, [-1.0, 2.0, -0.5, 3.0]), "weight": (F, [0.25])},
       {"y": (F, [-0.25, 2.0, -0.125, 3.0])}, note='the doc\'s dtype="float32" is DT_FP32'),
    ex("prod", "y[:] = pypto.prod(x, -1, True)", {"x": (F, A123)}, {"y": (F, [[6.0], [6.0]])}),
    ex("reciprocal", "y[:] = pypto.reciprocal(x)", {"x": (F, [-0.4595, -2.1219, -1.4314, 0.7298])},
       {"y": (F, [-2.1763, -0.4713, -0.6986, 1.3702])}),
    ex("relu", "y[:] = pypto.relu(x)", {"x": (F, [-1.0, 2.0, 0.0, -0.5])}, {"y": (F, [0.0, 2.0, 0.0, 0.0])}),
    ex("remainder", "out[:] = pypto.remainder(a, b)", {"a": (F, [[7.0, 8.0, 9.0]]), "b": (F, [[-3.0, -3.0, -3.0]])},
       {"out": (F, [[-2.0, -1.0, 0.0]])}),
    ex("reshape", "y[:] = pypto.reshape(x, [4, 1])\n"
                  "z = pypto.add(pypto.reshape(x, [4, 1], valid_shape=[2, 1]), 1.0)\n"
                  "zv[:] = pypto.view(z, [2, 1], [0, 0])",
       {"x": (F, [[1, 2], [3, 4]])}, {"y": (F, [[1], [2], [3], [4]]), "zv": (F, [[2], [3]])},
       note="doc bug: valid_shape [2, 1] is passed by position (it is keyword-only), and z's rows 2-3, outside that "
            "valid shape, are printed as y's values (3, 4) without the + 1: y whole, z's valid rows only"),
    ex("reshape-inplace", "y[:] = pypto.reshape(x, [1, 4], inplace=True)", {"x": (F, [[1, 2], [3, 4]])},
       {"y": (F, [[1, 2, 3, 4]])}, note="the doc prints the [1, 4] result as [1, 2, 3, 4]"),
    ex("rms_norm", "y[:] = pypto.rms_norm(x, gamma)", {"x": (F, [[1, 2, 3, 4], [5, 6, 7, 8]]), "gamma": (F, [1] * 4)},
       {"y": (F, [[0.3651, 0.7302, 1.0954, 1.4605], [0.7580, 0.9097, 1.0613, 1.2129]])}),
    ex("round", "y[:] = pypto.round(x, decimals=1)", {"x": (F, [[1.21, 2.35], [3.65, 4.76]])},
       {"y": (F, [[1.2, 2.4], [3.6, 4.8]])}),
    ex("rsqrt", "y[:] = pypto.rsqrt(x)", {"x": (F, [[1.0, 4.0], [16.0, 9.0]])}, {"y": (F, [[1.0, 0.5], [0.25, 0.33333]])}),
    ex("scatter_", "o[:] = pypto.scatter_(x, 0, y, 2.0)", {"x": (F, [[0] * 5] * 3), "y": (I64, [[1, 2], [0, 1]])},
       {"o": (F, [[2, 0, 0, 0, 0], [2, 2, 0, 0, 0], [0, 2, 0, 0, 0]])}),
    ex("scatter_update-2d", "o[:] = pypto.scatter_update(x, -2, y, z)",
       {"x": (I32, [[0, 0, 0]] * 8), "y": (I64, [[1, 2], [4, 5]]), "z": (I32, [[1, 2, 3], [4, 5, 6], [7, 8, 9],
                                                                             [10, 11, 12]])},
       {"o": (I32, [[0, 0, 0], [1, 2, 3], [4, 5, 6], [0, 0, 0], [7, 8, 9], [10, 11, 12], [0, 0, 0], [0, 0, 0]])}),
    ex("scatter_update-4d", "o[:] = pypto.scatter_update(x, -2, y, z)",
       {"x": (I32, [[[[0, 0, 0]]] * 6] * 2), "y": (I64, [[1, 8], [4, 10]]),
        "z": (I32, [[[[1, 2, 3]], [[4, 5, 6]]], [[[7, 8, 9]], [[10, 11, 12]]]])},
       {"o": (I32, [[[[0, 0, 0]], [[1, 2, 3]], [[0, 0, 0]], [[0, 0, 0]], [[7, 8, 9]], [[0, 0, 0]]],
                    [[[0, 0, 0]], [[0, 0, 0]], [[4, 5, 6]], [[0, 0, 0]], [[10, 11, 12]], [[0, 0, 0]]]])}),
    ex("sigmoid", "y[:] = pypto.sigmoid(x)", {"x": (F, [-3.0, 0.0, 2.0, 5.0])}, {"y": (F, [0.0474, 0.5, 0.8808, 0.9933])}),
    ex("sign", "y[:] = pypto.sign(x)", {"x": (F, [-5.0, 0.0, 5.0, 10.0])}, {"y": (F, [-1.0, 0.0, 1.0, 1.0])},
       note="doc bug: declares shape [3] but lists 4 values; the 4 values are used"),
    ex("signbit", "y[:] = pypto.signbit(x)", {"x": (F, [-5.0, 0.0, 5.0, -2.0])}, {"y": (B, [True, False, False, True])}),
    ex("sin", "y[:] = pypto.sin(x)", {"x": (F, [-0.5461, 0.1347, -2.7266, -0.2746])},
       {"y": (F, [-0.5194, 0.1343, -0.4032, -0.2711])}),
    ex("softmax", "y[:] = pypto.softmax(x, -1)", {"x": (F, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])},
       {"y": (F, [[0.0900, 0.2447, 0.6652], [0.0900, 0.2447, 0.6652]])}),
    ex("sqrt", "y[:] = pypto.sqrt(x)", {"x": (F, [1.0, 4.0, 9.0, 16.0, 25.0])}, {"y": (F, [1.0, 2.0, 3.0, 4.0, 5.0])}),
    ex("sub", "out1[:] = pypto.sub(x, y)", {"x": (F, [[9.0] * 3] * 2), "y": (F, A123)},
       {"out1": (F, [[8.0, 7.0, 6.0], [8.0, 7.0, 6.0]])}, note="doc typo: pypto.sub(a, b) for the declared x, y"),
    ex("sub-alpha", "c[:] = pypto.sub(x, 2.0, alpha=3)", {"x": (F, [[9.0] * 3] * 2)}, {"c": (F, [[3.0] * 3] * 2)}),
    ex("sum", "y[:] = pypto.sum(x, -1, True)", {"x": (F, A123)}, {"y": (F, [[6.0], [6.0]])}),
    ex("topk", "v, i = pypto.topk(x, 2, -1, True)\ny0[:] = v\ny1[:] = i", {"x": (F, A123)},
       {"y0": (F, [[3.0, 2.0], [3.0, 2.0]]), "y1": (I32, [[2, 1], [2, 1]])},
       note="index dtype: INT32, the dtype the 0.2.0 frontend gives topk's indices"),
    ex("transpose", "out[:] = pypto.transpose(x, 0, 1)", {"x": (F, [[1.0028, -0.9893, 0.5809], [-0.1669, 0.7299, 0.4942]])},
       {"out": (F, [[1.0028, -0.1669], [-0.9893, 0.7299], [0.5809, 0.4942]])}),
    ex("tril", "out[:] = pypto.tril(x, 0)", {"x": (I32, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])},
       {"out": (I32, [[1, 0, 0], [4, 5, 0], [7, 8, 9]])}),
    ex("triu", "out[:] = pypto.triu(x, 0)", {"x": (I32, [[1, 2, 3], [4, 5, 6], [7, 8, 9]])},
       {"out": (I32, [[1, 2, 3], [0, 5, 6], [0, 0, 9]])}),
    ex("trunc", "y[:] = pypto.trunc(x)", {"x": (F, [1.3, 4.2, 9.8, 16.4, 25.8])},
       {"y": (F, [1.0, 4.0, 9.0, 16.0, 25.0])},
       note="doc bug: prints trunc(9.8) = 10.0 and trunc(25.8) = 26.0 (rounded), contradicting its own 'See Also: "
            "trunc rounding (towards zero to the nearest integer)': 9.0 and 25.0"),
    ex("unsqueeze", "y[:] = pypto.unsqueeze(x, 0)", {"x": (F, [[1, 2, 3], [4, 5, 6]])},
       {"y": (F, [[[1, 2, 3], [4, 5, 6]]])}),
    ex("var", "y[:] = pypto.var(x, 1, correction=1, keepdim=True)", {"x": (F, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])},
       {"y": (F, [[1.0], [1.0]])}, note="doc typo: pypto.tensor([[2, 3], ...) for shape [2, 3]"),
    ex("view", "y[:] = pypto.view(x, [4, 4], [0, 4])", {"x": (F, [[1, 1, 2, 2, 3, 3, 4, 4]] * 4)},
       {"y": (F, [[3, 3, 4, 4]] * 4)}),
    ex("view-valid_shape", "y[:] = pypto.view(x, [4, 4], [2, 4], valid_shape=[2, 4])",
       {"x": (F, [[1, 1, 2, 2, 3, 3, 4, 4]] * 2 + [[1, 1, 2, 2, 5, 5, 6, 6]] * 2)},
       {"y": (F, [[5, 5, 6, 6], [5, 5, 6, 6], [0, 0, 0, 0], [0, 0, 0, 0]])}, zeroed=True,
       note="rows 2-3 of y are padding (outside valid_shape), not data: the kernel writes the valid rows only, so "
            "the doc's zeros are those of a zero-initialised output"),
    ex("where", "out1[:] = pypto.where(cond, x, y)", {"cond": (B, [True, False, True, False]),
       "x": (F, [1.0, 2.0, 3.0, 4.0]), "y": (F, [10.0, 20.0, 30.0, 40.0])}, {"out1": (F, [1.0, 20.0, 3.0, 40.0])}),
    ex("where-scalars", "out2[:] = pypto.where(cond, 1.0, 0.0)", {"cond": (B, [True, False, True, False])},
       {"out2": (F, [1.0, 0.0, 1.0, 0.0])}),
    ex("where-broadcast", "out3[:] = pypto.where(cond, x, 0.0)", {"cond": (B, [[True, False], [False, True]]),
       "x": (F, [[1.0, 2.0]])}, {"out3": (F, [[1.0, 0.0], [0.0, 2.0]])}),
    ex("zeros", "x1[:] = pypto.zeros(2, 3)", {}, {"x1": (F, [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])}),
]

SKIPPED: dict[str, str] = {
    # no concrete values in the example (shapes, call forms or prose only)
    "matmul": "shapes and call forms only", "conv": "shapes only (and not emulated)", "scaled_mm": "shapes only",
    "cond": "control-flow form only", "is_loop_begin": "control-flow form only", "is_loop_end": "control-flow form only",
    "loop_unroll": "control-flow form only", "function": "legacy tracing form only", "frontend": "decorator forms only",
    "options": "call forms only", "set_options": "call forms only", "pass_verify_print": "call forms only",
    "pass_verify_save": "call forms only", "Tuple": "typing.Tuple, not a pypto op",
    # names the emulator documents as not emulated (runtime.emulator.NOT_EMULATED, _registry.UNSUPPORTED)
    "Function": "NOT_EMULATED (a compiled function)", "get_current_function": "NOT_EMULATED (a compiled function)",
    "get_last_function": "NOT_EMULATED (a compiled function)", "from_torch": "NOT_EMULATED (legacy conversion)",
    "get_conv_tile_shapes": "conv tiles: ConvTile is NOT_EMULATED", "set_conv_tile_shapes": "conv tiles: ConvTile is "
    "NOT_EMULATED", "sort32": "_registry.UNSUPPORTED (device-specific packed layout)",
}
"""docstring examples not transcribed as kernel cases, with the reason"""


def _array(dtype: str, values: Any) -> np.ndarray:
    exact = dtype == "BOOL" or dtype.startswith("INT")
    return np.array(values, dtype=None if exact else np.float64).astype(NP[dtype])


def _kernel(case: Ex, tmp_path: Path) -> tuple[Any, list[str]]:
    """The case's jit kernel, written to a file and imported (the parser reads kernels from their source)."""
    tensors = dict(case.ins)
    tensors.update({k: v for k, v in case.out.items() if k not in case.ins})
    sig = ", ".join(f"{n}: pypto.Tensor({list(_array(dt, v).shape)}, pypto.DT_{dt})" for n, (dt, v) in tensors.items())
    rank = max(_array(dt, v).ndim for dt, v in case.out.values())
    tile = (8,) * (rank - 1) + (32,)  # the outputs' rank, a 32-byte-aligned last axis (larger than every case)
    src = (f"import pypto\n\n\n@pypto.frontend.jit\ndef kernel({sig}):\n"
           f"    pypto.set_vec_tile_shapes({', '.join(map(str, tile))})\n{textwrap.indent(case.body, '    ')}\n")
    stem = "vendor_doc_" + "".join(c if c.isalnum() else "_" for c in case.id)
    path = tmp_path / f"{stem}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[stem] = mod
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.modules.pop(stem, None)
    return mod.kernel, list(tensors)


def _sentinel(dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "BOOL":
        return np.zeros(shape, np.bool_)
    return np.full(shape, -77, dtype=np.float64).astype(NP[dtype])


def _params(cases: list[Ex]) -> list[Any]:
    return [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(strict=True, reason=c.xfail)] if c.xfail else [])
            for c in cases]


@pytest.mark.parametrize("case", _params(EXAMPLES))
def test_docstring_example(case: Ex, tmp_path: Path) -> None:
    kernel, names = _kernel(case, tmp_path)
    args = {n: _array(dt, v) for n, (dt, v) in case.ins.items()}
    for n, (dt, v) in case.out.items():
        if n not in args:
            shape = _array(dt, v).shape
            args[n] = np.zeros(shape, NP[dt]) if case.zeroed else _sentinel(dt, shape)
    with emu.session(options=emu.Options(record=False)):
        kernel(*(args[n] for n in names))
    for n, (dt, v) in case.out.items():
        got, want = args[n], _array(dt, v)
        assert got.dtype == want.dtype and got.shape == want.shape, (n, got.dtype, got.shape)
        if dt in ("FP32", "FP16", "BF16"):
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=5e-5,
                                       err_msg=f"{case.id}: {n}")
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{case.id}: {n}")


# host-side examples with numbers (outside a kernel): pypto 0.2.0 docstrings of pypto.bytes_of,
# pypto.get_vec_tile_shapes, pypto.set_vec_tile_shapes, pypto.get_cube_tile_shapes, pypto.set_cube_tile_shapes
def test_bytes_of_example() -> None:  # pypto 0.2.0 docstring of pypto.bytes_of
    assert pypto.bytes_of(pypto.DT_FP32) == 4


def test_vec_tile_shapes_example() -> None:
    # doc bug: the get_vec_tile_shapes docstring calls set_vec_tile_shapes([1, 1, 8, 8]) - one list, which the 0.2.0
    # wheel refuses (TypeError 'Unsupported list element type', as the emulator): the four ints of the
    # set_vec_tile_shapes docstring
    with pypto.options():  # a scope of its own: the host-level tiles do not reach later tests
        pypto.set_vec_tile_shapes(1, 1, 8, 8)
        assert list(pypto.get_vec_tile_shapes()) == [1, 1, 8, 8]
        with pytest.raises(emu.EmulatorError, match="Unsupported list element type"):
            pypto.set_vec_tile_shapes([1, 1, 8, 8])


def test_cube_tile_shapes_example() -> None:
    # the docstrings print [[16, 16], [256, 512], [128, 128], True]; the wheel returns a tuple (compared as lists),
    # and a k of three (compared up to the two set: the test below)
    with pypto.options():
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128], True)
        m, k, n, split_k = pypto.get_cube_tile_shapes()
    assert [list(m), list(k)[:2], list(n), split_k] == [[16, 16], [256, 512], [128, 128], True]


def test_cube_tile_shapes_k_is_completed_as_by_the_wheel() -> None:
    # probed on the wheel (outside a kernel): set_cube_tile_shapes([16, 16], [256, 512], [128, 128], True) ->
    # get_cube_tile_shapes() == ([16, 16], [256, 512, 512], [128, 128], True); the docstrings print k = [256, 512]
    with pypto.options():
        pypto.set_cube_tile_shapes([16, 16], [256, 512], [128, 128], True)
        k = list(pypto.get_cube_tile_shapes()[1])
    assert k == [256, 512, 512]


def test_skipped_examples_are_numberless_or_not_emulated() -> None:
    """Every skip for 'not emulated' names a refusal the emulator documents; no example is both run and skipped."""
    for name, why in SKIPPED.items():
        if "NOT_EMULATED (" in why:
            assert name in emu.NOT_EMULATED, name
        if "UNSUPPORTED" in why:
            assert name in UNSUPPORTED, name
    assert not {c.doc for c in EXAMPLES} & set(SKIPPED)
