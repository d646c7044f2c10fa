"""Session-45 API audit: one small probe kernel per API / statement form named in shared/spec/pypto-api.md (§1-§6,
§8, §10), run under the emulator (compat head, the gym's target), each outcome classified.

Why a script and not a reading: the table in docs/emulator-fidelity.md ("API audit, session 45") must say what the
emulator *does*, and only a run says that. Classes:

* ``ok`` - ran, and the result equals the numpy/torch reference given with the probe (``ok-no-ref`` when the probe
  has none: the form is accepted);
* ``DIVERGES`` - ran, but the result differs from the reference;
* ``error`` - a clear error at the kernel's line (an ``EmulatorError`` with its code; ``EmulatorUnsupported`` is
  ``unsupported``); the column says whether the spec expects an error there;
* ``CRASH`` - a Python exception raised from inside ``runtime/emulator`` that is not a deliberate error (an
  ``AttributeError`` / ``KeyError`` / numpy error ...): a traceback from the emulator, never acceptable.

Run: ``PYTHONPATH=. python bench/api_audit.py [--markdown] [--only NAME]``.
"""



import argparse
import atexit
import dataclasses
import math
import os
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import runtime.emulator as emu  # noqa: E402

pypto = emu.install()
F32, F16, BF16, I32, I8 = pypto.DT_FP32, pypto.DT_FP16, pypto.DT_BF16, pypto.DT_INT32, pypto.DT_INT8
RNG = np.random.default_rng(45)
_EMU_DIR = os.path.dirname(os.path.abspath(emu.__file__))


@dataclasses.dataclass
class Probe:
    name: str
    section: str
    form: str
    run: Callable[[], Any]  # returns (got, want) arrays/values, or None (accepted, no reference)
    expect: str = "ok"  # "ok" or "error" (what the spec says the real toolchain does)
    tol: float = 0.0


PROBES: list[Probe] = []


def probe(section: str, form: str, expect: str = "ok", tol: float = 0.0):
    def deco(fn: Callable[[], Any]) -> Callable[[], Any]:
        PROBES.append(Probe(fn.__name__, section, form, fn, expect, tol))
        return fn
    return deco


def r(*shape: int) -> np.ndarray:
    return (RNG.random(shape) * 2 - 1).astype(np.float32)


def z(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return np.zeros(shape, dtype)


LAST_WARNINGS: list[str] = []


def run(kernel: Any, *args: Any, **kw: Any) -> None:
    with emu.session(emu.Options(compat=kw.pop("compat", os.environ.get("API_AUDIT_COMPAT", "head")))) as s:
        kernel(*args, **kw)
    LAST_WARNINGS[:] = [d.code for d in s.warnings]


def warned(code: str, kernel: Any, *args: Any, **kw: Any) -> None:
    """Run ``kernel`` and require the warning ``code`` (spec §10: violations the real SIM accepts silently)."""
    run(kernel, *args, **kw)
    if code not in LAST_WARNINGS:
        raise AssertionError(f"expected warning {code}, got {LAST_WARNINGS}")


def unary(opname: str, shape=(8, 32), **kw: Any):
    @pypto.frontend.jit
    def k(x: pypto.Tensor(list(shape), F32), out: pypto.Tensor(list(shape), F32)):
        pypto.set_vec_tile_shapes(*shape)
        out[:] = getattr(pypto, opname)(x, **kw)
    return k


# ---- §1 entry, signature, statements ---------------------------------------------------------------------------------

@probe("1.1", "`@pypto.frontend.jit` bare, out[:] = x + y")
def p_jit_bare():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), y: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + y
    x, y, o = r(8, 32), r(8, 32), z(8, 32)
    run(k, x, y, o)
    return o, x + y


@probe("1.1", "`@pypto.frontend.jit(runtime_options=..., pass_options=..., debug_options=..., host_options=...)`")
def p_jit_options():
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.NPU, "stitch_function_max_num": 128,
                                         "device_sched_mode": 1},
                        pass_options={"vec_nbuffer_setting": {-1: 4}}, debug_options={"runtime_debug_mode": 0},
                        host_options={"compile_stage": pypto.CompStage.ALL_COMPLETE}, verify_options={},
                        codegen_options={"support_dynamic_aligned": True})
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x * 2.0
    x, o = r(8, 32), z(8, 32)
    run(k, x, o)
    return o, x * 2


@probe("1.1", "jit on a non-function -> TypeError", expect="error")
def p_jit_nonfunc():
    pypto.frontend.jit(3)


@probe("1.2", "non-tensor params: int, float, bool, list, dataclass (default instance)")
def p_nontensor():
    @dataclasses.dataclass
    class Cfg:
        scale: float = 3.0
        rows: int = 8

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32), a: int, b: float, c: bool = True,
          d: list = (1, 2), cfg: Cfg = Cfg()):
        pypto.set_vec_tile_shapes(cfg.rows, 32)
        if c:
            out[:] = x * (b * a + d[1] + cfg.scale)
    x, o = r(8, 32), z(8, 32)
    run(k, x, o, 2, 0.5, d=[0, 4])
    return o, x * np.float32(2 * 0.5 + 4 + 3.0)


@probe("1.2", "annotation `pypto.Tensor()` (shape and dtype from the tensor)")
def p_tensor_empty():
    @pypto.frontend.jit
    def k(x: pypto.Tensor(), out: pypto.Tensor()):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + 1.0
    x, o = r(8, 32), z(8, 32)
    run(k, x, o)
    return o, x + 1


@probe("1.2", "annotation `pypto.Tensor([], DT_FP32)`")
def p_tensor_empty_dt():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([], F32), out: pypto.Tensor([], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + 1.0
    x, o = r(8, 32), z(8, 32)
    run(k, x, o)
    return o, x + 1


@probe("1.2", "annotation bracket form `pypto.Tensor[[8, 32], DT_FP32]`")
def p_tensor_bracket():
    @pypto.frontend.jit
    def k(x: pypto.Tensor[[8, 32], F32], out: pypto.Tensor[[8, 32], F32]):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + 1.0
    x, o = r(8, 32), z(8, 32)
    run(k, x, o)
    return o, x + 1


@probe("1.2", "annotation `pypto.Tensor[...]` (any shape)")
def p_tensor_bracket_ellipsis():
    @pypto.frontend.jit
    def k(x: pypto.Tensor[...], out: pypto.Tensor[...]):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = x + 1.0
    x, o = r(8, 32), z(8, 32)
    run(k, x, o)
    return o, x + 1


@probe("1.2", "dims: DYNAMIC, DYN, STATIC, trailing `...`, frontend.dynamic('N') in a tuple")
def p_dims():
    n = pypto.frontend.dynamic("N")

    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, pypto.STATIC, ...], F32), y: pypto.Tensor((n, 4, 8), F32),
          out: pypto.Tensor([pypto.DYN, 4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 4, 8)
        rows = x.shape[0]
        for i in pypto.loop(rows):
            out[i:i + 1, :, :] = x[i:i + 1, :, :] + y[i:i + 1, :, :]
    x, y, o = r(6, 4, 8), r(6, 4, 8), z(6, 4, 8)
    run(k, x, y, o)
    return o, x + y


@probe("1.2", "a StatusType in a tuple shape -> ValueError at decoration", expect="error")
def p_dims_tuple_status():
    @pypto.frontend.jit
    def k(x: pypto.Tensor((pypto.DYNAMIC, 8), F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
    run(k, z(8, 8), z(8, 8))


@probe("1.2", "return annotation -> ValueError", expect="error")
def p_return_annot():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32)) -> None:
        pypto.set_vec_tile_shapes(8, 8)
    run(k, z(8, 8))


@probe("1.2", "tensor param after non-tensor param -> ValueError", expect="error")
def p_param_order():
    @pypto.frontend.jit
    def k(a: int, x: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
    run(k, z(8, 8), 1)


@probe("1.2", "default on a tensor param -> ValueError", expect="error")
def p_tensor_default():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32) = None):
        pypto.set_vec_tile_shapes(8, 8)
    run(k, z(8, 8))


@probe("1.2", "`*args` in the signature -> NotImplementedError", expect="error")
def p_varargs():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), *rest):
        pypto.set_vec_tile_shapes(8, 8)
    run(k, z(8, 8))


@probe("1.2", "torch dtypes as kernel args: fp16, bf16, int8, int32, int64, uint8, bool, fp8")
def p_torch_dtypes():
    import torch

    @pypto.frontend.jit
    def k(a: pypto.Tensor([8, 32], F16), b: pypto.Tensor([8, 32], BF16), c: pypto.Tensor([8, 32], I8),
          d: pypto.Tensor([8, 32], I32), e: pypto.Tensor([8, 32], pypto.DT_INT64),
          f: pypto.Tensor([8, 32], pypto.DT_UINT8), g: pypto.Tensor([8, 32], pypto.DT_BOOL),
          h: pypto.Tensor([8, 32], pypto.DT_FP8E4M3), out: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.cast(a, F32) + pypto.cast(b, F32)
    a, b = torch.randn(8, 32).half(), torch.randn(8, 32).bfloat16()
    out = torch.zeros(8, 32)
    run(k, a, b, torch.zeros(8, 32, dtype=torch.int8), torch.zeros(8, 32, dtype=torch.int32),
        torch.zeros(8, 32, dtype=torch.int64), torch.zeros(8, 32, dtype=torch.uint8),
        torch.zeros(8, 32, dtype=torch.bool), torch.zeros(8, 32, dtype=torch.float8_e4m3fn), out)
    return out.numpy(), (a.float() + b.float()).numpy()


@probe("1.2", "non-contiguous torch tensor argument -> RuntimeError", expect="error")
def p_noncontig():
    import torch

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
    run(k, torch.randn(8, 8).t(), torch.zeros(8, 8))


@probe("1.2", "0-d torch tensor argument becomes shape [1]")
def p_zero_d():
    import torch

    @pypto.frontend.jit
    def k(x: pypto.Tensor([1], F32), out: pypto.Tensor([1], F32)):
        pypto.set_vec_tile_shapes(8)
        out[:] = x + 1.0
    x, o = torch.tensor(2.0), torch.zeros(1)
    run(k, x, o)
    return o.numpy(), np.array([3.0], np.float32)


@probe("1.3", "fewer tensor args than tensor params -> RuntimeError", expect="error")
def p_too_few():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
    run(k, z(8, 8))


@probe("1.3", "unknown keyword argument -> RuntimeError", expect="error")
def p_unknown_kw():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32), a: int = 1):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
    run(k, z(8, 8), z(8, 8), b=2)


@probe("1.3", "missing non-tensor argument -> RuntimeError", expect="error")
def p_missing_nt():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32), a: int):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
    run(k, z(8, 8), z(8, 8))


@probe("1.3", "`return` in the body -> ValueError", expect="error")
def p_return_body():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
        return
    run(k, z(8, 8), z(8, 8))


@probe("1.3", "`out = expr` (rebinding) writes nothing")
def p_rebind_writes_nothing():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out = x + 1.0  # noqa: F841
    o = np.full((8, 8), 5.0, np.float32)
    run(k, r(8, 8), o)
    return o, np.full((8, 8), 5.0, np.float32)


_DIR: list[str] = []


def _probe_dir() -> str:
    """One temporary folder per process for the text-compiled probe kernels (the emulator reads a kernel's source
    from its file), removed at exit."""
    if not _DIR:
        _DIR.append(tempfile.mkdtemp(prefix="pto-api-audit-"))
        atexit.register(shutil.rmtree, _DIR[0], True)
    return _DIR[0]


def _stmt_kernel(body: str, expect_msg: str | None = None):
    """A kernel whose body is ``body`` (compiled from text: Python itself refuses `break` outside a loop)."""
    src = ("def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):\n"
           "    pypto.set_vec_tile_shapes(8, 8)\n" + "".join("    " + ln + "\n" for ln in body.splitlines()))
    path = os.path.join(_probe_dir(), f"k{abs(hash(body))}.py")
    with open(path, "w") as f:
        f.write("import pypto\nF32 = pypto.DT_FP32\n" + "@pypto.frontend.jit\n" + src)
    ns: dict[str, Any] = {"__file__": path}
    code = compile(open(path).read(), path, "exec")
    exec(code, ns)  # noqa: S102 - the probe's own kernel text
    x, o = r(8, 8), z(8, 8)
    run(ns["k"], x, o)
    return x, o


for _stmt, _body in [
    ("while", "n = 0\nwhile n < 1:\n    n = n + 1\nout[:] = x"),
    ("break", "for i in range(2):\n    break\nout[:] = x"),
    ("continue", "for i in range(2):\n    continue\nout[:] = x"),
    ("with", "with open('/dev/null'):\n    pass\nout[:] = x"),
    ("try", "try:\n    out[:] = x\nexcept Exception:\n    pass"),
    ("for-else", "for i in range(2):\n    pass\nelse:\n    pass\nout[:] = x"),
    ("raise", "raise ValueError('user raise')"),
    ("global", "global G\nout[:] = x"),
    ("nested def with return", "def h(t):\n    return t\nout[:] = h(x)"),
    ("`if` on a Tensor", "if x:\n    out[:] = x"),
    ("`if pypto.cond(...)` in a jit body", "for i in pypto.loop(2):\n    if pypto.cond(i == 0):\n"
                                           "        out[:] = x"),
    ("`range(symbolic)`", "for i in pypto.loop(2):\n    for j in range(i):\n        out[:] = x"),
    ("empty list as loop iterator", "for i in []:\n    pass\nout[:] = x"),
    ("unpack mismatch", "a, b = 1, 2, 3\nout[:] = x"),
    ("`del a.b`", "del x.name\nout[:] = x"),
    ("false `assert`", "assert 1 == 2, 'user assert'\nout[:] = x"),
    ("list comprehension reading a kernel local", "c = 2.0\nvals = [c * v for v in range(2)]\nout[:] = x * vals[1]"),
    ("`&` on comparison tensors", "m = (x > 0.0) & (x < 0.5)\nout[:] = pypto.where(m, x, 0.0)"),
]:
    def _p(body=_body):
        _stmt_kernel(body)
    _p.__name__ = f"p_stmt_{_stmt.replace(' ', '_')}"
    PROBES.append(Probe(_p.__name__, "1.5", f"statement: {_stmt} -> error", _p, "error"))


@probe("1.5", "statements: annotated assign, tuple unpack, del, pass, assert, augmented ops on tensors")
def p_stmt_ok():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        a: float = 2.0
        b, (c, d) = 1.0, (3.0, 4.0)
        t = x + a
        t += b
        t -= c
        t *= d
        t /= a
        tmp = 1
        del tmp
        pass
        assert a == 2.0
        out[:] = t
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, ((x + 2 + 1 - 3) * 4) / 2


@probe("1.5", "augmented assignment on a subscript target `out[0:4, :] += v` (read slice, write back)")
def p_aug_subscript():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[0:4, :] += x[0:4, :]
    x, o = r(8, 8), r(8, 8)
    want = o.copy()
    want[0:4] += x[0:4]
    run(k, x, o)
    return o, want


@probe("1.5", "`//=`, `**=`, `%=` on tensors")
def p_aug_more():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        t = x + 3.0
        t **= 2.0
        t //= 2.0
        t %= 3.0
        out[:] = t
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    t = np.floor((x + 3) ** 2 / 2)
    return o, (t - 3 * np.floor(t / 3)).astype(np.float32)


@probe("1.5", "for over range / list / tuple (trace-time unroll) and over a plain iterator (zip/enumerate)")
def p_for_forms():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        for j in range(2):
            out[j * 2:j * 2 + 2, :] = x[j * 2:j * 2 + 2, :] * 2.0
        for j, s in [(2, 3.0), (3, 4.0)]:
            out[j * 2:j * 2 + 2, :] = x[j * 2:j * 2 + 2, :] * s
        for _j, _s in enumerate((5.0,)):
            pass
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    want = np.concatenate([x[:4] * 2, x[4:6] * 3, x[6:] * 4])
    return o, want


@probe("1.5", "`if` on a SymbolicScalar (runtime branch), elif/else; `if` on a Python bool")
def p_if_forms():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            if i == 0:
                out[i:i + 1, :] = x[i:i + 1, :] + 1.0
            elif i < 3:
                out[i:i + 1, :] = x[i:i + 1, :] + 2.0
            else:
                out[i:i + 1, :] = x[i:i + 1, :] + 3.0
    x, o = r(4, 8), z(4, 8)
    run(k, x, o)
    return o, x + np.array([[1], [2], [2], [3]], np.float32)


@probe("1.5", "builtin `min(sym, int)` / `max` on symbols (HEAD: pypto.min/max)")
def p_builtin_min():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = x.shape[0]
        for i in pypto.loop((n + 3) // 4):
            v = min(n - i * 4, 4)
            t = pypto.view(x, [4, 8], [i * 4, 0], valid_shape=[v, 8])
            out[i * 4:, :] = t + 1.0
    x, o = r(6, 8), z(6, 8)
    run(k, x, o)
    return o, x + 1


@probe("1.6", "`@pypto.frontend.function` helper: inlined, writes reach the caller, locals leak to the caller")
def p_frontend_function():
    @pypto.frontend.function
    def helper(a: pypto.Tensor([8, 8], F32), o: pypto.Tensor([8, 8], F32), s: float):
        h = a * s
        o[:] = h

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        helper(x, out, 3.0)
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, x * 3


@probe("1.6", "`@pypto.frontend.function` called with keywords -> NotImplementedError", expect="error")
def p_frontend_function_kw():
    @pypto.frontend.function
    def helper(a: pypto.Tensor([8, 8], F32), o: pypto.Tensor([8, 8], F32)):
        o[:] = a

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        helper(x, o=out)
    run(k, z(8, 8), z(8, 8))


@probe("1.6", "`@pypto.frontend.function` wrong argument count -> ValueError", expect="error")
def p_frontend_function_count():
    @pypto.frontend.function
    def helper(a: pypto.Tensor([8, 8], F32), o: pypto.Tensor([8, 8], F32)):
        o[:] = a

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        helper(x)
    run(k, z(8, 8), z(8, 8))


@probe("1.6", "plain (undecorated) helper run natively, with `if pypto.cond(pypto.is_loop_begin(i))`")
def p_native_helper():
    def helper(x, out, i):
        t = x[i:i + 1, :] * 2.0
        if pypto.cond(pypto.is_loop_begin(i)):
            out[i:i + 1, :] = t + 1.0
        else:
            out[i:i + 1, :] = t

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            helper(x, out, i)
    x, o = r(4, 8), z(4, 8)
    run(k, x, o)
    want = x * 2
    want[0] += 1
    return o, want


@probe("1.7", "legacy `with pypto.function(name, *tensors)` tracing", expect="error")
def p_legacy_function():
    with pypto.function("f"):
        pass


# ---- §2 tensor model -----------------------------------------------------------------------------------------------

@probe("2.1", "DataType ints and `pypto.bytes_of` (DT_BF16 = 8, 2 bytes; DT_BOTTOM raises)")
def p_dtypes():
    got = [int(pypto.DT_BF16), pypto.bytes_of(pypto.DT_BF16), int(pypto.DT_FP8E4M3), int(pypto.DT_BOTTOM)]
    return np.array(got), np.array([8, 2, 18, 22])


@probe("2.1", "enum ints: CastMode, SaturationMode, TileOpFormat, RunMode, CompStage, PrecisionType")
def p_enums():
    got = [int(pypto.CastMode.CAST_TRUNC), int(pypto.SaturationMode.OFF), int(pypto.TileOpFormat.TILEOP_NZ),
           int(pypto.RunMode.SIM), int(pypto.CompStage.TENSOR_GRAPH), int(pypto.CachePolicy.NONE_CACHEABLE)]
    _ = pypto.PrecisionType.INTRINSIC, pypto.TopKAlgo.MERGE_SORT, pypto.ScatterMode.ADD, pypto.OpType.EQ
    return np.array(got), np.array([5, 1, 1, 1, 1, 1])


@probe("2.2", "Tensor properties shape/dtype/dim/format/name/id, `a = expr` renames")
def p_tensor_props():
    seen: dict[str, Any] = {}

    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F32), out: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        seen["shape"] = list(x.shape)
        seen["dim"] = x.dim
        seen["dtype"] = x.dtype
        seen["format"] = x.format
        seen["name"] = x.name
        seen["id"] = x.id
        a = x + 1.0
        seen["aname"] = a.name
        out[:] = a
    run(k, r(8, 16), z(8, 16))
    assert seen["shape"] == [8, 16] and seen["dim"] == 2 and seen["dtype"] == F32, seen
    assert seen["format"] == pypto.TileOpFormat.TILEOP_ND and seen["name"] == "x", seen
    assert seen["aname"] == "a", seen


@probe("2.2", "local `pypto.tensor(shape, dtype, name)` written then read")
def p_local_tensor():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        acc = pypto.tensor([8, 8], F32, "acc")
        acc[:] = x * 2.0
        out[:] = acc + 1.0
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, x * 2 + 1


@probe("2.2", "local `pypto.tensor` read before any write -> error", expect="error")
def p_local_uninit():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        acc = pypto.tensor([8, 8], F32, "acc")
        out[:] = acc + x
    run(k, r(8, 8), z(8, 8))


def _binop_kernel(expr: str):
    src = f"out[:] = {expr}"
    return src


@probe("2.2", "Python operators + - * / on tensors and scalars, reflected `s - t`, `s / t`, `s * t`, `s + t`, -t, +t")
def p_pyops():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), y: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = ((x + y) * (x - y) / (y + 3.0) + (2.0 - x) + (1.0 / (y + 3.0)) + 2.0 * x + (1.0 + x)) + (-x) + (+y)
    x, y, o = r(8, 8), r(8, 8), z(8, 8)
    run(k, x, y, o)
    want = ((x + y) * (x - y) / (y + 3) + (2 - x) + (1 / (y + 3)) + 2 * x + (1 + x)) + (-x) + y
    return o, want.astype(np.float32)


@probe("2.2", "`a // b` = floor(div), `a % b` = remainder, `a ** b` = pow", tol=1e-6)
def p_pyops2():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), y: pypto.Tensor([8, 8], F32), out: pypto.Tensor([3, 8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[0:1, :, :] = pypto.unsqueeze(x // y, 0)
        out[1:2, :, :] = pypto.unsqueeze(x % y, 0)
        out[2:3, :, :] = pypto.unsqueeze(y ** 2.0, 0)
    x, y, o = r(8, 8) * 5, r(8, 8) + 2, z(3, 8, 8)
    run(k, x, y, o)
    return o, np.stack([np.floor(x / y), x - y * np.floor(x / y), y ** 2])


@probe("2.2", "comparisons `x < y` ... give BOOL tensors (used in where)")
def p_cmp():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), y: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.where(x < y, x, y) + pypto.where(x >= 0.0, 1.0, 0.0)
    x, y, o = r(8, 8), r(8, 8), z(8, 8)
    run(k, x, y, o)
    return o, np.where(x < y, x, y) + np.where(x >= 0, 1, 0).astype(np.float32)


@probe("2.2", "`a @ b` (matmul, out_dtype = b.dtype)")
def p_matmul_op():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F32), b: pypto.Tensor([32, 16], F32), out: pypto.Tensor([16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        out[:] = a @ b
    a, b, o = r(16, 32), r(32, 16), z(16, 16)
    run(k, a, b, o)
    return o, a @ b


@probe("2.2", "methods: x.exp(), x.sum(dim, keepdim), x.view(...), x.reshape(...), x.transpose(...), x.abs()",
       tol=1e-6)
def p_methods():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F32), out: pypto.Tensor([16, 8], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        t = x.abs().exp() + x.sum(-1, keepdim=True)
        v = t.view([8, 16], [0, 0]).reshape([8, 16])
        out[:] = v.transpose(0, 1)
    x, o = r(8, 16), z(16, 8)
    run(k, x, o)
    return o, (np.exp(np.abs(x)) + x.sum(-1, keepdims=True)).T


@probe("2.2", "`move(non-tensor)` -> TypeError", expect="error")
def p_move_nontensor():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out.move(3)
    run(k, r(8, 8), z(8, 8))


@probe("2.2", "x.fill_(v), x.tril_(), x.triu_(d) in place on a local")
def p_inplace_methods():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        t = pypto.tensor([8, 8], F32, "t")
        t[:] = x + 0.0
        t.tril_()
        out[:] = t
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, np.tril(x)


@probe("2.3", "indexing: ellipsis `x[..., 0:4]`, negative int start, `x[:]` is x, mixed int/slice drops axes")
def p_index():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8, 16], F32), out: pypto.Tensor([8, 4], F32)):
        pypto.set_vec_tile_shapes(8, 4)
        a = x[..., 0:4]
        b = a[-1, :, :]
        c = x[:]
        out[:] = b + c[3, :, 0:4]
    x, o = r(4, 8, 16), z(8, 4)
    run(k, x, o)
    return o, x[-1, :, 0:4] * 2


@probe("2.3", "too many indices -> IndexError", expect="error")
def p_index_many():
    _stmt_kernel("out[:] = x[0:8, 0:8, 0:1]")


@probe("2.3", "two `...` -> ValueError", expect="error")
def p_index_two_ellipsis():
    _stmt_kernel("out[:] = x[..., ...]")


@probe("2.3", "slice step 2 -> ValueError('step must be 1 or None')", expect="error")
def p_index_step():
    _stmt_kernel("out[0:4, :] = x[0:8:2, :]")


@probe("2.3", "symbolic slice length `x[0:n]` (dynamic n) -> TypeError", expect="error")
def p_index_symbolic_len():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        n = x.shape[0]
        out[0:n, :] = x[0:n, :]
    run(k, r(8, 8), z(8, 8))


@probe("2.3", "setitem mixed int/slice key `out[1, :] = row` (value rank = number of slices)")
def p_setitem_mixed():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x * 0.0
        pypto.set_vec_tile_shapes(8)
        row = x[2, :]
        out[1, :] = row + 1.0
    x, o = r(4, 8), z(4, 8)
    run(k, x, o)
    want = np.zeros_like(x)
    want[1] = x[2] + 1
    return o, want


@probe("2.3", "all-int key on INT32 tensor -> runtime scalar (loop bound), with ready_on_host_tensors")
def p_int_index():
    @pypto.frontend.jit(runtime_options={"ready_on_host_tensors": ["cnt"]})
    def k(cnt: pypto.Tensor([2], I32), x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        n = cnt[1]
        for i in pypto.loop(n):
            out[i:i + 1, :] = x[i:i + 1, :] + 1.0
    x, o = r(8, 8), z(8, 8)
    run(k, np.array([0, 3], np.int32), x, o)
    want = np.zeros_like(x)
    want[:3] = x[:3] + 1
    return o, want


@probe("2.3", "all-int key on an FP32 tensor -> AssertionError", expect="error")
def p_int_index_fp32():
    _stmt_kernel("v = x[0, 0]\nout[:] = x")


@probe("2.3", "setitem all-int key writes one INT32 element")
def p_int_setitem():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4], I32), out: pypto.Tensor([4], I32)):
        pypto.set_vec_tile_shapes(4)
        out[:] = x + 0
        out[2] = 7
    x, o = np.arange(4, dtype=np.int32), np.zeros(4, np.int32)
    run(k, x, o)
    return o, np.array([0, 1, 7, 3], np.int32)


@probe("2.3", "`out[:k] = v` (stop only: 0.2.0 offset quirk, flagged)")
def p_setitem_stop_only():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        out[:2, :] = x + 0.0
    x, o = r(2, 8), z(4, 8)
    run(k, x, o)
    want = np.zeros((4, 8), np.float32)
    want[:2] = x
    return o, want


@probe("2.4", "SymbolicScalar arithmetic + - * // / % unary - ~, comparisons -> 0/1, folded when concrete")
def p_sym_arith():
    s = pypto.SymbolicScalar(7)
    got = [int(s + 2), int(s - 2), int(s * 2), int(s // 2), int(s / 2), int(s % 4), int(-s), int(~s),
           int(s == 7), int(s < 3), int(2 + s), int(20 - s), int(s.min(3)), int(s.max(9)), int(pypto.min(4, s)),
           int(pypto.max(s, 8)), int(pypto.ceildiv(s, 2))]
    return np.array(got), np.array([9, 5, 14, 3, 3, 3, -7, 0, 1, 0, 9, 13, 3, 9, 4, 8, 4])


@probe("2.4", "SymbolicScalar predicates is_immediate/is_symbol/is_expression/is_concrete/concrete, as_variable")
def p_sym_preds():
    a, b = pypto.SymbolicScalar(3), pypto.SymbolicScalar("n")
    e = b + 1
    got = [a.is_immediate(), b.is_symbol(), e.is_expression(), a.is_concrete(), not b.is_concrete(),
           a.concrete() == 3, pypto.SymbolicScalar("m", 5).concrete() == 5]
    e.as_variable()
    return np.array(got), np.ones(7, bool)


@probe("2.4", "`int()` of a non-concrete SymbolicScalar -> ValueError('Not concrete value')", expect="error")
def p_sym_int():
    int(pypto.SymbolicScalar("n") + 1)


@probe("2.4", "`float(sym)` / `range(sym)` / `lst[sym]` -> TypeError", expect="error")
def p_sym_float():
    float(pypto.SymbolicScalar("n"))


@probe("2.4", "SymbolicScalar with a float operand -> error", expect="error")
def p_sym_floatop():
    _ = pypto.SymbolicScalar("n") + 1.5


@probe("2.4", "`SymbolicScalar(1.5)` -> ValueError('Invalid arguments')", expect="error")
def p_sym_bad_ctor():
    pypto.SymbolicScalar(1.5)


@probe("2.5", "`pypto.Element(dtype, value)`: .dtype, .value; used in maximum/where/clip")
def p_element():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F16), out: pypto.Tensor([8, 16], F16)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.maximum(x, pypto.Element(pypto.DT_FP16, 0.0))
    e = pypto.Element(F16, 2.5)
    assert e.dtype == F16 and e.value == 2.5
    x, o = r(8, 16).astype(np.float16), np.zeros((8, 16), np.float16)
    run(k, x, o)
    return o, np.maximum(x, 0)


@probe("2.5", "`pypto.Element(dtype, 'str')` -> ValueError", expect="error")
def p_element_bad():
    pypto.Element(F32, "a")


@probe("2.6", "full(size, v, dtype, valid_shape=), zeros(*size, dtype=), ones([..], dtype=), arange(s, e, step)")
def p_create():
    @pypto.frontend.jit
    def k(out: pypto.Tensor([4, 8], F32), out2: pypto.Tensor([8], I32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.full([4, 8], 2.0, F32) + pypto.zeros(4, 8, dtype=F32) + pypto.ones([4, 8], dtype=F32)
        pypto.set_vec_tile_shapes(8)
        out2[:] = pypto.arange(1, 17, 2)
    o, o2 = z(4, 8), np.zeros(8, np.int32)
    run(k, o, o2)
    return np.concatenate([o.ravel(), o2]), np.concatenate([np.full(32, 3.0, np.float32),
                                                           np.arange(1, 17, 2, dtype=np.float32)])


@probe("2.6", "`full` with a SymbolicScalar fill value (INT32)")
def p_full_sym():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], I32), out: pypto.Tensor([pypto.DYNAMIC, 8], I32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = pypto.full([1, 8], i, I32)
    x, o = np.zeros((3, 8), np.int32), np.zeros((3, 8), np.int32)
    run(k, x, o)
    return o, np.repeat(np.arange(3, dtype=np.int32)[:, None], 8, 1)


@probe("2.6", "`zeros` tensor later partly overwritten with `[...] =` -> F21005", expect="error")
def p_zeros_mix():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        t = pypto.zeros(8, 8, dtype=F32)
        t[0:4, :] = pypto.view(x, [4, 8], [0, 0])
        out[:] = t + 1.0
    run(k, r(8, 8), z(8, 8))


# ---- §3 loops ----------------------------------------------------------------------------------------------------------

@probe("3.1", "loop(stop) / loop(start, stop, step) / name= idx_name= unroll_list= submit_before_loop=")
def p_loop_forms():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(2, name="a", idx_name="i"):
            out[i:i + 1, :] = x[i:i + 1, :] + 1.0
        for i in pypto.loop(2, 8, 2, name="b", idx_name="j", unroll_list=[2, 1], submit_before_loop=True):
            out[i:i + 2, :] = x[i:i + 2, :] + 2.0
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, np.concatenate([x[:2] + 1, x[2:] + 2])


@probe("3.1", "loop(..., parallel=True) (HEAD)")
def p_loop_parallel():
    @pypto.frontend.jit(runtime_options={"device_sched_parallelism": 2})
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(8, parallel=True):
            out[i:i + 1, :] = x[i:i + 1, :] * 3.0
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, x * 3


@probe("3.1", "loop with > 3 positionals -> TypeError", expect="error")
def p_loop_4():
    _stmt_kernel("for i in pypto.loop(0, 8, 1, 2):\n    pass\nout[:] = x")


@probe("3.1", "loop bound from a dynamic dim, trip count 0")
def p_loop_zero():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(x.shape[0] - 4):
            out[i:i + 1, :] = x[i:i + 1, :]
    o = np.full((8, 8), 5.0, np.float32)
    run(k, r(4, 8), o)
    return o, np.full((8, 8), 5.0, np.float32)


@probe("3.1", "running sum through GM: `out[:] = out + a` per iteration")
def p_loop_gm_sum():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            out[:] = out + x[i:i + 1, :]
    x, o = r(4, 8), z(1, 8)
    run(k, x, o)
    return o, x.sum(0, keepdims=True)


@probe("3.1", "stale rebinding `acc = acc + a` inside pypto.loop (init + last slice, EMU_STALE_REBIND)")
def p_stale_rebind():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        acc = pypto.full([1, 8], 0.0, F32)
        for i in pypto.loop(4):
            acc = acc + x[i:i + 1, :]
        out[:] = acc * 1.0
    x, o = r(4, 8), z(1, 8)
    run(k, x, o)
    return o, x[3:4]


@probe("3.2", "loop_unroll(0, n, 1, unroll_list=[4, 2, 1]) yields (idx, factor)")
def p_loop_unroll():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i, u in pypto.loop_unroll(0, x.shape[0], 1, unroll_list=[4, 2, 1], name="L", idx_name="i"):
            out[i:i + u, :] = x[i:i + u, :] * float(u)
    x, o = r(11, 8), z(11, 8)
    run(k, x, o)
    f = np.array([4] * 8 + [2] * 2 + [1], np.float32)[:, None]
    return o, x * f


@probe("3.2", "loop_unroll with overlapping factors [3, 2] on 11 items (item 10 twice, 0.2.0 algorithm)")
def p_loop_unroll_overlap():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([11, 8], F32), out: pypto.Tensor([11, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i, u in pypto.loop_unroll(0, 11, 1, unroll_list=[3, 2]):
            out[i:i + u, :] = out[i:i + u, :] + x[i:i + u, :]
    x, o = r(11, 8), z(11, 8)
    run(k, x, o)
    want = x.copy()
    want[9:11] += x[9:11]  # 3-block covers 0..8; 2-blocks from 9 to 11-(11%2)=10: [9,10]; 1-block at 10
    # factors [3,2,1]: nstart=0..9 step3 (stop-left=11-2=9): 0,3,6; then 2-blocks left=(11-0)%2=1 -> 9..10: 9;
    # then 1: left=0 -> 10..11: 10. Item 10 is covered by the 2-block [9,10] and the 1-block [10]
    want = x.copy()
    want[10] += x[10]
    return o, want


@probe("3.3", "is_loop_begin / is_loop_end accumulator idiom")
def p_loop_begin_end():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        acc = pypto.tensor([1, 8], F32, "acc")
        for i in pypto.loop(4):
            if pypto.is_loop_begin(i):
                acc[:] = x[i:i + 1, :] + 0.0
            else:
                acc[:] = acc + x[i:i + 1, :]
            if pypto.is_loop_end(i):
                out[:] = acc * 2.0
    x, o = r(4, 8), z(1, 8)
    run(k, x, o)
    return o, x.sum(0, keepdims=True) * 2


@probe("3.3", "is_loop_begin on a derived value `i + 0` -> ValueError('not loop index')", expect="error")
def p_loop_begin_bad():
    _stmt_kernel("for i in pypto.loop(2):\n    if pypto.is_loop_begin(i + 0):\n        out[:] = x")


@probe("3.5", "`for` over `range(n)` with a non-tensor int param and nested pypto.loop inside")
def p_range_nested():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32), parts: int):
        pypto.set_vec_tile_shapes(1, 4)
        for p in range(parts):
            for i in pypto.loop(4):
                out[i:i + 1, p * 4:p * 4 + 4] = x[i:i + 1, p * 4:p * 4 + 4] * float(p + 1)
    x, o = r(4, 8), z(4, 8)
    run(k, x, o, 2)
    return o, x * np.array([1] * 4 + [2] * 4, np.float32)


# ---- §4 data movement -----------------------------------------------------------------------------------------------

@probe("4.1", "view(x, shape, offsets, valid_shape=[v, D]) tail tile + assemble: only the valid box is written")
def p_view_valid():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 4)):
            v = (n - i * 4).min(4)
            t = pypto.view(x, [4, 8], [i * 4, 0], valid_shape=[v, 8])
            pypto.assemble(pypto.exp(t), [i * 4, 0], out)
    x, o = r(7, 8), z(7, 8)
    run(k, x, o)
    return o, np.exp(x)


@probe("4.1", "view with a symbolic shape -> TypeError", expect="error")
def p_view_symshape():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = x.shape[0]
        out[:] = pypto.view(x, [n, 8], [0, 0])
    run(k, r(4, 8), z(4, 8))


@probe("4.1", "view(x, dtype=DT_INT8) reinterprets bytes (HEAD: shape [2, 8] from FP32 [2, 2])")
def p_view_dtype():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 2], F32), out: pypto.Tensor([2, 8], I8)):
        pypto.set_vec_tile_shapes(2, 32)
        out[:] = pypto.view(x, dtype=I8)
    x, o = r(2, 2), np.zeros((2, 8), np.int8)
    run(k, x, o)
    return o, x.view(np.int8)


@probe("4.1", "view offsets outside the tensor -> EMU_VIEW_OOB", expect="error")
def p_view_oob():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = pypto.view(x, [4, 8], [6, 0]) + 0.0
    run(k, r(8, 8), z(4, 8))


@probe("4.2", "assemble list form `assemble([(a, offs), (b, offs)], dst)`, parallel=True, Tensor.assemble")
def p_assemble_forms():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([8, 8], F32), out2: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        a = x + 1.0
        b = x + 2.0
        pypto.assemble([(a, [0, 0]), (b, [4, 0])], out, parallel=True)
        out2.assemble(a * 1.0, [0, 0])
        pypto.assemble(b * 1.0, [0, 8], out2)
    x, o, o2 = r(4, 8), z(8, 8), z(4, 16)
    run(k, x, o, o2)
    return np.concatenate([o.ravel(), o2.ravel()]), np.concatenate([np.concatenate([x + 1, x + 2]).ravel(),
                                                                    np.concatenate([x + 1, x + 2], 1).ravel()])


@probe("4.2", "assemble partly out of range -> EMU_ASSEMBLE_OOB", expect="error")
def p_assemble_oob():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.assemble(x + 1.0, [6, 0], out)
    run(k, r(4, 8), z(8, 8))


@probe("4.3", "index_put_(input, (idx,), values, accumulate=True) on a kernel input")
def p_index_put():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), idx: pypto.Tensor([3], I32), v: pypto.Tensor([3, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.index_put_(x, (idx,), v, accumulate=True)
    x, idx, v = r(8, 8), np.array([1, 5, 1], np.int32), r(3, 8)
    want = x.copy()
    np.add.at(want, idx, v)
    run(k, x, idx, v)
    return x, want


@probe("4.3", "scatter_(input, dim, index, src, reduce='add') and index_add_(input, dim, index, src, alpha=2)",
       tol=1e-6)
def p_scatter_inplace():
    import torch

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), idx: pypto.Tensor([4, 8], pypto.DT_INT64), s: pypto.Tensor([4, 8], F32),
          y: pypto.Tensor([8, 8], F32), i2: pypto.Tensor([2], I32), s2: pypto.Tensor([2, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.scatter_(x, 1, idx, s, reduce="add")
        pypto.index_add_(y, 0, i2, s2, alpha=2.0)
    x, s, y, s2 = (torch.from_numpy(r(*sh)) for sh in [(4, 8), (4, 8), (8, 8), (2, 8)])
    idx = torch.from_numpy(RNG.integers(0, 8, (4, 8)))
    i2 = torch.tensor([3, 3], dtype=torch.int32)
    wx = x.clone().scatter_add_(1, idx, s)
    wy = y.clone().index_add_(0, i2, s2, alpha=2.0)
    run(k, x, idx, s, y, i2, s2)
    return torch.cat([x.ravel(), y.ravel()]).numpy(), torch.cat([wx.ravel(), wy.ravel()]).numpy()


@probe("4.3", "atomic_add(src, offsets, dst) (HEAD): dst[offs] += src")
def p_atomic_add():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        for i in pypto.loop(2):
            pypto.atomic_add(x[i * 2:i * 2 + 2, :] * 1.0, [0, 0], out)
    x, o = r(4, 8), r(4, 8)
    want = o.copy()
    want[0:2] = (want[0:2] + x[0:2]) + x[2:4]
    run(k, x, o)
    return o, want


@probe("4.3", "axpy_(y, x, alpha) (HEAD): y += alpha * x in place")
def p_axpy():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        pypto.axpy_(out, x, 2.0)
    x, o = r(4, 8), r(4, 8)
    want = o + 2 * x
    run(k, x, o)
    return o, want


@probe("4.4", "reshape with -1; reshape(inplace=True); unsqueeze negative dim; clone; expand_clone")
def p_reshape_family():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), g: pypto.Tensor([8], F32), out: pypto.Tensor([2, 4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 4, 8)
        a = pypto.reshape(x, [2, -1, 8])
        gg = pypto.reshape(g, [1, 1, 8], inplace=True)
        b = pypto.expand_clone(gg, [2, 4, 8])
        c = pypto.unsqueeze(pypto.clone(x), -3)
        out[:] = a + b + pypto.reshape(c, [2, 4, 8])
    x, g, o = r(8, 8), r(8), z(2, 4, 8)
    run(k, x, g, o)
    return o, (x.reshape(2, 4, 8) + g) + x.reshape(2, 4, 8)


@probe("4.4", "reshape with symbolic dims (HEAD)")
def p_reshape_sym():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 2, 4], F32)):
        pypto.set_vec_tile_shapes(4, 2, 8)
        n = x.shape[0]
        out[:] = pypto.reshape(x, [n, 2, 4])
    x, o = r(3, 8), z(3, 2, 4)
    run(k, x, o)
    return o, x.reshape(3, 2, 4)


@probe("4.4", "transpose 3-D (0, 2); 4-D pair (1, 2); permute(x, dims) (HEAD)")
def p_transpose_permute():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 4, 8], F32), y: pypto.Tensor([2, 4, 8, 8], F32), o1: pypto.Tensor([8, 4, 2], F32),
          o2: pypto.Tensor([2, 8, 4, 8], F32), o3: pypto.Tensor([8, 2, 4], F32)):
        pypto.set_vec_tile_shapes(8, 8, 8)
        o1[:] = pypto.transpose(x, 0, 2)
        pypto.set_vec_tile_shapes(2, 8, 8, 8)
        o2[:] = pypto.transpose(y, 1, 2)
        pypto.set_vec_tile_shapes(8, 8, 8)
        o3[:] = pypto.permute(x, [2, 0, 1])
    x, y = r(2, 4, 8), r(2, 4, 8, 8)
    o1, o2, o3 = z(8, 4, 2), z(2, 8, 4, 8), z(8, 2, 4)
    run(k, x, y, o1, o2, o3)
    return (np.concatenate([o1.ravel(), o2.ravel(), o3.ravel()]),
            np.concatenate([x.transpose(2, 1, 0).ravel(), y.transpose(0, 2, 1, 3).ravel(),
                            x.transpose(2, 0, 1).ravel()]))


@probe("4.4", "concat(tensors, dim); tril/triu with symbolic diagonal")
def p_concat_tril():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([8, 8], F32), o2: pypto.Tensor([2, 8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.concat([x, x * 2.0], 0)
        for i in pypto.loop(2):
            t = pypto.concat([x, x], 0)
            o2[i:i + 1, :, :] = pypto.unsqueeze(pypto.tril(t, i), 0)
    x, o, o2 = r(4, 8), z(8, 8), z(2, 8, 8)
    run(k, x, o, o2)
    xx = np.concatenate([x, x])
    return (np.concatenate([o.ravel(), o2.ravel()]),
            np.concatenate([np.concatenate([x, 2 * x]).ravel(), np.tril(xx, 0).ravel(), np.tril(xx, 1).ravel()]))


@probe("4.4", "pad(x, [0, r, 0, b], 'constant', -inf); fillpad(view with valid_shape, 'constant', 0)")
def p_pad_fillpad():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([8, 16], F32), o2: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.pad(x, [0, 8, 0, 4], "constant", float("-inf"))
        pypto.set_vec_tile_shapes(4, 8)
        v = pypto.view(x, [4, 8], [0, 0], valid_shape=[2, 8])
        o2[:] = pypto.fillpad(v, "constant", 0.0)
    x, o, o2 = r(4, 8), z(8, 16), z(4, 8)
    run(k, x, o, o2)
    w2 = x.copy()
    w2[2:] = 0
    return (np.concatenate([o.ravel(), o2.ravel()]),
            np.concatenate([np.pad(x, [[0, 4], [0, 8]], constant_values=-np.inf).ravel(), w2.ravel()]))


@probe("4.4", "one_hot(input, num_classes) -> INT64")
def p_one_hot():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8], I32), out: pypto.Tensor([8, 4], pypto.DT_INT64)):
        pypto.set_vec_tile_shapes(8, 4)
        out[:] = pypto.one_hot(x, 4)
    x, o = np.array([0, 1, 2, 3, 3, 2, 1, 0], np.int32), np.zeros((8, 4), np.int64)
    run(k, x, o)
    return o, np.eye(4, dtype=np.int64)[x]


@probe("4.5", "gather(input, dim, index), index_select(input, dim, index)")
def p_gather():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), idx: pypto.Tensor([4, 4], I32), i1: pypto.Tensor([3], I32),
          o1: pypto.Tensor([4, 4], F32), o2: pypto.Tensor([3, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        o1[:] = pypto.gather(x, 1, idx)
        o2[:] = pypto.index_select(x, 0, i1)
    x = r(4, 8)
    idx, i1 = RNG.integers(0, 8, (4, 4)).astype(np.int32), np.array([3, 0, 3], np.int32)
    o1, o2 = z(4, 4), z(3, 8)
    run(k, x, idx, i1, o1, o2)
    return np.concatenate([o1.ravel(), o2.ravel()]), np.concatenate([np.take_along_axis(x, idx, 1).ravel(),
                                                                    x[i1].ravel()])


@probe("4.5", "gathermask(x, pattern_mode) modes 1..7")
def p_gathermask():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], F32), o1: pypto.Tensor([4, 8], F32), o2: pypto.Tensor([4, 8], F32),
          o3: pypto.Tensor([4, 4], F32), o7: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        o1[:] = pypto.gathermask(x, 1)
        o2[:] = pypto.gathermask(x, 2)
        o3[:] = pypto.gathermask(x, 6)
        o7[:] = pypto.gathermask(x, 7)
    x = r(4, 16)
    outs = [z(4, 8), z(4, 8), z(4, 4), z(4, 16)]
    run(k, x, *outs)
    return np.concatenate([o.ravel() for o in outs]), np.concatenate(
        [x[:, 0::2].ravel(), x[:, 1::2].ravel(), x[:, 3::4].ravel(), x.ravel()])


@probe("4.5", "scatter(input, dim, index, src scalar) out of place; scatter_update 2-D (form 2)")
def p_scatter_update():
    @pypto.frontend.jit
    def k(cache: pypto.Tensor([8, 16], F32), idx: pypto.Tensor([2, 2], pypto.DT_INT64),
          src: pypto.Tensor([4, 16], F32), o: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        o[:] = pypto.scatter_update(cache, -2, idx, src)
    cache, src, o = r(8, 16), r(4, 16), z(8, 16)
    idx = np.array([[6, 1], [3, 0]], np.int64)
    want = cache.copy()
    for i in range(2):
        for j in range(2):
            want[idx[i, j]] = src[i * 2 + j]
    run(k, cache, idx, src, o)
    return np.concatenate([o.ravel(), cache.ravel()]), np.concatenate([want.ravel(), want.ravel()])


@probe("4.5", "deinterleave(x) -> (even, odd); interleave(a, b) (HEAD)")
def p_interleave():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 16], F32), o1: pypto.Tensor([4, 8], F32), o2: pypto.Tensor([4, 8], F32),
          o3: pypto.Tensor([4, 16], F32)):
        pypto.set_vec_tile_shapes(4, 16)
        e, od = pypto.deinterleave(x)
        o3[:] = pypto.interleave(od, e)
        o1[:] = e
        o2[:] = od
    x = r(4, 16)
    o1, o2, o3 = z(4, 8), z(4, 8), z(4, 16)
    run(k, x, o1, o2, o3)
    w3 = np.empty_like(x)
    w3[:, 0::2], w3[:, 1::2] = x[:, 1::2], x[:, 0::2]
    return np.concatenate([o1.ravel(), o2.ravel(), o3.ravel()]), np.concatenate(
        [x[:, 0::2].ravel(), x[:, 1::2].ravel(), w3.ravel()])


# ---- §5 compute ---------------------------------------------------------------------------------------------------------

_UNARY_REF: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs": np.abs, "neg": np.negative, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "sqrt": lambda a: np.sqrt(
        np.abs(a)), "rsqrt": lambda a: 1 / np.sqrt(np.abs(a)), "reciprocal": np.reciprocal, "sign": np.sign,
    "relu": lambda a: np.maximum(a, 0), "sigmoid": lambda a: 1 / (1 + np.exp(-a)), "ceil": np.ceil,
    "floor": np.floor, "trunc": np.trunc, "round": np.round, "cbrt": np.cbrt, "log": lambda a: np.log(np.abs(a)),
    "log1p": lambda a: np.log1p(np.abs(a)), "log2": lambda a: np.log2(np.abs(a)),
    "log10": lambda a: np.log10(np.abs(a)), "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
    "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "asinh": np.arcsinh, "atanh": lambda a: np.arctanh(a * 0.9), "acosh": lambda a: np.arccosh(np.abs(a) + 1),
    "erf": np.vectorize(math.erf), "erfc": np.vectorize(math.erfc),
}
_NEEDS_POS = {"sqrt", "rsqrt", "log", "log1p", "log2", "log10"}


def _unary_probe(name: str) -> None:
    def _p() -> Any:
        x = r(8, 32)
        if name in _NEEDS_POS:
            x = np.abs(x)
        if name == "atanh":
            x = x * np.float32(0.9)
        if name == "acosh":
            x = np.abs(x) + 1
        o = z(8, 32)
        run(unary(name), x, o)
        ref = {"atanh": np.arctanh, "acosh": np.arccosh}.get(name, _UNARY_REF[name])
        return o, ref(x.astype(np.float64)).astype(np.float32)
    _p.__name__ = f"p_unary_{name}"
    PROBES.append(Probe(_p.__name__, "5.3", f"`pypto.{name}(x)` FP32", _p, "ok", 2e-6))


for _n in _UNARY_REF:
    _unary_probe(_n)


@probe("5.3", "precision_type=PrecisionType.INTRINSIC on div / exp / sqrt / rsqrt / reciprocal (HEAD)", tol=1e-6)
def p_precision_type():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        pt = pypto.PrecisionType.INTRINSIC
        a = pypto.div(x, x + 2.0, precision_type=pt)
        b = pypto.exp(a, precision_type=pt)
        c = pypto.sqrt(b, precision_type=pt) + pypto.rsqrt(b, precision_type=pt)
        out[:] = pypto.reciprocal(c, precision_type=pt)
    x, o = np.abs(r(8, 32)), z(8, 32)
    run(k, x, o)
    b = np.exp(x / (x + 2))
    return o, 1 / (np.sqrt(b) + 1 / np.sqrt(b))


@probe("5.3", "isfinite / isnan / signbit / logical_not / logical_and -> BOOL")
def p_bool_unary():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), out: pypto.Tensor([8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        m = pypto.logical_and(pypto.isfinite(x), pypto.logical_not(pypto.isnan(x)))
        out[:] = pypto.where(pypto.logical_and(m, pypto.signbit(x)), 1.0, 0.0)
    x, o = r(8, 32), z(8, 32)
    x[0, 0], x[0, 1] = np.inf, np.nan
    run(k, x, o)
    return o, (np.isfinite(x) & ~np.isnan(x) & np.signbit(x)).astype(np.float32)


@probe("5.2", "binary ops add(alpha=) sub mul div maximum minimum pow fmod remainder hypot copysign, floor_div",
       tol=2e-6)
def p_binary():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), y: pypto.Tensor([8, 32], F32), out: pypto.Tensor([11, 8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        outs = [pypto.add(x, y, alpha=2.0), pypto.sub(x, y), pypto.mul(x, y), pypto.div(x, y),
                pypto.maximum(x, y), pypto.minimum(x, 0.5), pypto.pow(pypto.abs(x), 2.0), pypto.fmod(x, y),
                pypto.remainder(x, y), pypto.hypot(x, y), pypto.floor_div(x, y)]
        for j, t in enumerate(outs):
            out[j:j + 1, :, :] = pypto.unsqueeze(t, 0)
    x, y, o = r(8, 32) * 4, r(8, 32) + 2.5, z(11, 8, 32)
    run(k, x, y, o)
    want = np.stack([x + 2 * y, x - y, x * y, x / y, np.maximum(x, y), np.minimum(x, 0.5), np.abs(x) ** 2,
                     np.fmod(x, y), x - y * np.floor(x / y), np.hypot(x, y), np.floor(x / y)])
    return o, want.astype(np.float32)


@probe("5.2", "clip(x, min, max) scalars and tensors; prelu(x, w); lrelu(x, slope)", tol=1e-7)
def p_clip_prelu():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), lo: pypto.Tensor([8, 32], F32), w: pypto.Tensor([32], F32),
          out: pypto.Tensor([4, 8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[0:1, :, :] = pypto.unsqueeze(pypto.clip(x, -0.5, 0.5), 0)
        out[1:2, :, :] = pypto.unsqueeze(pypto.clip(x, lo, lo + 0.5), 0)
        out[2:3, :, :] = pypto.unsqueeze(pypto.prelu(x, w), 0)
        out[3:4, :, :] = pypto.unsqueeze(pypto.lrelu(x, 0.1), 0)
    x, lo, w, o = r(8, 32), r(8, 32) * 0.2, r(32), z(4, 8, 32)
    run(k, x, lo, w, o)
    return o, np.stack([np.clip(x, -0.5, 0.5), np.clip(x, lo, lo + 0.5), np.where(x > 0, x, x * w),
                        np.where(x > 0, x, x * np.float32(0.1))])


@probe("5.2", "gcd, ceil_div on INT32; bitwise_and/or/xor/not, shifts on INT16")
def p_int_ops():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([8, 16], I32), b: pypto.Tensor([8, 16], I32), out: pypto.Tensor([2, 8, 16], I32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[0:1, :, :] = pypto.unsqueeze(pypto.gcd(a, b), 0)
        out[1:2, :, :] = pypto.unsqueeze(pypto.ceil_div(a, b), 0)
    a = RNG.integers(1, 100, (8, 16)).astype(np.int32)
    b = RNG.integers(1, 20, (8, 16)).astype(np.int32)
    o = np.zeros((2, 8, 16), np.int32)
    run(k, a, b, o)
    return o, np.stack([np.gcd(a, b), -(-a // b)])


@probe("5.2", "bitwise_and/or/xor/not, bitwise_left_shift/right_shift on INT16")
def p_bit_ops():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([8, 16], pypto.DT_INT16), b: pypto.Tensor([8, 16], pypto.DT_INT16),
          out: pypto.Tensor([4, 8, 16], pypto.DT_INT16)):
        pypto.set_vec_tile_shapes(8, 16)
        out[0:1, :, :] = pypto.unsqueeze(pypto.bitwise_and(a, b), 0)
        out[1:2, :, :] = pypto.unsqueeze(pypto.bitwise_or(a, b), 0)
        out[2:3, :, :] = pypto.unsqueeze(pypto.bitwise_xor(a, b), 0)
        out[3:4, :, :] = pypto.unsqueeze(pypto.bitwise_not(a), 0)
    a = RNG.integers(0, 1000, (8, 16)).astype(np.int16)
    b = RNG.integers(0, 1000, (8, 16)).astype(np.int16)
    o = np.zeros((4, 8, 16), np.int16)
    run(k, a, b, o)
    return o, np.stack([a & b, a | b, a ^ b, ~a])


@probe("5.2", "broadcast over one axis `[8, 32] * [8, 1]`; two axes `[2,4,8] + [8]` (HEAD: computed, warned)")
def p_broadcast():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([2, 4, 8], F32), c: pypto.Tensor([2, 4, 1], F32), b: pypto.Tensor([1, 1, 8], F32),
          out: pypto.Tensor([2, 4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 4, 8)
        out[:] = x * c + b
    x, c, b, o = r(2, 4, 8), r(2, 4, 1), r(1, 1, 8), z(2, 4, 8)
    run(k, x, c, b, o)
    return o, x * c + b


@probe("5.2", "binary op on two dtypes (no implicit promotion) -> FC0000", expect="error")
def p_binary_dtype():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F32), y: pypto.Tensor([8, 16], F16), out: pypto.Tensor([8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = x + y
    run(k, r(8, 16), z(8, 16, dtype=np.float16), z(8, 16))


@probe("5.4", "eq/ne/lt/le/gt/ge/greater with tensor and float; where(cond, tensor, Element)")
def p_compare_fns():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F32), y: pypto.Tensor([8, 16], F32), out: pypto.Tensor([7, 8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        cs = [pypto.eq(x, y), pypto.ne(x, 0.0), pypto.lt(x, y), pypto.le(x, 0.25), pypto.gt(x, y),
              pypto.ge(x, y), pypto.greater(x, 0.0)]
        for j, c in enumerate(cs):
            out[j:j + 1, :, :] = pypto.unsqueeze(pypto.where(c, 1.0, pypto.Element(F32, 0.0)), 0)
    x, y, o = r(8, 16), r(8, 16), z(7, 8, 16)
    y[0] = x[0]
    run(k, x, y, o)
    return o, np.stack([x == y, x != 0, x < y, x <= 0.25, x > y, x >= y, x > 0]).astype(np.float32)


@probe("5.5", "cast FP32->FP16/BF16/INT32 with CastMode RINT/ROUND/FLOOR/CEIL/TRUNC, satmode=ON")
def p_cast():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F32), out: pypto.Tensor([5, 8, 16], I32), h: pypto.Tensor([8, 16], F16)):
        pypto.set_vec_tile_shapes(8, 16)
        modes = [pypto.CastMode.CAST_RINT, pypto.CastMode.CAST_ROUND, pypto.CastMode.CAST_FLOOR,
                 pypto.CastMode.CAST_CEIL, pypto.CastMode.CAST_TRUNC]
        for j, m in enumerate(modes):
            out[j:j + 1, :, :] = pypto.unsqueeze(pypto.cast(x, I32, m, satmode=pypto.SaturationMode.ON), 0)
        h[:] = pypto.cast(x, F16)
    x = (r(8, 16) * 10).astype(np.float32)
    x[0, :4] = [0.5, 1.5, -0.5, -2.5]
    o, h = np.zeros((5, 8, 16), np.int32), np.zeros((8, 16), np.float16)
    run(k, x, o, h)
    want = np.stack([np.rint(x), np.sign(x) * np.floor(np.abs(x) + 0.5), np.floor(x), np.ceil(x), np.trunc(x)])
    return (np.concatenate([o.ravel().astype(np.float32), h.ravel().astype(np.float32)]),
            np.concatenate([want.ravel(), x.astype(np.float16).ravel().astype(np.float32)]))


@probe("5.6", "sum/amax/amin/prod(dim, keepdim); var(dim, correction, keepdim); cumsum; cumprod (HEAD)", tol=2e-6)
def p_reduce():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F32), out: pypto.Tensor([6, 8, 1], F32), c: pypto.Tensor([2, 8, 16], F32)):
        pypto.set_vec_tile_shapes(8, 16)
        rs = [pypto.sum(x, -1, keepdim=True), pypto.amax(x, 1, True), pypto.amin(x, dim=-1, keepdim=True),
              pypto.prod(x, -1, keepdim=True), pypto.var(x, -1, correction=1, keepdim=True),
              pypto.unsqueeze(pypto.sum(x, -1), -1)]
        for j, t in enumerate(rs):
            out[j:j + 1, :, :] = pypto.unsqueeze(t, 0)
        c[0:1, :, :] = pypto.unsqueeze(pypto.cumsum(x, 1), 0)
        c[1:2, :, :] = pypto.unsqueeze(pypto.cumprod(x, 1), 0)
    x = r(8, 16) + 1
    o, c = z(6, 8, 1), z(2, 8, 16)
    run(k, x, o, c)
    x64 = x.astype(np.float64)
    want = np.stack([x64.sum(-1, keepdims=True), x64.max(1, keepdims=True), x64.min(1, keepdims=True),
                     x64.prod(-1, keepdims=True), x64.var(-1, ddof=1, keepdims=True), x64.sum(-1, keepdims=True)])
    return (np.concatenate([o.ravel(), c.ravel()]),
            np.concatenate([want.ravel(), np.cumsum(x64, 1).ravel(), np.cumprod(x64, 1).ravel()]).astype(np.float32))


@probe("5.6", "reduction without `dim` -> TypeError", expect="error")
def p_reduce_nodim():
    _stmt_kernel("out[:] = x - pypto.sum(x)")


@probe("5.6", "reduce tile last axis not 32-byte aligned -> FC1001", expect="error")
def p_reduce_align():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 12], F32), out: pypto.Tensor([8, 1], F32)):
        pypto.set_vec_tile_shapes(8, 3)
        out[:] = pypto.sum(x, -1, keepdim=True)
    run(k, r(8, 12), z(8, 1))


@probe("5.6", "topk(x, k, dim=-1, largest) -> (values, indices); argsort; argmax/argmin (HEAD); sort (HEAD)")
def p_topk():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 32], F32), v: pypto.Tensor([4, 4], F32), i: pypto.Tensor([4, 4], I32),
          a: pypto.Tensor([4, 32], I32), m: pypto.Tensor([4, 1], I32), sv: pypto.Tensor([4, 32], F32)):
        pypto.set_vec_tile_shapes(4, 32)
        vals, idx = pypto.topk(x, 4, -1, True)
        v[:] = vals
        i[:] = idx
        a[:] = pypto.argsort(x, -1, descending=False)
        m[:] = pypto.argmax(x, -1, keepdim=True)
        s, _ = pypto.sort(x, -1, descending=True)
        sv[:] = s
    x = r(4, 32)
    v, i, a, m, sv = z(4, 4), np.zeros((4, 4), np.int32), np.zeros((4, 32), np.int32), np.zeros((4, 1), np.int32), \
        z(4, 32)
    run(k, x, v, i, a, m, sv)
    order = np.argsort(-x, 1, kind="stable")
    return (np.concatenate([v.ravel(), i.ravel(), a.ravel(), m.ravel(), sv.ravel()]).astype(np.float64),
            np.concatenate([np.take_along_axis(x, order[:, :4], 1).ravel(), order[:, :4].ravel(),
                            np.argsort(x, 1, kind="stable").ravel(), x.argmax(1).ravel(),
                            -np.sort(-x, 1).ravel()]).astype(np.float64))


@probe("5.7", "softmax(x, dim); rms_norm(x, gamma, epsilon=); expand_exp_dif(x, m)", tol=2e-6)
def p_composite():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], F32), g: pypto.Tensor([32], F32), m: pypto.Tensor([8, 1], F32),
          out: pypto.Tensor([3, 8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        out[0:1, :, :] = pypto.unsqueeze(pypto.softmax(x, -1), 0)
        out[1:2, :, :] = pypto.unsqueeze(pypto.rms_norm(x, g, epsilon=1e-6), 0)
        out[2:3, :, :] = pypto.unsqueeze(pypto.expand_exp_dif(x, m), 0)
    x, g, m, o = r(8, 32), r(32), r(8, 1), z(3, 8, 32)
    run(k, x, g, m, o)
    x64 = x.astype(np.float64)
    sm = np.exp(x64 - x64.max(-1, keepdims=True))
    sm /= sm.sum(-1, keepdims=True)
    rms = x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * g
    return o, np.stack([sm, rms, np.exp(x64 - m)]).astype(np.float32)


@probe("5.7", "`pypto.silu` (exists in neither version) -> AttributeError", expect="error")
def p_silu():
    _stmt_kernel("out[:] = pypto.silu(x)")


@probe("5.8", "matmul a_trans/b_trans, batched 3-D with batch broadcast, 4-D; out_dtype FP32 from FP16", tol=1e-5)
def p_matmul():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 16], F16), b: pypto.Tensor([16, 32], F16), c: pypto.Tensor([1, 16, 32], F32),
          d: pypto.Tensor([2, 32, 16], F32), o1: pypto.Tensor([16, 16], F32), o2: pypto.Tensor([2, 16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        o1[:] = pypto.matmul(a, b, F32, a_trans=True, b_trans=True)
        pypto.set_vec_tile_shapes(1, 16, 16)
        o2[:] = pypto.matmul(c, d, F32)
    a, b = r(32, 16).astype(np.float16), r(16, 32).astype(np.float16)
    c, d = r(1, 16, 32), r(2, 32, 16)
    o1, o2 = z(16, 16), z(2, 16, 16)
    run(k, a, b, c, d, o1, o2)
    return (np.concatenate([o1.ravel(), o2.ravel()]),
            np.concatenate([(a.T.astype(np.float32) @ b.T.astype(np.float32)).ravel(), (c @ d).ravel()]))


@probe("5.8", "matmul extend_params bias_tensor, scale, relu_type", tol=1e-5)
def p_matmul_ext():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F32), b: pypto.Tensor([32, 16], F32), bias: pypto.Tensor([1, 16], F32),
          o1: pypto.Tensor([16, 16], F32), o2: pypto.Tensor([16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        o1[:] = pypto.matmul(a, b, F32, extend_params={"bias_tensor": bias})
        o2[:] = pypto.matmul(a, b, F32, extend_params={"scale": 0.5, "relu_type": pypto.ReLuType.RELU})
    a, b, bias, o1, o2 = r(16, 32), r(32, 16), r(1, 16), z(16, 16), z(16, 16)
    run(k, a, b, bias, o1, o2)
    return (np.concatenate([o1.ravel(), o2.ravel()]),
            np.concatenate([(a @ b + bias).ravel(), (np.maximum(a @ b, 0) * 0.5).ravel()]))


@probe("5.8", "matmul INT8 x INT8 -> INT32")
def p_matmul_int8():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([32, 32], I8), b: pypto.Tensor([32, 32], I8), o: pypto.Tensor([32, 32], I32)):
        pypto.set_cube_tile_shapes([32, 32], [32, 32], [32, 32])
        o[:] = pypto.matmul(a, b, I32)
    a = RNG.integers(-100, 100, (32, 32)).astype(np.int8)
    b = RNG.integers(-100, 100, (32, 32)).astype(np.int8)
    o = np.zeros((32, 32), np.int32)
    run(k, a, b, o)
    return o, a.astype(np.int32) @ b.astype(np.int32)


@probe("5.8", "matmul without out_dtype -> TypeError", expect="error")
def p_matmul_no_outdtype():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F32), b: pypto.Tensor([32, 16], F32), o: pypto.Tensor([16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        o[:] = pypto.matmul(a, b)
    run(k, r(16, 32), r(32, 16), z(16, 16))


@probe("5.8", "matmul without cube tiles -> FC4000", expect="error")
def p_matmul_no_tile():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F32), b: pypto.Tensor([32, 16], F32), o: pypto.Tensor([16, 16], F32)):
        o[:] = pypto.matmul(a, b, F32)
    run(k, r(16, 32), r(32, 16), z(16, 16))


@probe("5.8", "scaled_mm (MX FP8) -> unsupported", expect="error")
def p_scaled_mm():
    _stmt_kernel("out[:] = pypto.scaled_mm(x, x, pypto.DT_FP32, x, x)")


@probe("5.8", "experimental.transposed_batchmatmul(a, b, out_dtype) (layout undocumented: not emulated)", expect="error")
def p_tbmm():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([4, 2, 16], F16), b: pypto.Tensor([2, 16, 16], F16), o: pypto.Tensor([2, 4, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])
        pypto.set_vec_tile_shapes(2, 4, 16)
        o[:] = pypto.experimental.transposed_batchmatmul(a, b, F32)
    a, b = r(4, 2, 16).astype(np.float16), r(2, 16, 16).astype(np.float16)
    o = z(2, 4, 16)
    run(k, a, b, o)
    return o, np.matmul(a.transpose(1, 0, 2).astype(np.float32), b.astype(np.float32))


@probe("5.8", "quantize / dequantize (HEAD)", expect="error")
def p_quantize():
    _stmt_kernel("out[:] = pypto.dequantize(pypto.quantize(x, 0.5, pypto.DT_INT8, -1), 0.5, pypto.DT_FP32, -1)")


@probe("5.6", "online_softmax(scores, scale) -> (max, sum, out) (HEAD experimental)", expect="error")
def p_online_softmax():
    _stmt_kernel("m, s, o = pypto.online_softmax(x, 1.0)\nout[:] = o")


# ---- §6 tiling and options ------------------------------------------------------------------------------------------

@probe("6.1", "vector op with no vec tile -> F21004", expect="error")
def p_no_tile():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        out[:] = x + 1.0
    run(k, r(8, 8), z(8, 8))


@probe("6.1", "set_vec_tile_shapes([8, 64]) (a list) -> TypeError", expect="error")
def p_tile_list():
    _stmt_kernel("pypto.set_vec_tile_shapes([8, 8])\nout[:] = x + 1.0")


@probe("6.1", "get_vec_tile_shapes(); tile set inside a loop does not leak after it (F21004 after)", expect="error")
def p_tile_scope():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        for _i in pypto.loop(1):
            pypto.set_vec_tile_shapes(8, 8)
            assert list(pypto.get_vec_tile_shapes()) == [8, 8]
        out[:] = x + 1.0
    run(k, r(8, 8), z(8, 8))


@probe("6.2", "set_cube_tile_shapes(m, k, n, enable_split_k) / get_cube_tile_shapes(); bad list length")
def p_cube_tiles():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F32), b: pypto.Tensor([32, 16], F32), o: pypto.Tensor([16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [16, 32, 32], [16, 16], True)
        m, kk, n, sk = pypto.get_cube_tile_shapes()
        assert list(kk) == [16, 32, 32] and sk
        o[:] = pypto.matmul(a, b, F32)
    a, b, o = r(16, 32), r(32, 16), z(16, 16)
    run(k, a, b, o)
    return o, a @ b


@probe("6.3", "`@pypto.options(...)` decorator and `with pypto.options(...)` outside; set_options/get_current_scope")
def p_options():
    @pypto.options(pass_options={"enable_slice": True})
    def host(x, o):
        @pypto.frontend.jit
        def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
            pypto.set_vec_tile_shapes(8, 8)
            out[:] = x + 1.0
        with pypto.options(runtime_options={"stitch_function_max_num": 64}):
            run(k, x, o)
    x, o = r(8, 8), z(8, 8)
    host(x, o)
    pypto.set_options(pass_options={"cube_l1_reuse_setting": {-1: 2}})
    pypto.get_current_scope()
    return o, x + 1


@probe("6.4", "set_pass_options(sg_set_scope=1/-1, vec_nbuffer_setting=, cube_l1_reuse_setting=, "
              "cube_nbuffer_setting=), set_semantic_label, experimental.set_operation_options(combine_axis=True), "
              "set_host_options, set_debug_options, set_matrix_size, set_print_options, platform.npuarch")
def p_knobs():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        pypto.experimental.set_operation_options(combine_axis=True)
        pypto.set_semantic_label("stage1")
        pypto.set_pass_options(sg_set_scope=1, vec_nbuffer_setting={-1: 4}, cube_l1_reuse_setting={-1: 2},
                               cube_nbuffer_setting={"DEFAULT": 1})
        t = x + 1.0
        pypto.set_pass_options(sg_set_scope=-1)
        if pypto.platform.npuarch == "DAV_3510":
            t = t * 2.0
        out[:] = t
    pypto.set_host_options(compile_monitor_enable=False)
    pypto.set_debug_options(runtime_debug_mode=0)
    pypto.set_print_options(edgeitems=3, precision=4, threshold=100, linewidth=120)
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, x + 1


@probe("6.5", "runtime options HEAD keys max_workspace_kb, device_sched_parallelism, launch_*; t.set_cache_policy")
def p_runtime_head_keys():
    @pypto.frontend.jit(runtime_options={"max_workspace_kb": 1024, "device_sched_parallelism": 2,
                                         "launch_sched_aicpu_num": 2, "launch_early_mode": 1,
                                         "valid_shape_optimize": 1, "triple_stream_sched": True})
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        x.set_cache_policy(pypto.CachePolicy.NONE_CACHEABLE, True)
        out[:] = x + 1.0
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, x + 1


@probe("6.5", "unknown runtime option key (0.2.0: IndexError map::at)", expect="error")
def p_runtime_unknown():
    @pypto.frontend.jit(runtime_options={"no_such_key": 1})
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x + 1.0
    run(k, r(8, 8), z(8, 8), compat="0.2.0")


@probe("6.5", "set_verify_golden_data / pass_verify_print in a kernel (debug ops)")
def p_verify_ops():
    @pypto.frontend.jit(verify_options={"enable_pass_verify": True})
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        t = x + 1.0
        pypto.pass_verify_print(t)
        out[:] = t
    pypto.set_verify_golden_data(goldens=[None, None])
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, x + 1


@probe("6.5", "run_mode=RunMode.SIM (EMU_SIM_NUMBERS warning, numbers computed)")
def p_sim_mode():
    @pypto.frontend.jit(runtime_options={"run_mode": pypto.RunMode.SIM})
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x + 1.0
    x, o = r(8, 8), z(8, 8)
    run(k, x, o)
    return o, x + 1


# ---- batch 2: forms the gym operators and the models/ kernels use (spec §8) ----------------------------------------

@probe("8", "annotation `pypto.Tensor(shape, dt, name, format=TILEOP_NZ)` on a matmul weight (NZ = ND numerically)")
def p_nz_annotation():
    @pypto.frontend.jit
    def k(a: pypto.Tensor([16, 32], F16, "a"), w: pypto.Tensor([32, 32], F16, "w", format=pypto.TileOpFormat.TILEOP_NZ),
          o: pypto.Tensor([16, 32], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [32, 32])
        o[:] = pypto.matmul(a, w, F32)
    a, w, o = r(16, 32).astype(np.float16), r(32, 32).astype(np.float16), z(16, 32)
    run(k, a, w, o)
    return o, a.astype(np.float32) @ w.astype(np.float32)


@probe("8", "valid_shape= on full / reshape / expand_clone / x.view method")
def p_valid_shape_kw():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        n = x.shape[0]
        for i in pypto.loop(pypto.ceildiv(n, 4)):
            v = (n - i * 4).min(4)
            t = x.view([4, 8], [i * 4, 0], valid_shape=[v, 8])
            f = pypto.full([4, 8], 1.0, F32, valid_shape=[v, 8])
            t2 = pypto.reshape(t, [4, 8], valid_shape=[v, 8])
            row = pypto.full([1, 8], 2.0, F32)
            e = pypto.expand_clone(row, [4, 8], valid_shape=[v, 8])
            out[i * 4:, :] = t2 + f + e
    x, o = r(6, 8), z(6, 8)
    run(k, x, o)
    return o, (x + 1) + 2


@probe("8", "paged-KV idiom: INT32 block table read with symbolic indices `bt[b, j]` as a view offset")
def p_block_table():
    @pypto.frontend.jit(runtime_options={"ready_on_host_tensors": ["bt"]})
    def k(cache: pypto.Tensor([8, 4, 16], F32), bt: pypto.Tensor([2, 2], I32), out: pypto.Tensor([2, 8, 16], F32)):
        pypto.set_vec_tile_shapes(1, 4, 16)
        for b in pypto.loop(2):
            for j in pypto.loop(2):
                blk = bt[b, j]
                t = pypto.view(cache, [1, 4, 16], [blk, 0, 0])
                out[b:b + 1, j * 4:j * 4 + 4, :] = t * 1.0
    cache, bt, o = r(8, 4, 16), np.array([[5, 2], [7, 0]], np.int32), z(2, 8, 16)
    run(k, cache, bt, o)
    return o, np.stack([np.concatenate([cache[5], cache[2]]), np.concatenate([cache[7], cache[0]])])


@probe("8", "scatter_update 4-D paged cache form `[blocks, block_size, 1, D]` with a 2-D slot index")
def p_scatter_update_4d():
    @pypto.frontend.jit
    def k(cache: pypto.Tensor([4, 4, 1, 16], F32), idx: pypto.Tensor([2, 1], pypto.DT_INT64),
          src: pypto.Tensor([2, 1, 1, 16], F32)):
        pypto.set_vec_tile_shapes(2, 4, 1, 16)
        pypto.scatter_update(cache, -2, idx, src)
    cache, src = r(4, 4, 1, 16), r(2, 1, 1, 16)
    idx = np.array([[5], [14]], np.int64)
    want = cache.copy()
    want[1, 1, 0] = src[0, 0, 0]
    want[3, 2, 0] = src[1, 0, 0]
    run(k, cache, idx, src)
    return cache, want


@probe("8", "loop with symbolic start/step; loop_unroll nested in pypto.loop; is_loop_end in the unrolled loop")
def p_loop_symbolic_bounds():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        n = x.shape[0]
        for h in pypto.loop(0, 2, 1):
            for i, u in pypto.loop_unroll(h, n, 1, unroll_list=[2, 1]):
                out[i:i + u, :] = x[i:i + u, :] + 1.0
    x, o = r(9, 8), z(9, 8)
    run(k, x, o)
    return o, x + 1


@probe("8", "trace-time checks on dtype and bytes_of inside the kernel (`if x.dtype == pypto.DT_BF16`), print()")
def p_dtype_branch():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], BF16), out: pypto.Tensor([8, 16], F32)):
        if x.dtype == pypto.DT_BF16 and pypto.bytes_of(x.dtype) == 2:
            pypto.set_vec_tile_shapes(8, 16)
            out[:] = pypto.cast(x, F32) * 2.0
    import ml_dtypes
    x, o = r(8, 16).astype(ml_dtypes.bfloat16), z(8, 16)
    run(k, x, o)
    return o, x.astype(np.float32) * 2


@probe("8", "whole dynamic tensor into a compute op (no loop): `out[:] = x + y` with DYNAMIC dims")
def p_whole_dynamic():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), y: pypto.Tensor([pypto.DYNAMIC, 8], F32),
          out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(4, 8)
        out[:] = x + y
    x, y, o = r(6, 8), r(6, 8), z(6, 8)
    run(k, x, y, o)
    return o, x + y


@probe("8", "cast routes FP16->INT8, BF16->INT32, INT32->FP16, INT8->FP16, FP32->INT64")
def p_cast_routes():
    @pypto.frontend.jit
    def k(h: pypto.Tensor([8, 32], F16), b: pypto.Tensor([8, 32], BF16), i: pypto.Tensor([8, 32], I32),
          q: pypto.Tensor([8, 32], I8), o: pypto.Tensor([4, 8, 32], F32)):
        pypto.set_vec_tile_shapes(8, 32)
        o[0:1, :, :] = pypto.unsqueeze(pypto.cast(pypto.cast(pypto.cast(h, I8), F16), F32), 0)
        o[1:2, :, :] = pypto.unsqueeze(pypto.cast(pypto.cast(b, I32), F32), 0)
        o[2:3, :, :] = pypto.unsqueeze(pypto.cast(pypto.cast(i, F16), F32), 0)
        o[3:4, :, :] = pypto.unsqueeze(pypto.cast(pypto.cast(q, F16), F32), 0)
    import ml_dtypes
    h = (r(8, 32) * 50).astype(np.float16)
    b = (r(8, 32) * 50).astype(ml_dtypes.bfloat16)
    i = RNG.integers(-1000, 1000, (8, 32)).astype(np.int32)
    q = RNG.integers(-100, 100, (8, 32)).astype(np.int8)
    o = z(4, 8, 32)
    run(k, h, b, i, q, o)
    return o, np.stack([np.trunc(h.astype(np.float32)), np.trunc(b.astype(np.float32)), i.astype(np.float16)
                        .astype(np.float32), q.astype(np.float32)])


@probe("8", "amax/amin/sum on BF16 and FP16 tiles (sum: EMU_SUM_FP32 warning)", tol=1e-2)
def p_reduce_lowp():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 32], BF16), out: pypto.Tensor([8, 1], BF16)):
        pypto.set_vec_tile_shapes(8, 32)
        out[:] = pypto.amax(x, -1, keepdim=True)
    import ml_dtypes
    x = r(8, 32).astype(ml_dtypes.bfloat16)
    o = np.zeros((8, 1), ml_dtypes.bfloat16)
    run(k, x, o)
    return o.astype(np.float32), x.astype(np.float32).max(-1, keepdims=True)


@probe("8", "options scope: `pypto.options(cube_tile_shapes=...)`, `pypto.CubeTile`, reset_options, get_options_tree")
def p_options_tree():
    with pypto.options(vec_tile_shapes=[8, 8]):
        pass
    pypto.get_options_tree()
    pypto.reset_options()


@probe("8", "legacy host API `pypto.from_torch` (pre-jit flow) -> clear error", expect="error")
def p_from_torch():
    import torch
    pypto.from_torch(torch.zeros(2))


@probe("8", "kernel called with tensor keyword arguments `k(x=x, out=o)`", expect="error")
def p_tensor_kwargs():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
    run(k, x=r(8, 8), out=z(8, 8))


@probe("8", "jit kwargs use_cache=False, infer_controlflow_shape=; one kernel called with two dynamic sizes")
def p_jit_cache():
    @pypto.frontend.jit(use_cache=False, infer_controlflow_shape=True)
    def k(x: pypto.Tensor([pypto.DYNAMIC, 8], F32), out: pypto.Tensor([pypto.DYNAMIC, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(x.shape[0]):
            out[i:i + 1, :] = x[i:i + 1, :] * 2.0
    x1, o1, x2, o2 = r(3, 8), z(3, 8), r(5, 8), z(5, 8)
    run(k, x1, o1)
    run(k, x2, o2)
    return np.concatenate([o1.ravel(), o2.ravel()]), np.concatenate([(x1 * 2).ravel(), (x2 * 2).ravel()])


@probe("8", "kernel built in a factory with closure dims and a module-level constant; dataclass attribute tiles")
def p_factory():
    def make(rows: int, cols: int):
        @pypto.frontend.jit
        def k(x: pypto.Tensor([rows, cols], F32), out: pypto.Tensor([rows, cols], F32)):
            pypto.set_vec_tile_shapes(rows, cols)
            out[:] = pypto.mul(x, float(cols))
        return k
    x, o = r(4, 16), z(4, 16)
    run(make(4, 16), x, o)
    return o, x * 16


@probe("8", "`pypto.transpose` of a view then matmul with b_trans (attention score pattern)", tol=1e-5)
def p_attention_pattern():
    @pypto.frontend.jit
    def k(q: pypto.Tensor([2, 16, 32], F32), kk: pypto.Tensor([2, 16, 32], F32), out: pypto.Tensor([2, 16, 16], F32)):
        pypto.set_cube_tile_shapes([16, 16], [32, 32], [16, 16])
        pypto.set_vec_tile_shapes(16, 16)
        for b in pypto.loop(2):
            qb = pypto.reshape(pypto.view(q, [1, 16, 32], [b, 0, 0]), [16, 32])
            kb = pypto.reshape(pypto.view(kk, [1, 16, 32], [b, 0, 0]), [16, 32])
            s = pypto.matmul(qb, kb, F32, b_trans=True)
            p = pypto.softmax(s * 0.5, -1)
            out[b:b + 1, :, :] = pypto.reshape(p, [1, 16, 16])
    q, kk, o = r(2, 16, 32), r(2, 16, 32), z(2, 16, 16)
    run(k, q, kk, o)
    s = np.einsum("bqd,bkd->bqk", q.astype(np.float64), kk.astype(np.float64)) * 0.5
    e = np.exp(s - s.max(-1, keepdims=True))
    return o, (e / e.sum(-1, keepdims=True)).astype(np.float32)


# ---- §10: violations the real SIM accepts silently, reported as warnings --------------------------------------------

@probe("10", "`exp` on INT32 (outside the documented dtypes) -> EMU_DTYPE warning")
def p_w_exp_int():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], I32), out: pypto.Tensor([8, 8], I32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = pypto.exp(x)
    warned("EMU_DTYPE", k, np.zeros((8, 8), np.int32), np.zeros((8, 8), np.int32))


@probe("10", "`sum` on an FP16 tile -> EMU_SUM_FP32 (device-divergent)")
def p_w_sum_fp16():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F16), out: pypto.Tensor([8, 1], F16)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.sum(x, -1, keepdim=True)
    warned("EMU_SUM_FP32", k, np.ones((8, 16), np.float16), np.zeros((8, 1), np.float16))


@probe("10", "elementwise tile with an unaligned last axis (12 B) -> EMU_TILE_ALIGN warning")
def p_w_tile_align():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 12], F32), out: pypto.Tensor([8, 12], F32)):
        pypto.set_vec_tile_shapes(8, 3)
        out[:] = x + 1.0
    warned("EMU_TILE_ALIGN", k, r(8, 12), z(8, 12))


@probe("10", "unroll_list on a loop that is not innermost -> EMU_UNROLL_OUTER")
def p_w_unroll_outer():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(2, unroll_list=[2, 1]):
            for j in pypto.loop(2):
                out[i * 2 + j:i * 2 + j + 1, :] = x[i * 2 + j:i * 2 + j + 1, :] + 1.0
    warned("EMU_UNROLL_OUTER", k, r(4, 8), z(4, 8))


@probe("10", "Python side effect (list append) inside pypto.loop -> EMU_SIDE_EFFECT")
def p_w_side_effect():
    seen: list[Any] = []

    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            seen.append(i)
            out[i:i + 1, :] = x[i:i + 1, :] + 1.0
    warned("EMU_SIDE_EFFECT", k, r(4, 8), z(4, 8))


@probe("10", "a tensor computed inside an ended loop read after it -> EMU_LOOP_LOCAL_READ")
def p_w_loop_local():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([1, 8], F32)):
        pypto.set_vec_tile_shapes(1, 8)
        for i in pypto.loop(4):
            t = x[i:i + 1, :] + 1.0
        out[:] = t * 1.0
    warned("EMU_LOOP_LOCAL_READ", k, r(4, 8), z(1, 8))


@probe("10", "`reshape(..., inplace=True)` of a kernel output -> EMU_RESHAPE_INPLACE")
def p_w_reshape_inplace():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        o = pypto.reshape(out, [64], inplace=True)
        pypto.set_vec_tile_shapes(64)
        o[:] = pypto.reshape(x, [64]) + 1.0
    warned("EMU_RESHAPE_INPLACE", k, r(8, 8), z(8, 8))


@probe("10", "float scalar with a non-FP32 tensor in `where` -> EMU_SCALAR_DTYPE (0.2.0)")
def p_w_scalar_dtype():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 16], F16), c: pypto.Tensor([8, 16], pypto.DT_BOOL), out: pypto.Tensor([8, 16], F16)):
        pypto.set_vec_tile_shapes(8, 16)
        out[:] = pypto.where(c, x, 0.0)
    warned("EMU_SCALAR_DTYPE", k, np.ones((8, 16), np.float16), np.ones((8, 16), bool),
           np.zeros((8, 16), np.float16), compat="0.2.0")


@probe("10", "`assemble(parallel=True)` windows that overlap -> EMU_PARALLEL_OVERLAP")
def p_w_parallel_overlap():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([4, 8], F32), out: pypto.Tensor([4, 8], F32)):
        pypto.set_vec_tile_shapes(2, 8)
        for _i in pypto.loop(2):
            pypto.assemble(x[0:2, :] + 1.0, [1, 0], out, parallel=True)
    warned("EMU_PARALLEL_OVERLAP", k, r(4, 8), z(4, 8))


@probe("10", "torch arg shape differing from the annotation -> error (real: only with runtime_debug_mode=3)",
       expect="error")
def p_w_annotation_shape():
    @pypto.frontend.jit
    def k(x: pypto.Tensor([8, 8], F32), out: pypto.Tensor([8, 8], F32)):
        pypto.set_vec_tile_shapes(8, 8)
        out[:] = x
    run(k, r(8, 16), z(8, 8))


# ---- misuse: wrong argument types and values to common ops (clear error at the line, never a traceback) ---------

_MISUSE = [
    ("view offsets of the wrong rank", "out[:] = pypto.view(x, [4, 8], [0]) + 1.0"),
    ("cast to a string dtype", "out[:] = pypto.cast(x, 'fp16')"),
    ("cast to DT_BOTTOM", "out[:] = pypto.cast(x, pypto.DT_BOTTOM)"),
    ("reduction over an axis out of range", "out[:] = x - pypto.sum(x, 5, keepdim=True)"),
    ("reduction over a list of axes", "out[:] = x - pypto.amax(x, [0, 1], keepdim=True)"),
    ("reshape to another element count", "out[:] = pypto.reshape(x, [3, 7])"),
    ("matmul with a string out_dtype", "pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])\n"
                                       "out[:] = pypto.matmul(x, x, 'fp32')"),
    ("concat of a tensor, not a list", "out[:] = pypto.concat(x, 0)"),
    ("loop over a string bound", "for i in pypto.loop('a'):\n    pass\nout[:] = x"),
    ("vec tile of 0", "pypto.set_vec_tile_shapes(0, 8)\nout[:] = x + 1.0"),
    ("vec tile of a float", "pypto.set_vec_tile_shapes(8.0, 8)\nout[:] = x + 1.0"),
    ("vec tile of 5 dims", "pypto.set_vec_tile_shapes(1, 1, 1, 8, 8)\nout[:] = x + 1.0"),
    ("transpose axis out of range", "out[:] = pypto.transpose(x, 0, 5)"),
    ("full with a string value", "out[:] = pypto.full([8, 8], 'a', F32)"),
    ("gather with a float index", "out[:] = pypto.gather(x, 1, x)"),
    ("where with a float condition", "out[:] = pypto.where(x, x, x)"),
    ("index with None", "out[:] = x[None]"),
    ("index with a tensor", "out[:] = x[x]"),
    ("assemble with offsets of the wrong rank", "pypto.assemble(x + 1.0, [0], out)"),
    ("topk with k larger than the axis", "v, i = pypto.topk(x, 100)\nout[:] = x"),
    ("a Python list where a tensor goes", "out[:] = pypto.exp([1.0, 2.0])"),
    ("a numpy array where a tensor goes", "import numpy\nout[:] = x + numpy.ones((8, 8), numpy.float32)"),
    ("a torch tensor inside the kernel", "import torch\nout[:] = x + torch.ones(8, 8)"),
    ("matmul of 1-D operands", "pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])\n"
                               "out[:] = pypto.matmul(x[0, :], x[:, 0], pypto.DT_FP32)"),
    ("unknown keyword to an op", "out[:] = pypto.exp(x, foo=1)"),
    ("iterating a tensor", "for row in x:\n    pass\nout[:] = x"),
    ("`float(t)` of a tensor", "v = float(x)\nout[:] = x"),
    ("`x.shape = ...`", "x.shape = [64]\nout[:] = x"),
    ("`pypto.Element` of a bad dtype", "out[:] = pypto.maximum(x, pypto.Element(3, 0.0))"),
    ("`set_cube_tile_shapes` with 3-element m", "pypto.set_cube_tile_shapes([16, 16, 16], [16, 16], [16, 16])\n"
                                                  "out[:] = x"),
    ("loop_unroll with a 0 factor (s45: was a ZeroDivisionError from inside the emulator)", "for i, u in pypto.loop_unroll(0, 8, 1, unroll_list=[0]):\n"
                                    "    out[i:i + u, :] = x[i:i + u, :]"),
    ("loop with step 0", "for i in pypto.loop(0, 8, 0):\n    pass\nout[:] = x"),
]

for _i, (_what, _body) in enumerate(_MISUSE):
    def _m(body=_body):
        _stmt_kernel(body)
    _m.__name__ = f"p_misuse_{_i:02d}"
    PROBES.append(Probe(_m.__name__, "misuse", f"misuse: {_what} -> clear error", _m, "error"))


_MISUSE_ANY = [  # outcome not pinned by the spec (ok or a clear error both fine); never a traceback from the emulator
    ("reshape with a tuple shape", "out[:] = pypto.reshape(x, (8, 8))"),
    ("tensor + loop index (a SymbolicScalar operand)", "for i in pypto.loop(2):\n    out[:] = x + i"),
    ("SymbolicScalar * tensor", "for i in pypto.loop(2):\n    out[:] = i * x"),
    ("cast with a string mode", "out[:] = pypto.cast(x, F32, 'rint')"),
    ("full with valid_shape larger than the shape", "out[:] = pypto.full([8, 8], 1.0, F32, valid_shape=[9, 8])"),
    ("view with valid_shape larger than the shape", "out[:] = pypto.view(x, [8, 8], [0, 0], valid_shape=[9, 8]) * 1.0"),
    ("pad in reflect mode", "out[:] = pypto.pad(x, [0, 0, 0, 0], 'reflect')"),
    ("topk with k = 0", "v, i = pypto.topk(x, 0)\nout[:] = x"),
    ("matmul with a_trans='yes'", "pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])\n"
                                  "out[:] = pypto.matmul(x, x, pypto.DT_FP32, a_trans='yes')"),
    ("index_select with a float index", "out[:] = pypto.index_select(x, 0, x)"),
    ("clip with no bounds", "out[:] = pypto.clip(x, None, None)"),
    ("expand_clone to a lower rank", "out[:] = pypto.expand_clone(x, [8])"),
    ("unsqueeze at an axis out of range", "out[:] = pypto.unsqueeze(x, 7)"),
    ("concat of an empty list", "out[:] = pypto.concat([], 0)"),
    ("concat along an axis out of range", "out[:] = pypto.concat([x], 5)"),
    ("one_hot of a float tensor", "t = pypto.one_hot(x, 4)\nout[:] = x"),
    ("softmax over an axis out of range", "out[:] = pypto.softmax(x, 3)"),
    ("arange with step 0", "t = pypto.arange(0, 8, 0)\nout[:] = x"),
    ("arange with an empty span", "t = pypto.arange(8, 0)\nout[:] = x"),
    ("zeros with a positional dtype", "out[:] = pypto.zeros(8, 8, F32)"),
    ("local tensor with a -1 dim", "t = pypto.tensor([-1, 8], F32)\nt[:] = x\nout[:] = t"),
    ("local tensor with a string dtype", "t = pypto.tensor([8, 8], 'fp32')\nt[:] = x\nout[:] = t"),
    ("view reinterpreting FP32 as INT16", "t = pypto.view(x, dtype=pypto.DT_INT16)\nout[:] = x"),
    ("loop with unroll_list a string", "for i in pypto.loop(0, 8, 1, unroll_list='4'):\n    out[i:i + 1, :] = x[i:i + 1, :]"),
    ("is_loop_begin of an int", "if pypto.is_loop_begin(3):\n    out[:] = x"),
    ("cond with file but no lineno", "for i in pypto.loop(2):\n    c = pypto.cond(i == 0, file='a')\nout[:] = x"),
    ("set_pass_options with a string scope", "pypto.set_pass_options(sg_set_scope='a')\nout[:] = x + 1.0"),
    ("cube tile with a 0", "pypto.set_cube_tile_shapes([16, 0], [16, 16], [16, 16])\n"
                           "out[:] = pypto.matmul(x, x, pypto.DT_FP32)"),
    ("Element without a value", "out[:] = pypto.maximum(x, pypto.Element(F32))"),
    ("int key with a loop index on FP32", "for i in pypto.loop(2):\n    out[i] = x[i]"),
    ("view with a float offset", "out[:] = pypto.view(x, [4, 8], [0.5, 0]) * 1.0"),
    ("view of a view past the inner window", "v = pypto.view(x, [4, 8], [0, 0])\nout[0:4, :] = pypto.view(v, [4, 8], [2, 0]) * 1.0"),
    ("set_vec_tile_shapes from a dynamic shape", "pypto.set_vec_tile_shapes(*x.shape)\nout[:] = x + 1.0"),
    ("loop bound a Tensor", "for i in pypto.loop(x):\n    pass\nout[:] = x"),
    ("scalar first operand `pypto.add(1.0, x)`", "out[:] = pypto.add(1.0, x)"),
    ("`pypto.maximum(1.0, 2.0)` (no tensor)", "t = pypto.maximum(1.0, 2.0)\nout[:] = x"),
    ("assemble of a Python number", "pypto.assemble(1.0, [0, 0], out)"),
    ("move of a view of itself", "out.move(out[0:8, :])"),
    ("`out[:] = 0.0` (a scalar into a tensor)", "out[:] = 0.0"),
    ("`out[0:4, :] = 1.0` (a scalar into a slice)", "out[0:4, :] = 1.0"),
    ("`x.dtype = ...`", "x.dtype = pypto.DT_FP16\nout[:] = x"),
    ("reduce with keepdim as a string", "out[:] = x - pypto.sum(x, -1, keepdim='yes')"),
    ("transpose of one axis with itself", "out[:] = pypto.transpose(x, 1, 1)"),
    ("where with tensors of two ranks", "out[:] = pypto.where(x > 0.0, x, pypto.view(x, [8, 8], [0, 0])[0, :])"),
    ("matmul of two dtypes", "pypto.set_cube_tile_shapes([16, 16], [16, 16], [16, 16])\n"
                             "out[:] = pypto.matmul(x, pypto.cast(x, pypto.DT_FP16), pypto.DT_FP32)"),
]

for _i, (_what, _body) in enumerate(_MISUSE_ANY):
    def _m2(body=_body):
        _stmt_kernel(body)
    _m2.__name__ = f"p_misuse_any_{_i:02d}"
    PROBES.append(Probe(_m2.__name__, "misuse", f"misuse: {_what}", _m2, "any"))


# ---- runner -------------------------------------------------------------------------------------------------------------

def _inside_emulator(exc: BaseException) -> bool:
    """True if ``exc`` (or the cause the emulator wrapped) was raised by emulator code with a raw Python error."""
    inner = exc.__cause__ if isinstance(exc, emu.EmulatorError) and exc.__cause__ is not None else exc
    if isinstance(inner, emu.EmulatorError):
        return False
    tb = traceback.extract_tb(inner.__traceback__)
    if not tb or not tb[-1].filename.startswith(_EMU_DIR) or isinstance(inner, AssertionError):
        return False
    last = tb[-1]
    # a deliberate `raise` of the emulator, or Python's own error applying the user's expression (the walker
    # evaluates the kernel's calls and operators: `sum(x)` without dim, `t & t`) is what a device host shows too
    deliberate = (last.line or "").lstrip().startswith("raise") or os.path.basename(last.filename) in (
        "_trace_walk.py", "_trace_interp.py")
    return not deliberate


def classify(p: Probe) -> tuple[str, str]:
    try:
        res = p.run()
    except emu.EmulatorUnsupported as e:
        return "unsupported", f"{e.code}: {e.message}"[:150]
    except Exception as e:  # noqa: BLE001 - every outcome is recorded
        if _inside_emulator(e):
            inner = e.__cause__ or e
            tb = traceback.extract_tb(inner.__traceback__)[-1]
            return "CRASH", f"{type(inner).__name__}: {inner} @ {os.path.basename(tb.filename)}:{tb.lineno}"[:200]
        msg = f"{e.code}: {e.kind}: {e.message}" if isinstance(e, emu.EmulatorError) else f"{type(e).__name__}: {e}"
        return "error", msg.replace("\n", " ")[:150]
    if res is None:
        return "ok-no-ref", ""
    got, want = (np.asarray(v) for v in res)
    if got.shape != want.shape:
        return "DIVERGES", f"shape {got.shape} vs {want.shape}"
    g64, w64 = got.astype(np.float64), want.astype(np.float64)
    if p.tol:
        bad = ~np.isclose(g64, w64, rtol=p.tol, atol=p.tol, equal_nan=True)
    else:
        bad = ~((g64 == w64) | (np.isnan(g64) & np.isnan(w64)))
    if bad.any():
        return "DIVERGES", f"{int(bad.sum())}/{bad.size} differ, max |d| {np.nanmax(np.abs(g64 - w64)):.3g}"
    return "ok", ""


NOTES: dict[str, str] = {
    "p_atomic_add": "**fixed s45** (was `EMU_UNSUPPORTED`): view + add + assemble, in loop order",
    "p_axpy": "**fixed s45** (was `AttributeError` of the module): `y.move(add(y, x, alpha=a))`; HEAD only",
    "p_jit_options": "option groups recorded, not applied (numerically transparent)",
    "p_precision_type": "diverges: INTRINSIC computed at full FP32 precision (the device's instruction is approximate, "
                        "~1e-6..1e-4 relative)",
    "p_unary_erf": "diverges: `math.erf` in float64 rounded once (device: its approximation)",
    "p_unary_erfc": "diverges: as erf",
    "p_reshape_family": "diverges: `inplace=True` returns a copy (no aliasing of the source storage)",
    "p_setitem_stop_only": "0.2.0 writes at offset stop - dim (negative); emulator at 0 + `EMU_SLICE_QUIRK`",
    "p_stale_rebind": "as the device (init + last slice) + `EMU_STALE_REBIND` warning",
    "p_loop_parallel": "iterations run in order (the declaration is not checked for independence here)",
    "p_loop_unroll_overlap": "the 0.2.0 algorithm, overlap included + `EMU_UNROLL_OVERLAP`",
    "p_broadcast": "HEAD: computed + `EMU_BROADCAST`; 0.2.0: FC0000 (one expanded axis)",
    "p_builtin_min": "HEAD: `pypto.min`; 0.2.0: `ValueError: Not concrete value`",
    "p_reshape_sym": "HEAD; 0.2.0: TypeError",
    "p_stmt_`&`_on_comparison_tensors": "the wheel: `F21004 op [CMPS]tile shape not set`; here a TypeError naming `&` "
                                        "(both refuse)",
    "p_sim_mode": "numbers computed + `EMU_SIM_NUMBERS` (the real SIM writes no outputs)",
    "p_tensor_props": "",
    "p_cast": "CAST_ROUND ties away from zero; float->float CAST_ROUND = RINT (differs only on exact ties)",
    "p_matmul": "float32 sgemm per tile (summation order differs from the cube: last bits)",
    "p_matmul_ext": "`scale` = float multiply after ReLU (fixpipe dequant approximated); `trans_mode` ignored",
    "p_topk": "ties in stable (first-index) order; the device's merge sort order is undocumented",
    "p_tbmm": "layout of the experimental op undocumented",
    "p_quantize": "HEAD quantisation not emulated",
    "p_online_softmax": "HEAD experimental fused op not emulated",
    "p_scaled_mm": "MX FP8 block scales not emulated",
    "p_legacy_function": "legacy tracing style not emulated",
    "p_from_torch": "legacy host flow not emulated",
    "p_sym_floatop": "the wheel's own `AttributeError` ('float' object has no attribute '_base')",
    "p_runtime_unknown": "compat 0.2.0 only; HEAD records unknown keys",
    "p_reduce_lowp": "`sum` on FP16/BF16 also warns `EMU_SUM_FP32`",
    "p_view_oob": "the wheel does not check; the emulator raises (the device reads garbage there)",
    "p_assemble_oob": "the wheel does not check at compile time; the oracle fails at run",
    "p_local_uninit": "",
}


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def markdown(rows: list[tuple[Probe, str, str, bool]]) -> str:
    """The docs/emulator-fidelity.md table: one row per probe, the unary-op probes folded into one row."""
    out = ["| § | form | emulator (compat head) | note |", "|---|---|---|---|"]
    unary = [p for p, *_ in rows if p.name.startswith("p_unary_")]
    unary_ok = all(v == "ok" for p, v, _, _ in rows if p.name.startswith("p_unary_"))
    done_unary = False
    for p, v, d, agrees in rows:
        if p.name.startswith("p_unary_"):
            if done_unary:
                continue
            done_unary = True
            names = ", ".join(q.name.removeprefix("p_unary_") for q in unary)
            out.append(f"| 5.3 | unary `pypto.<op>(x)` FP32: {names} | "
                       f"{'as specified (= numpy within 2e-6)' if unary_ok else 'see bench output'} | "
                       f"{NOTES['p_unary_erf']} |")
            continue
        if v == "ok":
            what = "as specified (= reference" + (f" within {p.tol:g})" if p.tol else ", bit-exact)")
        elif v == "ok-no-ref":
            what = "warns as specified" if p.section == "10" and "->" in p.form else "accepted as specified"
        elif v == "unsupported":
            what = "not emulated: `EMU_UNSUPPORTED` naming it"
        elif v == "error" and p.expect in ("error", "any"):
            what = "error as specified: " + _cell(d.split(" (")[0])[:110]
        else:
            what = f"**{v}**: {_cell(d)[:110]}"
        if not agrees:
            what = f"**{v} - differs from the spec**"
        out.append(f"| {p.section} | {_cell(p.form)} | {what} | {_cell(NOTES.get(p.name, ''))} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    import logging
    logging.disable(logging.WARNING)
    rows = []
    for p in PROBES:
        if args.only and args.only not in p.name:
            continue
        verdict, detail = classify(p)
        agrees = (verdict.startswith("ok") and p.expect == "ok") or (
            verdict in ("error", "unsupported") and p.expect == "error") or (p.expect == "any" and verdict != "CRASH")
        rows.append((p, verdict, detail, agrees))
    if args.markdown:
        print(markdown(rows))
    else:
        for p, v, d, a in rows:
            print(f"{'  ' if a else '!!'} {p.section:4} {p.name:32} {p.expect:5} {v:11} {d}")
    bad = [p.name for p, v, _, a in rows if not a]
    print(f"# {len(rows)} probes, {len(rows) - len(bad)} as the spec says; differing: {', '.join(bad)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
