"""A golden local the golden throws away (``_, ids = torch.topk(...)``) is no golden value to match: a kernel
``gather`` from the wrong tensor equals the discarded top-k values (gym ``llada2_gate_select``, bug
``ll_gather_input``), and that "match" hid the bug. Also: a name merely starting with ``_`` is kept."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from runtime.bisect.api import _golden


def test_discarded_underscore_locals_are_not_golden_values() -> None:
    tol = SimpleNamespace(atol=1e-3, rtol=1e-3)
    op = SimpleNamespace(spec=SimpleNamespace(inputs=[SimpleNamespace(name="x")], tolerance={"fp32": tol}))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    mids = {"x": a, "_": a + 1, "_#1": a + 2, "ref._": a + 3, "_g": a + 4, "tw": a + 5}
    grun = SimpleNamespace(inputs=[a], intermediates=mids, outputs={"y": a * 2})
    g = _golden(op, grun, SimpleNamespace(dtype="fp32"))
    assert "_" not in g.arrays and "_#1" not in g.arrays and "ref._" not in g.arrays
    assert {"x", "_g", "tw", "y"} <= set(g.arrays)
