"""Issue 30 items 2-3: block-wise comparison (memory bounded at real shapes), golden layouts, goldens as the gym
writes them (callee locals, re-bound names, torch subexpressions, in-place updates)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from runtime.bisect._analyzer import UPDATED, Analyzer, Golden
from runtime.bisect._compare import CHUNK, blocks, close, fit, mismatch_mask
from runtime.bisect._records import Rec
from runtime.bisect.report import _stats_whole, stats_of


def test_blocks_cover_every_element_once_and_stay_small() -> None:
    for shape in [(3, 700, 1000), (2, 3, 600, 1000), (5000, 300), (7,), ()]:
        seen = np.zeros(shape, dtype=np.int32)
        for ix in blocks(shape, chunk=CHUNK):
            seen[ix] += 1
            assert seen[ix].size <= CHUNK
        assert (seen == 1).all()


@pytest.mark.parametrize("shape", [(3, 700, 1000), (2, 3, 600, 1000), (5000, 300)])
def test_blockwise_statistics_equal_whole_array_statistics(shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32)
    b = a.copy()
    b.flat[123457] += 3.0
    b.flat[-1] = np.nan
    b.flat[:5] += 0.5
    s1 = stats_of(a, b, 1e-3, 1e-3, [1] * len(shape))
    s2 = _stats_whole(a, b, 1e-3, 1e-3, [1] * len(shape))
    assert s1.outliers == s2.outliers and s1.out_of_tolerance == s2.out_of_tolerance == 7
    assert s1.max_abs_diff == s2.max_abs_diff and abs(s1.mean_abs_diff - s2.mean_abs_diff) < 1e-12  # type: ignore[operator]
    assert close(a, a.copy(), 0, 0) and not close(a, b, 1e-3, 1e-3)
    assert mismatch_mask(a, b, 1e-3, 1e-3).sum() == 7


def test_outliers_of_a_wide_departure_are_picked_like_a_full_sort() -> None:
    """The outliers are the largest differences, ties in index order (``report._top``: a partition, not a sort of
    every departing element): the same as a stable sort, also with many ties and infinities."""
    from runtime.bisect.report import MAX_OUTLIERS, _top

    rng = np.random.default_rng(3)
    for key in [rng.integers(0, 5, 10_000).astype(np.float64), rng.standard_normal(5000),
                np.r_[np.full(50, np.inf), rng.random(3000)], np.ones(100)]:
        assert list(_top(key, MAX_OUTLIERS)) == list(np.argsort(-key, kind="stable")[:MAX_OUTLIERS])
    a = rng.standard_normal((1200, 1000)).astype(np.float32)
    b = a + np.round(rng.random(a.shape), 1).astype(np.float32)  # most elements depart, by tied amounts
    s1, s2 = stats_of(a, b, 1e-3, 1e-3), _stats_whole(a, b, 1e-3, 1e-3)
    assert s1.outliers == s2.outliers and s1.out_of_tolerance == s2.out_of_tolerance > CHUNK // 2


def test_close_on_large_arrays_sees_a_departure_anywhere() -> None:
    """``close`` rules most candidates out on a spread sample; a departure outside the sample still counts."""
    a = np.zeros((3000, 1000), np.float32)
    for where in [(0, 0), (1, 999), (2999, 5), (1500, 500)]:
        b = a.copy()
        b[where] = 1.0
        assert not close(a, b, 1e-3, 1e-3), where
    assert close(a, a + 1e-4, 1e-3, 0.0)


def test_fit_tells_a_constant_factor_from_an_unrelated_value() -> None:
    rng = np.random.default_rng(1)
    g = rng.standard_normal((64, 32)).astype(np.float32)
    corr, k = fit(g * 2.0, g)
    assert corr > 0.99 and k is not None and abs(k - 2.0) < 1e-6
    corr, k = fit(rng.standard_normal((64, 32)), g)
    assert corr < 0.3 and k is None


def test_golden_layouts_split_merge_and_permute() -> None:
    g = Golden({"s": np.zeros((1, 32, 1, 200), np.float32), "h": np.zeros((8, 4, 4), np.float32)},
               {"s": "intermediate", "h": "intermediate"}, 0.0, 0.0)
    assert [(lid, a.shape) for lid, a in g.layouts("s", (4, 8, 64))] == [("", (32, 1, 200)), ("split", (4, 8, 200))]
    assert ("split", (4, 8, 200)) in [(lid, a.shape) for lid, a in g.layouts("s", (1, 8, 64))]  # one KV head
    perm = [(lid, a.shape) for lid, a in g.layouts("h", (4, 4, 8))]
    assert ("axes(1, 2, 0)", (4, 4, 8)) in perm
    assert all(np.shares_memory(a, g.arrays[n]) for n, t in [("s", (4, 8, 64)), ("h", (4, 4, 8))]
               for _l, a in g.layouts(n, t))  # views, never copies


def _rec(seq: int, op: str, value: np.ndarray, **kw: object) -> Rec:
    return Rec(seq=seq, node=seq, op=op, file="k.py", line=10 + seq, iteration={"rows": 0}, value=value,
               valid_shape=list(value.shape), shape=list(value.shape), **kw)  # type: ignore[arg-type]


def test_a_permuted_golden_is_matched_by_value() -> None:
    """The kernel transposes ``[B, 4, 4]`` to ``[4, 4, B]``; its values match the golden in that layout."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((8, 4, 4)).astype(np.float32)
    h = np.exp(x)
    golden = Golden({"x": x, "h": h}, {"x": "input", "h": "intermediate"}, 1e-5, 1e-5)
    an = Analyzer(golden)
    an.add(_rec(0, "exp", np.exp(x).transpose(1, 2, 0).copy(), inputs=[]))
    an.finish()
    assert an.status[0] == "match" and an.matched[0][0] == "h" and an.lids[0].startswith("axes")


def test_in_place_update_is_compared_with_the_updated_golden() -> None:
    """``m`` is an input the golden updates in place: the kernel's write into ``m`` is compared with ``m (updated)``,
    never with the input's original values (a correct write would otherwise look wrong)."""
    m0 = np.arange(8, dtype=np.float32).reshape(2, 4)
    g = np.ones((2, 4), np.float32)
    m1 = 0.9 * m0 + 0.1 * g
    golden = Golden({"m": m0, "g": g, "m" + UPDATED: m1}, {"m": "input", "g": "input", "m" + UPDATED: "intermediate"},
                    1e-6, 1e-6)
    an = Analyzer(golden)
    an.begin_call([("m", m0), ("g", g)])
    an.add(_rec(0, "view", m0, offsets=[0, 0], source="m", inputs=[]))
    an.add(_rec(1, "mul", m1, inputs=[{"kind": "record", "seq": 0}]))
    an.add(_rec(2, "assemble", m1, offsets=[0, 0], target="m", inputs=[{"kind": "record", "seq": 1}]))
    an.finish()
    assert an.param_map["m"] == "m" and an.write_map["m"] == "m" + UPDATED
    assert an.status[2] == "match"


def _golden_child() -> object:
    path = Path(__file__).resolve().parents[2] / "runtime" / "opdir" / "_golden_child.py"
    spec = importlib.util.spec_from_file_location("_gc_under_test", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _capture(tmp_path: Path, source: str, args: list, deep: bool = True) -> list[tuple[str, object]]:
    gc = _golden_child()
    (tmp_path / "golden.py").write_text(source)
    module = gc._load_module(tmp_path / "golden.py")  # type: ignore[attr-defined]
    cap = gc._Capture(module.golden.__code__, str(tmp_path / "golden.py") if deep else None,  # type: ignore[attr-defined]
                      op_budget=64 * 1024**2)
    sys.settrace(cap.global_trace)
    try:
        with cap.ops():
            module.golden(*args)
    finally:
        sys.settrace(None)
        sys.modules.pop("golden", None)
    return [(k, np.asarray(v.numpy() if hasattr(v, "numpy") else v)) for k, v in cap.values()]


NUMPY_GOLDEN = """
import numpy as np
def _norm(x, eps):
    x = x.astype(np.float32)
    ms = (x * x).mean(-1, keepdims=True)
    return x / np.sqrt(ms + eps)
def vendor(a, m):
    fused = a * 2
    h = _norm(fused, 1e-6)
    g = _norm(h * 2, 1e-6)
    m *= 0.5
    for _ in range(3):
        h = h / 2
    return g + h
def golden(a, m):
    return vendor(a, m)
"""


def test_deep_capture_reads_callee_locals_rebinding_and_in_place_updates(tmp_path: Path) -> None:
    a, m = np.ones((2, 4), np.float32), np.ones((2, 4), np.float32)
    shallow = dict(_capture(tmp_path, NUMPY_GOLDEN, [a.copy(), m.copy()], deep=False))
    assert set(shallow) == {"a", "m"}  # the default: golden's own locals only (unchanged)
    got = dict(_capture(tmp_path, NUMPY_GOLDEN, [a.copy(), m.copy()]))
    assert {"fused", "ms", "h#1", "h", "g", "_norm.ms@2"} <= set(got), sorted(got)
    assert float(got["h#1"].ravel()[0]) == pytest.approx(1.0, rel=1e-5)  # first value of a re-bound name
    assert float(got["h"].ravel()[0]) == pytest.approx(0.125, rel=1e-5)  # its last
    assert float(got["m"].ravel()[0]) == 0.5  # an input updated in place: its updated values
    names = list(got)
    assert names.index("fused") < names.index("ms") < names.index("g")  # data-flow order


TORCH_GOLDEN = """
import torch
def vendor(x, eps=1e-5):
    mean_sq = torch.mean(x ** 2, dim=1, keepdim=True)
    rms = torch.sqrt(mean_sq + eps)
    return x / rms
def golden(x):
    return vendor(torch.from_numpy(x))
"""


def test_deep_capture_keeps_a_torch_goldens_unnamed_subexpressions(tmp_path: Path) -> None:
    pytest.importorskip("torch", reason="torch not installed (toolchain extra)")
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4)
    got = dict(_capture(tmp_path, TORCH_GOLDEN, [x]))
    assert {"mean_sq", "rms", "golden.py:5 add", "golden.py:4 pow"} <= set(got), sorted(got)
    np.testing.assert_allclose(got["golden.py:5 add"], (x ** 2).mean(1, keepdims=True) + 1e-5, rtol=1e-6)
    assert not any(k.endswith(" sqrt") for k in got)  # named by a local (rms): kept under that name only
