"""Unseen drawing version 20 (red team round 33, session 43): str values golden.py never writes beside the parameter.

Version 19 ran a str attribute at the literals golden.py compares it with (``kind == "gelu_tanh"``, ``mode in ("a",
"b")``, a ``match``, a dict literal indexed by it). Round 33 wrote golden.py the other usual ways - a ``dict(silu=...,
gelu_tanh=...)`` table read with ``.get(kind)``, ``mode not in MODES`` and ``for name, fn in TABLE: if name == mode`` -
and a wrapper taking ``kind`` / ``mode`` and ignoring it passed every seed (``tests/redteam/test_round33_s43.py`` runs
the kernels). Here: what the analysis finds from version 20, that version 19 finds what it found (its draws do not
move) and that version 19's values keep their place ahead of the new ones. AST only: no case runs.

Also from version 20: an int that sizes an ``expand`` as well as a reshape (llada2_gate_select's ``num_expert_group``:
``scores.view(n, g, -1)`` and the group mask ``.expand(n, g, e // g)``) is a shape int (``IntRole.shape_only``), and a
shape int is kept at the SPEC's value by an input's literal dim only (the 8 of llada2's [N, 8] top-k output, and its
p0 size of 8 rows, kept it before). A GroupNorm whose golden broadcasts its group statistics back
(``fixture_s43/group_norm``, ``np.broadcast_to``) let a kernel built for the SPEC's 8 groups pass every seed of
version 19.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime import pyast
from runtime.opdir import load_op_dir
from runtime.opdir._intattrs import int_attribute_roles, string_attribute_values
from runtime.opdir._spec import parse_spec_text
from runtime.opdir._unseen import (
    UNSEEN_VERSION,
    int_attribute_cases,
    string_attribute_cases,
    varied_ints,
    varied_strings,
)

ROOT = Path(__file__).resolve().parents[2]
S43 = ROOT / "tests" / "redteam" / "fixture_s43"
S42 = ROOT / "tests" / "redteam" / "fixture_s42"

WIDE = {
    "tuple_constant": ('MODES = ("sum", "mean", "max")\n\n\ndef golden(x, mode="sum"):\n'
                       '    if mode not in MODES:\n        raise ValueError(mode)\n    return x\n',
                       ["sum", "mean", "max"]),
    "frozenset_constant": ('KINDS = frozenset(["a", "b"])\n\n\ndef golden(x, kind="a"):\n'
                           '    assert kind in KINDS\n    return x\n', ["a", "b"]),
    "dict_call_get": ('import numpy as np\n\nACT = dict(tanh=np.tanh, exp=np.exp)\n\n\ndef golden(x, act="tanh"):\n'
                      '    return ACT.get(act)(x)\n', ["tanh", "exp"]),
    "dict_call_subscript": ('import numpy as np\n\nACT = dict([("tanh", np.tanh), ("exp", np.exp)])\n\n\n'
                            'def golden(x, act="tanh"):\n    return ACT[act](x)\n', ["tanh", "exp"]),
    "dict_literal_get": ('import numpy as np\n\nACT = {"tanh": np.tanh, "exp": np.exp}\n\n\n'
                         'def golden(x, act="tanh"):\n    return ACT.get(act, np.tanh)(x)\n', ["tanh", "exp"]),
    "loop_pairs": ('import numpy as np\n\nTABLE = (("sum", np.sum), ("max", np.max))\n\n\ndef golden(x, mode="sum"):\n'
                   '    for name, fn in TABLE:\n        if name == mode:\n            return fn(x)\n'
                   '    raise ValueError(mode)\n', ["sum", "max"]),
    "loop_items": ('import numpy as np\n\nTABLE = {"sum": np.sum, "max": np.max}\n\n\ndef golden(x, mode="sum"):\n'
                   '    return next(f for k, f in TABLE.items() if k == mode)(x)\n', ["sum", "max"]),
    "loop_names": ('MODES = ["a", "b", "c"]\n\n\ndef golden(x, kind="a"):\n'
                   '    assert any(kind == m for m in MODES)\n    return x\n', ["a", "b", "c"]),
    "local_constant": ('def golden(x, kind="a"):\n    known = ("a", "b")\n    if kind not in known:\n'
                       '        raise ValueError(kind)\n    return x\n', ["a", "b"]),
    "named_str": ('GELU = "gelu"\n\n\ndef golden(x, kind="silu"):\n    return -x if kind == GELU else x\n', ["gelu"]),
    "keys_call": ('ACT = {"a": 1, "b": 2}\n\n\ndef golden(x, kind="a"):\n    assert kind in ACT.keys()\n'
                  '    return x * ACT[kind]\n', ["a", "b"]),
    "helper": ('MODES = ("p", "q")\n\n\ndef _check(k):\n    assert k in MODES\n\n\ndef golden(x, kind="p"):\n'
               '    _check(kind)\n    return x\n', ["p", "q"]),
    "prefix_stays_open": ('def golden(x, kind="gelu"):\n    return x if kind.startswith("gelu") else -x\n', []),
    "other_param_untouched": ('MODES = ("a", "b")\n\n\ndef golden(x, kind="z", other="a"):\n'
                              '    assert other in MODES\n    return x\n', []),
}


def _name(source: str) -> str:
    return source.split("def golden(x, ")[1].split("=")[0]


@pytest.mark.parametrize("case", sorted(WIDE))
def test_version_20_finds_the_values_golden_names_through_a_constant_a_table_or_a_loop(case: str) -> None:
    source, want = WIDE[case]
    tree, name = pyast.parse(source), _name(source)
    assert string_attribute_values(tree, [name], 20) == {name: want}
    narrow = string_attribute_values(tree, [name], 19)[name]
    assert not narrow or case == "keys_call", narrow  # version 19 saw none of these (but ACT[kind]'s literal keys)


def test_version_19_values_keep_their_place_ahead_of_the_new_ones() -> None:
    source = ('MODES = ("m1", "m2", "m3", "m4")\n\n\ndef golden(x, mode="m0"):\n    assert mode in MODES\n'
              '    if mode == "lit":\n        return -x\n    return x\n')
    tree = pyast.parse(source)
    assert string_attribute_values(tree, ["mode"], 19) == {"mode": ["lit"]}
    assert string_attribute_values(tree, ["mode"], 20) == {"mode": ["lit", "m1", "m2", "m3", "m4"]}


def test_the_round_33_fixture_ops_get_their_other_values_from_version_20() -> None:
    assert UNSEEN_VERSION >= 20
    for op_dir, want in ((S43 / "act_table", {"kind": ["gelu_tanh"]}),
                         (S43 / "row_reduce", {"mode": ["mean", "max"]})):
        op = load_op_dir(op_dir)
        names = list(op.spec.attrs)
        assert varied_strings(op.spec, names, names, op.golden_tree, 19) == {}
        strings = varied_strings(op.spec, names, names, op.golden_tree, 20)
        assert strings == want
        cases = string_attribute_cases(op.spec, op.cases(), strings, 0, 100, 20)
        assert {c.dims["B"] for c in cases} == {64, 45, 1}  # the first SPEC shape, the tail shape, the decode row
        assert len(cases) == 3 * sum(len(v) for v in want.values())


@pytest.mark.parametrize("op", ["activation", "scale_out"])
def test_version_19_ops_draw_the_same_str_cases_under_version_20(op: str) -> None:
    spec_op = load_op_dir(S42 / op)
    names = list(spec_op.spec.attrs)
    s19 = varied_strings(spec_op.spec, names, names, spec_op.golden_tree, 19)
    assert s19 and varied_strings(spec_op.spec, names, names, spec_op.golden_tree, 20) == s19
    for seed in (0, 11, 12345):
        assert string_attribute_cases(spec_op.spec, spec_op.cases(), s19, seed, 50, 19) == \
            string_attribute_cases(spec_op.spec, spec_op.cases(), s19, seed, 50, 20)


# --------------------------------------------------------------------------------------------- expand sizes

GATE = ("import torch\n\n\ndef ref(s, top_k, topk_group, num_expert_group):\n    n = s.shape[0]\n"
        "    g = s.view(n, num_expert_group, -1).amax(dim=-1)\n    idx = torch.topk(g, k=topk_group, dim=-1)[1]\n"
        "    m = torch.zeros_like(g).scatter_(1, idx, 1)\n"
        "    m = m.unsqueeze(-1).expand(n, num_expert_group, s.shape[1] // num_expert_group).reshape(n, -1)\n"
        "    return torch.topk(s.masked_fill(~m.bool(), float('-inf')), k=top_k, dim=-1)[1]\n\n\n"
        "def golden(s, top_k=8, topk_group=4, num_expert_group=8):\n"
        "    return ref(s, top_k, topk_group, num_expert_group)\n")


@pytest.mark.parametrize(("source", "shape_only"), [
    (GATE, True),
    ("import numpy as np\n\n\ndef golden(x, g=4):\n    b, d = x.shape\n"
     "    m = x.reshape(b, g, -1).max(-1, keepdims=True)\n    return x - np.broadcast_to(m, (b, g, d // g)).reshape(b, d)\n",
     True),
    ("def golden(x, g=4):\n    return x.expand(g)\n", False),  # one argument of a method: not a shape of several
    ("def golden(x, g=4):\n    return x.expand(x.shape[0], g)[:, :g]\n", False),  # a slice too
])
def test_an_int_sizing_an_expand_and_a_reshape_is_shape_only_from_version_20(source: str, shape_only: bool) -> None:
    (role,) = int_attribute_roles(pyast.parse(source), ["num_expert_group" if "num_expert_group" in source
                                                        else "g"]).values()
    assert role.shape_only is shape_only, (role.stays, role.reshapes, role.expands)
    assert not role.reshape_only  # version 19 kept every one of these at the SPEC's value


def test_the_expanded_group_norm_varies_its_groups_from_version_20() -> None:
    op = load_op_dir(S43 / "group_norm")
    names = list(op.spec.attrs)
    assert varied_ints(op.spec, names, names, op.golden_tree, 19) == {}
    ints = varied_ints(op.spec, names, names, op.golden_tree, 20)
    assert ints == {"num_groups": "shape"}
    groups = {int(c.attrs["num_groups"]) for c in int_attribute_cases(op.spec, op.cases(), ints, 0, 100, 20)}
    assert {16, 32} <= groups and groups & {2, 4}


def _group_spec(inputs: str, outputs: str, p0: str) -> str:
    return ("---\nop_name: t\ninputs:\n" + inputs + "outputs:\n" + outputs + "dynamic_axes: [B]\np0_shapes:\n" + p0
            + "supported_dtypes: [fp32]\ntolerance:\n  fp32: {atol: 1.0e-5, rtol: 1.0e-5}\ng: 8\n---\n")


GROUPS = "def golden(x, g=8):\n    b, d = x.shape\n    return x.reshape(b, g, d // g).sum(-1)\n"
X = "  - {name: x, shape: [B, 256], dtype: fp32, range: [-1.0, 1.0]}\n"


@pytest.mark.parametrize(("inputs", "outputs", "p0", "v19", "v20"), [
    (X, "  - {name: y, shape: [B, 8], dtype: fp32}\n", "  - {B: 64}\n", {}, {"g": "shape"}),  # an output's width
    (X, "  - {name: y, shape: [B, G], dtype: fp32}\n", "  - {B: 8, G: 8}\n", {}, {"g": "shape"}),  # a p0 size
    (X + "  - {name: w, shape: [8], dtype: fp32, range: [0.5, 1.5]}\n", "  - {name: y, shape: [B, G], dtype: fp32}\n",
     "  - {B: 64, G: 8}\n", {}, {}),  # a [G] weight: a kernel may read the group count from it
])
def test_a_shape_int_is_kept_by_an_input_dim_only_from_version_20(inputs: str, outputs: str, p0: str, v19: dict,
                                                                  v20: dict) -> None:
    spec = parse_spec_text(_group_spec(inputs, outputs, p0))
    tree = pyast.parse(GROUPS)
    assert varied_ints(spec, ["g"], ["g"], tree, 19) == v19
    assert varied_ints(spec, ["g"], ["g"], tree, 20) == v20
