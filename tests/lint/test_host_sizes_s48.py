"""OL62 and sizes in host code (session 48): a tile count computed through a helper or counted up with ``+=``.

Red team round 38 found an honest look-alike refused: ``def _tiles(n): return (n + TILE - 1) // TILE`` called as
``_tiles(x.shape[0])`` failed OL62 ("arithmetic on input `n`"), and so did ``t = n // TILE; t += 1`` in a wrapper,
while the same arithmetic written inline passed. A model writes both every day. These are sizes: every value the
name can hold is built from shapes and constants (``runtime/lint/_host_scalars.py``). The hostile side: the same
forms fed an array, a helper passed around instead of called, an input's alias counted up, still fail.
"""

from __future__ import annotations

import pytest

from runtime.lint import lint_source

KERNEL = '''import math

import numpy as np
import pypto

TILE = 16
D = 64
HALF = TILE // 2


def _kernel(tiles):
    @pypto.frontend.jit
    def silu_kernel(
        x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
        y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32),
    ):
        n = x.shape[0]
        pypto.set_vec_tile_shapes(TILE, D)
        for i in pypto.loop(tiles, name="rows", idx_name="i"):
            valid = (n - i * TILE).min(TILE)
            xt = pypto.view(x, [TILE, D], [i * TILE, 0], valid_shape=[valid, D])
            e = pypto.exp(pypto.mul(xt, -1.0))
            pypto.assemble(pypto.div(xt, pypto.add(e, 1.0)), [i * TILE, 0], y)

    return silu_kernel

HELPERS

def silu_wrapper(x):
    y = np.zeros_like(x)
    BODY
    _kernel(tiles)(x, y)
    return y
'''


def ol62(helpers: str, body: str) -> list[str]:
    source = KERNEL.replace("HELPERS", helpers).replace("    BODY", body)
    return [f.message for f in lint_source(source, "silu_impl.py", stage="final")
            if f.rule_id == "OL62" and f.status == "FAIL"]


HONEST = {
    "ceil_div": ("def ceil_div(a, b):\n    return (a + b - 1) // b\n",
                 "    tiles = ceil_div(x.shape[0], TILE)"),
    "tiles_helper": ("def _tiles(n):\n    return (n + TILE - 1) // TILE\n",
                     "    tiles = _tiles(x.shape[0])"),
    "keyword_and_default": ("def _tiles(n, tile=TILE):\n    return -(-n // tile)\n",
                            "    tiles = _tiles(n=len(x))"),
    "through_a_helper_chain": ("def _up(a, b):\n    return (a + b - 1) // b\n\n\ndef _tiles(n):\n"
                               "    return _up(n, TILE)\n", "    tiles = _tiles(x.shape[-1 + 1])"),
    "tail_counted_up": ("", "    n = x.shape[0]\n    tiles = n // TILE\n    if n % TILE:\n        tiles += 1"),
    "math_and_min": ("def _tiles(n):\n    t = math.ceil(n / TILE)\n    t += 0\n    return max(t, 1)\n",
                     "    tiles = _tiles(int(x.shape[0]) * 1)"),
    "module_constant": ("", "    tiles = x.shape[0] // HALF\n    tiles //= 2\n    tiles += x.shape[0] % TILE > 0"),
}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_sizes_computed_in_host_code_pass(name: str) -> None:
    helpers, body = HONEST[name]
    assert ol62(helpers, body) == []


HOSTILE = {
    # the helper is fed the input itself somewhere: its parameter holds an array
    "helper_fed_an_array": ("def _twice(v):\n    return v * 2\n",
                            "    tiles = _twice(x.shape[0])\n    x = _twice(x)"),
    # the helper is passed, not called: its callers are out of sight
    "helper_passed_around": ("def _twice(v):\n    return v * 2\n",
                             "    f = _twice\n    x = f(x)\n    tiles = _twice(x.shape[0])"),
    # called from module level: not proven
    "module_level_call": ("def _twice(v):\n    return v * 2\n\n\nTWO = _twice(1)\n",
                          "    tiles = x.shape[0] // TILE"),
    # an input's copy counted up in place
    "alias_counted_up": ("", "    tiles = x.shape[0] // TILE\n    z = x.copy()\n    z += 1"),
    # a size name rebound to input data loses the exemption
    "size_rebound_to_data": ("", "    tiles = x.shape[0] // TILE\n    tiles = x[0, 0]\n    tiles += 1"),
    # a loop variable is not a size (its values come from the iterable)
    "loop_target": ("", "    tiles = 1\n    for v in x:\n        v += 1"),
    # the wrapper verify calls is never a helper, whatever the file calls it with
    "wrapper_called_with_sizes": ("def _self_test():\n    return silu_wrapper(3)\n",
                                  "    tiles = x.shape[0] // TILE\n    x = x * 2"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_arrays_in_the_same_forms_still_fail(name: str) -> None:
    helpers, body = HOSTILE[name]
    assert ol62(helpers, body), name
