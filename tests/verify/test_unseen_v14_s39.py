"""Unseen drawing version 14 (red team s38 "accident2", session 39): the int attributes golden() uses as a count, an
exponent, a bound or a scale run at other whole values; an int that names an axis, an index, a shape, a dtype or a
flag, or whose use is not recognised, stays (``tests/redteam/test_round26_s38.py`` holds the kernels that passed
every verification before: right only at ``step: 1``, ``window: 8``, ``iters: 20``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from runtime import pyast
from runtime.opdir import OpDirError, load_op_dir
from runtime.opdir._intattrs import int_attribute_roles
from runtime.opdir._spec import parse_spec_text
from runtime.opdir._unseen import (
    INT_TILE,
    attribute_cases,
    int_attribute_cases,
    int_values,
    unseen_cases,
    varied_attributes,
    varied_ints,
    vary_unseen_attributes,
)
from runtime.verify._engine import _golden_keywords

ROOT = Path(__file__).resolve().parents[2]
ACC2 = ROOT / "tests" / "redteam" / "fixture_s38acc2"
SEEDS = (0, 1, 7, 11, 12345)


def _role(source: str, name: str) -> tuple[str | None, list[str]]:
    role = int_attribute_roles(pyast.parse(source), [name])[name]
    return role.kind, role.stays


# --------------------------------------------------------------------------------------------- the classification

VARIES = {
    "count": ("def golden(x, iters=3):\n    for _ in range(int(iters)):\n        x = x / x.sum(-1, keepdims=True)\n"
              "    return x\n", "iters"),
    "count_max": ("def golden(x, n=20):\n    for _ in range(max(n - 1, 0)):\n        x = x * 0.5\n    return x\n", "n"),
    "exponent": ("import numpy as np\n\n\ndef golden(m, beta1=0.9, step=1):\n    f = np.float32\n"
                 "    if int(step) != step or step < 1:\n        raise ValueError(f'step {step}')\n"
                 "    bc1 = f(1.0 - beta1 ** step)\n    return m / bc1\n", "step"),
    "exponent_pow": ("import math\n\n\ndef golden(x, p=3):\n    return x * math.pow(0.5, p)\n", "p"),
    "bound": ("import numpy as np\n\n\ndef golden(s, window=8):\n    i = np.arange(s.shape[0])[:, None]\n"
              "    j = np.arange(s.shape[1])[None, :]\n    keep = (j <= i) & (j > i - int(window))\n"
              "    return np.where(keep, s, 0)\n", "window"),
    "bound_alias": ("import numpy as np\n\n\ndef golden(s, window=8):\n    w = int(window) - 1\n"
                    "    i = np.arange(s.shape[0])[:, None]\n    return np.where(i - w < 3, s, 0)\n", "window"),
    "bound_triu": ("import torch\n\n\ndef golden(x, w=4):\n    return torch.triu(torch.from_numpy(x), diagonal=-w).numpy()\n",
                   "w"),
    "scale": ("import numpy as np\n\n\ndef golden(x, zp=3):\n    return (x - zp).astype(np.float32)\n", "zp"),
    "scale_derived": ("def golden(x, n=3):\n    s = 1.0 / n\n    y = x * s\n    return y\n", "n"),
}
KIND = {"count": "count", "count_max": "count", "exponent": "exponent", "exponent_pow": "exponent", "bound": "bound",
        "bound_alias": "bound", "bound_triu": "bound", "scale": "scale", "scale_derived": "scale"}

STAYS = {
    "dim_keyword": ("import torch\n\n\ndef golden(x, dim=1):\n    return torch.sum(torch.from_numpy(x), dim=dim).numpy()\n",
                    "dim", "dim="),
    "axis_positional": ("import numpy as np\n\n\ndef golden(x, axis=1):\n    return np.sum(x * 2, axis)\n", "axis",
                        "sum()"),
    "method_dim": ("def golden(x, d=1):\n    return x.sum(d)\n", "d", "sum()"),
    "softmax_dim": ("import torch\n\n\ndef golden(x, d=1):\n    return torch.softmax(torch.from_numpy(x) * 2, d).numpy()\n",
                    "d", "softmax()"),
    "concat": ("import numpy as np\n\n\ndef golden(x, y, ax=1):\n    return np.concatenate([x, y], ax)\n", "ax",
               "concatenate()"),
    "slice": ("def golden(x, k=3):\n    return x[:, :k] * 2\n", "k", "index"),
    "index": ("def golden(x, k=3):\n    return x[k] * 2\n", "k", "index"),
    "reshape": ("def golden(x, groups=4):\n    return x.reshape(x.shape[0], groups, -1).mean(-1)\n", "groups",
                "reshape()"),
    "derived_shape": ("def golden(x, k=4):\n    d = x.shape[-1] // k\n    return x.reshape(-1, k, d).sum(-1)\n", "k",
                      "reshape()"),
    "alias_shape": ("def golden(x, n=4):\n    m = n * 2\n    return x.reshape(-1, m)\n", "n", "reshape()"),
    "arange": ("import numpy as np\n\n\ndef golden(x, n=3):\n    return x[np.arange(n)]\n", "n", "arange()"),
    "topk": ("import torch\n\n\ndef golden(x, k=4):\n    return torch.topk(torch.from_numpy(x), k=k).values.numpy()\n",
             "k", "k="),
    "flag": ("import numpy as np\n\n\ndef golden(x, causal=1):\n    if causal:\n        x = np.tril(x)\n    return x\n",
             "causal", "truth test"),
    "selector": ("def golden(x, mode=2):\n    return x * 2 if mode == 2 else x\n", "mode", "equality"),
    "shape_match": ("def golden(x, n=64):\n    if x.shape[1] != n:\n        raise ValueError('n')\n    return x * n\n",
                    "n", "equality"),
    "dtype": ("import numpy as np\n\n\ndef golden(x, bits=8):\n    return x.astype(np.float32).view(bits)\n", "bits",
              "view()"),
    "clip": ("import numpy as np\n\n\ndef golden(x, qmax=127):\n    return np.clip(np.round(x), -qmax - 1, qmax)\n",
             "qmax", "clip()"),
    "unknown_call": ("from foo import bar\n\n\ndef golden(x, n=3):\n    return bar(x, n)\n", "n", "bar()"),
    "returned": ("def golden(x, n=3):\n    return x, n\n", "n", "returned"),
    "roll": ("import numpy as np\n\n\ndef golden(x, shift=2):\n    return np.roll(x, shift, axis=-1) * 1.0\n", "shift",
             "roll()"),
    "kwargs": ("def golden(x, **kw):\n    return x * kw['n']\n", "n", "not a parameter"),
}


@pytest.mark.parametrize("case", sorted(VARIES))
def test_an_int_golden_counts_raises_to_bounds_or_scales_by_varies(case: str) -> None:
    source, name = VARIES[case]
    kind, stays = _role(source, name)
    assert (kind, stays) == (KIND[case], [])


@pytest.mark.parametrize("case", sorted(STAYS))
def test_an_int_that_is_an_axis_an_index_a_shape_a_flag_or_unknown_stays(case: str) -> None:
    """The honest kinds that must stay: a kernel for the SPEC's axis, tile, layout or flag is right."""
    source, name, why = STAYS[case]
    kind, stays = _role(source, name)
    assert kind is None and any(why in s for s in stays), stays


def test_one_veto_wins_over_every_other_use() -> None:
    """An int that is a count and also a slice bound stays: a false refusal is worse than a miss."""
    source = "def golden(x, n=3):\n    for _ in range(n):\n        x = x * 2\n    return x[:, :n]\n"
    assert _role(source, "n")[0] is None


def test_the_analysis_follows_helpers_of_golden_py() -> None:
    """The gym imports call their golden through a helper: mhc_sinkhorn's ``num_iters`` is a count there, and
    llada2_gate_select's ``top_k`` / ``topk_group`` / ``num_expert_group`` a top-k's k and a view's size."""
    mhc = ("import torch\n\n\ndef mhc(x, eps=1e-6, num_iters=20):\n    h = torch.softmax(x, dim=-1) + eps\n"
           "    for _ in range(max(num_iters - 1, 0)):\n        h = h / (h.sum(dim=-2, keepdim=True) + eps)\n"
           "    return h\n\n\ndef golden(x, eps=1e-06, num_iters=20):\n    return mhc(torch.from_numpy(x), eps, num_iters)\n")
    assert _role(mhc, "num_iters") == ("count", [])
    gate = ("import torch\n\n\ndef ref(s, top_k, topk_group, num_expert_group, factor):\n    n = s.shape[0]\n"
            "    g = s.view(n, num_expert_group, -1).amax(dim=-1)\n    idx = torch.topk(g, k=topk_group, dim=-1)[1]\n"
            "    _, ids = torch.topk(s + idx.sum(), k=top_k, dim=-1)\n    if top_k > 1:\n        s = s / 2\n"
            "    return ids, s * factor\n\n\ndef golden(s, top_k=8, topk_group=4, num_expert_group=8, factor=2.5):\n"
            "    return ref(s, top_k, topk_group, num_expert_group, factor)\n")
    roles = int_attribute_roles(pyast.parse(gate), ["top_k", "topk_group", "num_expert_group"])
    assert all(r.kind is None for r in roles.values()), {k: r.stays for k, r in roles.items()}


# --------------------------------------------------------------------------------------------- which ints vary

def _spec(extra: str) -> str:
    return ("---\nop_name: t\ninputs:\n  - {name: x, shape: [B, D], dtype: fp32, range: [-1.0, 1.0]}\n"
            "outputs:\n  - {name: y, shape: [B, D], dtype: fp32}\ndynamic_axes: [B]\np0_shapes:\n  - {B: 64, D: 32}\n"
            "supported_dtypes: [fp32]\ntolerance:\n  fp32: {atol: 1.0e-5, rtol: 1.0e-5}\n" + extra + "---\n")


COUNTS = ("def golden(x, n=3, m=5, flag=True, z=0, neg=-2, d=32):\n    for _ in range(n + m + z + neg + d):\n"
          "        x = x * 0.5\n    return x if flag else -x\n")


def test_varied_ints_are_positive_ints_both_sides_take_not_bools_zero_or_a_dim_size() -> None:
    spec = parse_spec_text(_spec("n: 3\nm: 5\nflag: true\nz: 0\nneg: -2\nd: 32\n"))
    tree = pyast.parse(COUNTS)
    every = ["n", "m", "flag", "z", "neg", "d"]
    assert varied_ints(spec, every, every, tree) == {"n": "count", "m": "count"}  # d == D: a size it may read
    assert varied_ints(spec, ["n"], every, tree) == {"n": "count"}  # the wrapper does not take m: the SPEC fixes it
    assert varied_ints(spec, every, ["m"], tree) == {"m": "count"}
    assert varied_ints(spec, every, every, tree, version=13) == {}
    # version 13 and earlier draw no int: varied_attributes is floats only, as before
    assert varied_attributes(spec, every, every, version=14) == []


def test_a_spec_opts_ints_in_and_out() -> None:
    spec = parse_spec_text(_spec("n: 3\nm: 5\nd: 32\nvary_ints: [d]\nfixed_ints: [n]\n"))
    tree = pyast.parse(COUNTS.replace("flag=True, z=0, neg=-2, ", "").replace(" + z + neg", "")
                       .replace("x if flag else -x", "x"))
    assert varied_ints(spec, ["n", "m", "d"], ["n", "m", "d"], tree) == {"m": "count", "d": "count"}
    assert "vary_ints" not in spec.attrs and "fixed_ints" not in spec.attrs
    # an opted-in int golden does not use recognisably gets a scale's values
    forced = parse_spec_text(_spec("k: 3\nvary_ints: [k]\n"))
    assert varied_ints(forced, ["k"], ["k"], pyast.parse("def golden(x, k=3):\n    return x[:, :k]\n")) == {"k": "scale"}


@pytest.mark.parametrize(("extra", "message"), [
    ("n: 3\nvary_ints: [m]\n", "'m' is not an attribute"),
    ("n: 3.0\nvary_ints: [n]\n", "not an int"),
    ("n: true\nfixed_ints: [n]\n", "not an int"),
    ("n: 0\nvary_ints: [n]\n", "only a positive int"),
    ("n: 3\nvary_ints: [n]\nfixed_ints: [n]\n", "both vary_ints and fixed_ints"),
])
def test_the_opt_in_and_out_lists_are_checked(extra: str, message: str) -> None:
    with pytest.raises(OpDirError) as err:
        parse_spec_text(_spec(extra))
    assert any(message in p.message for p in err.value.problems), err.value.problems


# --------------------------------------------------------------------------------------------- the values

@pytest.mark.parametrize("v", [1, 2, 3, 8, 16, 20, 100])
@pytest.mark.parametrize("kind", ["count", "exponent", "bound", "scale"])
def test_int_values_are_two_other_positive_whole_numbers_in_their_ranges(kind: str, v: int) -> None:
    rng = np.random.default_rng(5)
    for _ in range(40):
        a, b = int_values(kind, v, rng)
        assert type(a) is int and type(b) is int and a >= 1 and b >= 1 and len({a, b, v}) == 3
        if kind == "count":
            assert (1 <= a <= min(3, v - 1) if v >= 2 else a in (2, 3)) and v < b <= v + 4
        elif kind == "exponent":
            assert 2 <= a <= 5 and v < b <= v + 4
        elif kind == "bound":
            assert (1 <= a < v if v >= 2 else 2 <= a <= INT_TILE)
            assert (INT_TILE < b < 2 * INT_TILE if v <= INT_TILE else v < b <= v + INT_TILE)
        else:
            assert (a < v if v >= 3 else True) and b > v


def test_the_red_teams_kernels_meet_the_values_that_catch_them() -> None:
    """step 2..5 (a power forgotten at step 1), a window under 8 and one wider than a 16-column tile, iters 1..3
    (a Sinkhorn one round short or columns first agrees with 20 rounds to 1e-7)."""
    for seed in SEEDS:
        rng = np.random.default_rng(seed)
        assert int_values("exponent", 1, rng)[0] in range(2, 6)
        w_small, w_wide = int_values("bound", 8, rng)
        assert w_small < 8 and w_wide > 16
        assert int_values("count", 20, rng)[0] <= 3


# --------------------------------------------------------------------------------------------- the cases

def _op_ints(op_dir: Path) -> tuple:
    op = load_op_dir(op_dir)
    return op, varied_ints(op.spec, list(op.spec.attrs), _golden_keywords(op), op.golden_tree)


@pytest.mark.parametrize(("op_name", "name", "kind"), [("adamw_step", "step", "exponent"),
                                                       ("window_fill", "window", "bound"),
                                                       ("sinkhorn20", "iters", "count"),
                                                       ("sinkhorn", "iters", "count")])
def test_int_cases_run_each_set_on_a_spec_shape_and_a_tail_and_say_the_value(op_name: str, name: str,
                                                                             kind: str) -> None:
    op, ints = _op_ints(ACC2 / op_name)
    assert ints == {name: kind}
    for seed in SEEDS:
        cases = int_attribute_cases(op.spec, op.cases(), ints, seed, 40)
        assert len(cases) == 4 and [c.special for c in cases] == [False, False, True, True]
        assert all(c.unseen and c.name.startswith(f"unseen{40 + i}-") and c.name.endswith(f"-{name}{c.attrs[name]}")
                   for i, c in enumerate(cases))
        values = [c.attrs[name] for c in cases]
        assert values[:2] == values[2:] and len(set(values[:2])) == 2 and op.spec.attrs[name] not in values
        assert cases[0].dims == op.spec.p0_shapes[0] and cases[2].tail
        seeds = {c.seed for c in cases}
        assert len(seeds) == len(cases) and not seeds & {c.seed for c in op.cases()}
        assert int_attribute_cases(op.spec, op.cases(), ints, seed, 40, version=13) == []
        # the last unseen case of every shape takes the int sets in turn
        shaped = vary_unseen_attributes(op.spec, unseen_cases(op.spec, op.cases(), seed), [], seed, ints=ints)
        moved = [c for c in shaped if c.attrs]
        assert moved and all(set(c.attrs) == {name} and c.name.endswith(f"-{name}{c.attrs[name]}") for c in moved)
        assert {c.attrs[name] for c in moved} == set(values[:2])


def test_int_and_float_sets_share_the_rotation_and_leave_the_floats_as_they_were() -> None:
    op, ints = _op_ints(ACC2 / "adamw_step")
    names = varied_attributes(op.spec, list(op.spec.attrs), _golden_keywords(op))
    assert "step" not in names and "beta1" in names
    for seed in SEEDS:
        plain = unseen_cases(op.spec, op.cases(), seed)
        floats = vary_unseen_attributes(op.spec, plain, names, seed)
        both = vary_unseen_attributes(op.spec, plain, names, seed, ints=ints)
        assert [c.model_copy(update={"attrs": {k: v for k, v in c.attrs.items() if k != "step"},
                                     "name": c.name.rsplit("-step", 1)[0]}) for c in both] == floats
        assert all("step" in c.attrs for c in both if c.attrs)
        assert vary_unseen_attributes(op.spec, plain, names, seed, version=13, ints=ints) == \
            vary_unseen_attributes(op.spec, plain, names, seed, version=13)
        # the float attribute cases do not move either
        assert attribute_cases(op.spec, op.cases(), names, seed, 30, version=14) == \
            attribute_cases(op.spec, op.cases(), names, seed, 30, version=13)


@pytest.mark.parametrize("op_name", ["adamw_step", "window_fill", "sinkhorn20", "irope", "quant_rows"])
def test_version_14_shape_cases_are_version_13s(op_name: str) -> None:
    op = load_op_dir(ACC2 / op_name)
    for seed in SEEDS:
        assert unseen_cases(op.spec, op.cases(), seed, version=14) == unseen_cases(op.spec, op.cases(), seed,
                                                                                   version=13)


def test_a_static_spec_runs_its_int_cases_on_its_one_shape(tmp_path: Path) -> None:
    """A gym import has static shapes (mhc_sinkhorn: [8, 4, 4], ``num_iters: 20``)."""
    op_dir = tmp_path / "sk"
    shutil.copytree(ACC2 / "sinkhorn20", op_dir)
    text = (op_dir / "SPEC.md").read_text()
    text = text.replace("[B, N, N]", "[8, 4, 4]").replace("dynamic_axes: [B]\n", "")
    text = text.replace("p0_shapes:\n  - {B: 16, N: 8}\n  - {B: 13, N: 8}       # 13 matrices leave a 5-matrix tail "
                        "for an 8-matrix tile\n", "")
    (op_dir / "SPEC.md").write_text(text)
    op, ints = _op_ints(op_dir)
    assert not op.spec.p0_shapes and ints == {"iters": "count"}
    cases = int_attribute_cases(op.spec, op.cases(), ints, 3, 10)
    assert [c.dims for c in cases] == [{}, {}] and [c.name.split("-")[1] for c in cases] == ["static", "static"]
