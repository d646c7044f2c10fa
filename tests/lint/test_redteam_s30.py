"""Red team s30: the lint blind spots behind 15 PASSes of a fresh hostile batch, each reduced to a minimal file, each
with an honest counterpart that must keep passing.

Code lint never read (PF02): a ``match`` statement (its patterns read ``__globals__`` and bind names no rule sees),
``id()`` (an address, random per process). Exceptions swallowed (PF04): a generator's or coroutine's cleanup. The
device under another spelling (PF04): ``dev = x.device; dev.type``, ``x.get_device()``, a comparison with the device
of a tensor made in the file. Layouts and classes verification never passes (PF04): ``x.flags.c_contiguous``,
``ravel(order="K")``, ``type(x) is np.ndarray``, ``isinstance(x, np.memmap)``. The clock (PF04): a datetime dtype.
State (PF11): a hook's handle counter, a kernel cache keyed on the input itself.
"""

from __future__ import annotations

import pytest
from test_redteam_s20 import blocking

HEAD = '''import numpy as np
import pypto
import torch

D = 64


@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    pypto.set_vec_tile_shapes(16, D)
    for i in pypto.loop(pypto.ceildiv(x.shape[0], 16), name="r", idx_name="i"):
        xt = pypto.view(x, [16, D], [i * 16, 0], valid_shape=[(x.shape[0] - i * 16).min(16), D])
        pypto.assemble(pypto.exp(xt), [i * 16, 0], y)
'''


def src(body: str, extra: str = "") -> str:
    return (HEAD + extra + "\n\ndef k_wrapper(x):\n    y = torch.zeros_like(x)\n    n = x.shape[0]\n    " + body
            + "\n    k(x[:n], y[:n])\n    return y\n")


BAD = {
    "match reads __globals__": ("PF02", "match k_wrapper:\n        case object(__globals__={'__builtins__': g}):\n"
                                        "            n = n - 1", ""),
    "match on a module's spec": ("PF02", "match pypto:\n        case object(__spec__=None):\n            n = n - 1", ""),
    "id is an address": ("PF02", "n = n if id(np.zeros) % 16 else n - 1", ""),
    "generator cleanup": ("PF04", "g = _probe()\n    next(g)",
                          "\n\ndef _probe():\n    try:\n        yield 0\n    finally:\n        np.empty(9 << 29)\n"),
    "coroutine": ("PF04", "_probe().close()", "\n\nasync def _probe():\n    return 1\n"),
    "device through a name": ("PF04", "dev = x.device\n    n = n if dev.type == 'cpu' else n - 1", ""),
    "device through two names": ("PF04", "d1 = x.device\n    d2 = d1\n    n = n if d2.index is None else n - 1", ""),
    "get_device": ("PF04", "n = n if x.get_device() < 0 else n - 1", ""),
    "device of a tensor made here": ("PF04", "n = n if x.device == torch.empty(1).device else n - 1", ""),
    "device against a named fixed device": ("PF04", "cpu = torch.device('cpu')\n    n = n if x.device == cpu else n - 1",
                                            ""),
    "device as a dictionary key": ("PF04", "n = {'cpu': n}.get(str(x.device), n - 1)", ""),
    "device in an f-string": ("PF04", "n = n if f'{x.device}' == 'cpu' else n - 1", ""),
    "contiguity branch": ("PF04", "n = n if x.flags.c_contiguous else n - 1", ""),
    "is_contiguous branch": ("PF04", "n = n if x.is_contiguous() else n - 1", ""),
    "strides": ("PF04", "n = n if x.stride(0) == D else n - 1", ""),
    "memory-order ravel": ("PF04", "x = np.ascontiguousarray(x.ravel(order='K').reshape(x.shape))", ""),
    "exact type": ("PF04", "n = n if type(x) is np.ndarray else n - 1", ""),
    "memmap instance": ("PF04", "n = n - 1 if isinstance(x, np.memmap) else n", ""),
    "datetime dtype reads the clock": ("PF04", "n = n if np.array('today', 'M8[D]') < np.array('2027-01-01', 'M8[D]') "
                                               "else n - 1", ""),
    "timedelta dtype": ("PF04", "t = np.zeros(1, 'm8[s]')", ""),
    "a bare datetime code as a dtype": ("PF04", "t = np.array('now', dtype='M')", ""),
    "hook handle counter": ("PF11", "h = torch.zeros(1, requires_grad=True).register_hook(print)\n"
                                    "    n = n if h.id < 40 else n - 1", ""),
    "kernel cache keyed on the input": ("PF11", "warm = x in _K\n    _K[x] = k\n    n = n - 1 if warm else n",
                                        "_K = {}\n"),
    "kernel cache keyed on the input through a factory": (
        "PF11", "_kern(x)", "_K = {}\n\n\ndef _kern(t):\n    if t in _K:\n        return _K[t]\n    _K[t] = k\n"
                            "    return k\n"),
    # the second round (s30b), against the first round's fixes
    "update_wrapper copies a namespace": ("PF02", "api = functools.update_wrapper(_N(), pypto)",
                                          "import functools\n\n\nclass _N:\n    pass\n"),
    "wraps": ("PF02", "n = n", "from functools import wraps\n"),
    "eval as an attribute": ("PF02", "n = n if _N().eval('1') else n - 1", "\n\nclass _N:\n    pass\n"),
    "the clock as a concatenation": ("PF04", "t = np.array('to' + 'day', 'M' + '8[D]')", ""),
    "identity with a call's result": ("PF04", "n = n if x.contiguous() is x else n - 1", ""),
    "identity between two names": ("PF04", "xa = np.asarray(x)\n    n = n if xa is x else n - 1", ""),
    "repr names the device": ("PF04", "n = n if 'device=' in repr(x[:1]) else n - 1", ""),
    "an address to print": ("PF04", "n = n if str(object())[-3] == '0' else n - 1", ""),
    "the jit object as text": ("PF04", "n = n if 'emulator' in f'{k}' else n - 1", ""),
    "a made device's type": ("PF04", "n = n if torch.device(x.device).type == 'cpu' else n - 1", ""),
    "a read-only buffer": ("PF04", "n = n if x.data.readonly else n - 1", ""),
    # the third round (s30c)
    "a standard module through numpy's namespace": ("PF02", "g = np.random.mtrand.operator.attrgetter", ""),
    "builtins through a re-exported re": ("PF02", "b = np.random.bit_generator.re.enum.bltns", ""),
    "getattr of a banned builtin's name": ("PF02", "f = getattr(np, 'eval', None) or n", ""),
    "a cache decorator reached through a chain": ("PF11", "assert _c() is not None",
                                                  "\n\n@np.random.bit_generator.re.functools.cache\ndef _c():\n"
                                                  "    return []\n"),
    "a fake main block": ("PF11", "if '__main__' not in str(x.dtype):\n        n = n - int(np.random.rand() < 0.01)",
                          ""),
    "the clock as a reversed string": ("PF04", "t = np.array('yadot'[::-1], ']D[8M'[::-1])", ""),
    "dim_order": ("PF04", "n = n if x.dim_order() == (0, 1) else n - 1", ""),
    "identity through a set": ("PF04", "xc = x.contiguous()\n    n = n if xc in {x} else n - 1", ""),
    "memoryview contiguity": ("PF04", "n = n if x.data.contiguous else n - 1", ""),
    # the fourth round (s30d)
    "attrgetter re-exported by torch": ("PF02", "g = torch.autograd.profiler_util.attrgetter", ""),
    "a dotted dunder path as a string": ("PF02", "p = '__self__.eval'", ""),
    "__name__ rebound": ("PF02", "n = n", "__name__ = '__main__'\n"),
    "a self-test helper reached through a class": ("OL62", "n = _C.go(n)",
                                                   "\n\ndef _test(n):\n    return n - int(np.sum(np.ones(2)) > 1)\n"
                                                   "\n\nclass _C:\n    @staticmethod\n    def go(n):\n"
                                                   "        return _test(n)\n"),
    "a main block that is not one": ("OL62", "n = n", "\n\ndef main():\n    return np.sum(np.ones(2))\n\n\n"
                                                    "if '__main__' in '__main__':\n    main()\n"),
    "the matmul precision mode": ("PF04", "n = n if torch.get_float32_matmul_precision() == 'highest' else n - 1", ""),
    # the fifth round (s30e)
    "a BLAS thread-count tell": ("OL62", "p = torch.ones(1 << 10)\n    n = n if p.vdot(p).item() == 1024.0 else n - 1", ""),
    "a counter in freed heap memory": ("PF11", "s = torch.empty(8192, dtype=torch.int64)\n"
                                                "    seen = s[4096].item() == 7340033\n    s[4096] = 7340033", ""),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_s30_construct_is_refused(name: str) -> None:
    rule, body, extra = BAD[name]
    found = blocking(src(body, extra))
    assert rule in found, (name, found)


HONEST = {
    "device passed on": "z = torch.empty(n, D, dtype=x.dtype, device=x.device)",
    "device kept in a name and passed on": "device = x.device\n    z = torch.zeros(n, D, device=device)",
    "two arguments' devices compared": "assert x.device == y.device",
    "a device named in an error message": "if x.device != y.device:\n        raise ValueError(f'x is on {x.device}')",
    "contiguity asserted": "assert x.is_contiguous(), 'x must be contiguous'",
    "made contiguous unconditionally": "x = x.contiguous()",
    "a C-order ravel": "z = x.reshape(-1)\n    w = np.ascontiguousarray(np.zeros(4)).ravel(order='C')",
    "a class named in an error message": "if not isinstance(x, torch.Tensor):\n"
                                         "        raise TypeError(f'expected a tensor, got {type(x).__name__}')",
    "an axis named M": "assert str(D) != 'M'\n    z = np.zeros(4).reshape(2, 2)\n    names = ['M', 'm']",
    "a kernel cache keyed by dtype through a factory": "kk = _kern(x.dtype, x.shape[1])",
    "identity with None and dtypes": "assert x.dtype is torch.float32 or x.dtype is not None\n    z = None\n"
                                     "    assert z is None",
    "an f-string naming a value": "tag = f'rows {n} of {x.shape[1]}'",
    "a repr in an error message": "if n < 0:\n        raise ValueError(f'bad input {x!r} for {k}')",
    "a dtype parameter tested by identity": "dt = x.dtype\n    assert dt is torch.float32 or dt is torch.bfloat16",
    "made contiguous when it is not": "if not x.is_contiguous():\n        x = x.contiguous()",
    "refused when not contiguous": "if not x.is_contiguous():\n        raise ValueError('x must be contiguous')",
    "contiguous in an expression": "x = x if x.is_contiguous() else x.contiguous()",
    "numpy random with a literal seed": "r = np.random.default_rng(0).random()",
    "a contiguous-format allocation": "z = torch.empty_like(x, memory_format=torch.contiguous_format)",
    "an empty buffer read after a method filled it": "z = torch.empty_like(x)\n    z.copy_(x)\n"
                                                      "    assert z[0, 0] == x[0, 0]",
    "an empty buffer filled on the host first": "z = np.empty(4)\n    z[:] = 0\n    assert z[1] == 0",
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_the_honest_counterparts_pass(name: str) -> None:
    extra = "" if "_kern" not in HONEST[name] else ("_K = {}\n\n\ndef _kern(dt, cols):\n    key = (str(dt), cols)\n    if key in _K:\n        return _K[key]\n"
             "    _K[key] = k\n    return k\n")
    assert blocking(src(HONEST[name], extra)) == {}, name
