"""Adversarial review of round 25's lint relaxations (s38 "accident2"; ``tests/lint/test_honest_s38.py`` holds the
honest forms they admit). Holes found and closed:

- OL45 counted the kernel calls *in* each function once, however many times the wrapper called that function:
  ``_run(x[:h], y[:h]); _run(x[h:], y[h:])`` (a helper holding the one kernel call), the same with a def nested in
  the wrapper, a kernel call in a ``lambda`` bound to a name and called twice, and the call in a list comprehension
  (``[k(a, b) for a, b in parts]``: no ``for`` statement around it) each tiled on the host and passed. Round 25's
  factory-call form (``_kernel_for(dt)(a, b)``, "never calls" before) made the helper form reachable with a factory.
  Calls are now counted per run through the functions the wrapper calls by name, and a comprehension is a loop;
- PF11 read the kernel cache's key for arguments used whole, but not for parameters left *out*:
  ``_silu_kernel_for(dtype_name, t, steps)`` cached under ``dtype_name`` gave the decode kernel (one row, no loop)
  built by the first call to every later batch. Verification's first call is a full batch, so the fallback direction
  never showed (PASS on three seeds); the factory parameter ``t`` is the form round 25 admitted for OL48. A cache key
  must now reach every parameter the factory reads (``fixture_s36/adam_b1key``, a cache keyed on beta1 alone, was
  refused only numerically before; now by lint too).

Looked at and not a hole: a tile chosen inside the kernel from a dynamic dim (``32 if n > 64 else 16``,
``_TILES[n % 2]``, ``_TILES[int(n) % 2]``) passes lint but the emulator refuses it at trace time, as the device
does (F00002 "Not concrete value" / F00001 on every case: FAIL_RUNTIME); a host-side table or conditional keyed by
a shape choosing the factory's tile is a choice between kernels, the same as the decode branch's ``if``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runtime.lint import lint_source

CANDS = Path(__file__).resolve().parents[1] / "redteam" / "fixture_s38acc" / "candidates"
CALL = """    silu_kernel = _silu_kernel_for(x.dtype.name)
    silu_kernel(x, y)
    return y"""


def _rule(text: str, rule: str) -> list[str]:
    return [f.message for f in lint_source(text, "silu_impl.py", stage="final") if f.rule_id == rule
            and f.status == "FAIL"]


def _base() -> str:
    src = (CANDS / "silu_h_tile_ifexp.py").read_text(encoding="utf-8")
    assert CALL in src
    return src


def _wrapper(body: str, extra: str = "") -> str:
    return _base().replace(CALL, body) + extra


HOST_TILING = {
    "helper_twice": ("""    h = x.shape[0] // 2
    _run(x[:h], y[:h])
    _run(x[h:], y[h:])
    return y""", "\n\ndef _run(a, b):\n    _silu_kernel_for(a.dtype.name)(a, b)\n"),
    "helper_named_kernel_twice": ("""    h = x.shape[0] // 2
    _run(x[:h], y[:h])
    _run(x[h:], y[h:])
    return y""", "\n\ndef _run(a, b):\n    k = _silu_kernel_for(a.dtype.name)\n    k(a, b)\n"),
    "helper_of_helper": ("""    h = x.shape[0] // 2
    _halves(x, y, h)
    return y""", "\n\ndef _halves(x, y, h):\n    _run(x[:h], y[:h])\n    _run(x[h:], y[h:])\n"
                 "\n\ndef _run(a, b):\n    _silu_kernel_for(a.dtype.name)(a, b)\n"),
    "nested_def_twice": ("""    h = x.shape[0] // 2
    def run(a, b):
        _silu_kernel_for(a.dtype.name)(a, b)
    run(x[:h], y[:h])
    run(x[h:], y[h:])
    return y""", ""),
    "lambda_twice": ("""    h = x.shape[0] // 2
    run = lambda a, b: _silu_kernel_for(a.dtype.name)(a, b)  # noqa: E731
    run(x[:h], y[:h])
    run(x[h:], y[h:])
    return y""", ""),
    "recursion": ("""    if x.shape[0] > 64:
        silu_wrapper(x[64:])
    _silu_kernel_for(x.dtype.name)(x, y)
    return y""", ""),
}
HOST_LOOPS = {
    "list_comprehension": """    h = x.shape[0] // 2
    [_silu_kernel_for(x.dtype.name)(a, b) for a, b in ((x[:h], y[:h]), (x[h:], y[h:]))]
    return y""",
    "generator": """    h = x.shape[0] // 2
    k = _silu_kernel_for(x.dtype.name)
    any(k(a, b) for a, b in ((x[:h], y[:h]), (x[h:], y[h:])))
    return y""",
}


@pytest.mark.parametrize("name", sorted(HOST_TILING))
def test_ol45_a_kernel_called_twice_per_run_through_a_helper_is_a_finding(name: str) -> None:
    body, extra = HOST_TILING[name]
    msgs = _rule(_wrapper(body, extra), "OL45")
    assert any(re.search(r"calls the JIT kernel [2-9] times", m) for m in msgs), msgs


@pytest.mark.parametrize("name", sorted(HOST_LOOPS))
def test_ol45_a_kernel_called_in_a_comprehension_is_a_host_loop(name: str) -> None:
    msgs = _rule(_wrapper(HOST_LOOPS[name]), "OL45")
    assert any("inside a host loop" in m for m in msgs), msgs


def test_ol45_a_helper_called_in_a_host_loop_is_a_host_loop() -> None:
    src = _wrapper("""    for i in range(0, x.shape[0], 64):
        _run(x[i:i + 64], y[i:i + 64])
    return y""", "\n\ndef _run(a, b):\n    _silu_kernel_for(a.dtype.name)(a, b)\n")
    msgs = _rule(src, "OL45")
    assert any("inside a host loop" in m and "_run" in m for m in msgs), msgs


@pytest.mark.parametrize("body", [
    # one helper call per run
    """    _run(x, y)
    return y""",
    # a decode branch through the helper: one call on each path
    """    if x.shape[0] == 1:
        _run(x, y)
        return y
    _run(x, y)
    return y""",
    # a nested def called once
    """    def run(a, b):
        _silu_kernel_for(a.dtype.name)(a, b)
    run(x, y)
    return y""",
])
def test_ol45_a_helper_called_once_per_run_passes(body: str) -> None:
    src = _wrapper(body, "\n\ndef _run(a, b):\n    _silu_kernel_for(a.dtype.name)(a, b)\n")
    assert _rule(src, "OL45") == []


def _decode_factory() -> str:
    """silu_h_tile_ifexp with a decode kernel: the factory takes the tile and whether to loop, the wrapper makes a
    one-row, one-tile kernel for a single token and the looped 16-row kernel otherwise."""
    src = _base().replace('    t = 32 if dtype_name == "bfloat16" else TILE   # bf16 rows are half the bytes\n', "")
    src = src.replace("def _silu_kernel_for(dtype_name):", "def _silu_kernel_for(dtype_name, t, steps):")
    src = src.replace("for i in pypto.loop((n + t - 1) // t,", "for i in pypto.loop((n + t - 1) // t if steps else 1,")
    return src.replace(CALL, """    if x.shape[0] == 1:                     # decode: one row, one tile, no loop
        _silu_kernel_for(x.dtype.name, 1, 0)(x, y)
        return y
    _silu_kernel_for(x.dtype.name, TILE, 1)(x, y)
    return y""")


def test_pf11_a_kernel_cache_whose_key_leaves_out_a_factory_parameter_is_a_finding() -> None:
    src = _decode_factory()
    assert "if dtype_name in _KERNELS:" in src
    msgs = _rule(src, "PF11")
    assert any("leaves out its parameter `steps`" in m for m in msgs), msgs
    assert any("leaves out its parameter `t`" in m for m in msgs), msgs


@pytest.mark.parametrize(("old", "new"), [
    # the key names every parameter
    ("if dtype_name in _KERNELS:\n        return _KERNELS[dtype_name]", "if (dtype_name, t, steps) in _KERNELS:\n"
     "        return _KERNELS[(dtype_name, t, steps)]"),
    # through a local the key is built from
    ("    if dtype_name in _KERNELS:\n        return _KERNELS[dtype_name]",
     "    key = (dtype_name, t, steps)\n    if key in _KERNELS:\n        return _KERNELS[key]"),
])
def test_pf11_a_kernel_cache_keyed_by_every_parameter_passes(old: str, new: str) -> None:
    src = _decode_factory().replace(old, new)
    src = src.replace("_KERNELS[dtype_name] = silu_kernel",
                      "_KERNELS[key] = silu_kernel" if "key =" in new else "_KERNELS[(dtype_name, t, steps)] = "
                      "silu_kernel")
    assert "_KERNELS[dtype_name]" not in src
    assert _rule(src, "PF11") == []
    assert _rule(src, "OL48") == []


@pytest.mark.parametrize("name", ["silu_h_tile_ifexp", "silu_h_tile_dict", "silu_h_tile_closure",
                                  "silu_h_torch_two_kernels", "rms_h_decode_branch"])
def test_round25_honest_factories_stay_clean(name: str) -> None:
    src = (CANDS / f"{name}.py").read_text(encoding="utf-8")
    assert _rule(src, "PF11") == [] and _rule(src, "OL45") == []
