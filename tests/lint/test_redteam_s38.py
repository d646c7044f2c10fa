"""Red team s38: a wrapper that re-strides its inputs as dense rows (``x.as_strided(x.shape, (D, 1))``, "no copy") is
the identity on the C-contiguous inputs verification passes and reads the wrong rows of a caller's ``qkv[:, :D]`` -
it reads no layout, so PF04's layout reads did not see it (``tests/redteam/test_round24_s38.py``). PF04 refuses every
call that lays memory out with strides of its own; the honest ways to a contiguous input stay allowed."""

from __future__ import annotations

import pytest
from test_redteam_s20 import blocking
from test_redteam_s30 import src

BAD = {
    "method": "x = x.as_strided(x.shape, (D, 1))",
    "torch function": "x = torch.as_strided(x, (n, D), (D, 1))",
    "numpy stride tricks": "x = np.lib.stride_tricks.as_strided(x, (n, D), (4 * D, 4))",
    "in place": "x = x.detach().as_strided_((n, D), (D, 1))",
    "resize": "x = x.detach().resize_(n * D).view(n, D)",
    "resize_as": "x = x.detach().resize_as_(y)",
    "bound first": "f = torch.as_strided\n    x = f(x, (n, D), (D, 1))",
}
GOOD = {
    "contiguous": "x = x.contiguous()",
    "reshape": "x = x.reshape(n, D)",
    "view": "x = x.contiguous().view(n, D)",
    "ascontiguousarray": "x = torch.from_numpy(np.ascontiguousarray(x.numpy()))",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_restriding_an_input_is_refused(name: str) -> None:
    found = blocking(src(BAD[name]))
    assert any("strides of its own" in m for m in found.get("PF04", [])), (name, found)


@pytest.mark.parametrize("name", sorted(GOOD))
def test_making_an_input_contiguous_is_not_restriding(name: str) -> None:
    found = blocking(src(GOOD[name]))
    assert not any("strides of its own" in m for ms in found.values() for m in ms), (name, found)


def test_from_import_is_refused_too() -> None:
    text = src("x = as_strided(x, (n, D), (D, 1))").replace("import torch\n", "import torch\nfrom torch import as_strided\n",
                                                            1)
    assert any("strides of its own" in m for m in blocking(text).get("PF04", []))
