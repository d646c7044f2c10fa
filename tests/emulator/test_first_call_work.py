"""Session 39's first-call savings keep their meaning: the pruning walk step (`_astutil.push_children`) pushes every
child ``ast.iter_child_nodes`` gives but the leaf singletons it promises to skip, and a plain torch tensor argument
is converted without a torch function mode on the stack seeing the conversion's tensor calls."""

import ast
from pathlib import Path

import numpy as np
import pytest

from runtime.emulator._astutil import push_children

SOURCES = sorted((Path(__file__).parent / "corpus").glob("*.py")) + [Path(ast.__file__)]
_LEAF_BASES = (ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_push_children_is_iter_child_nodes_without_leaf_singletons(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        got: list[ast.AST] = []
        push_children(node, got.append)
        want = [] if type(node) is ast.Constant else \
            [c for c in ast.iter_child_nodes(node) if not isinstance(c, _LEAF_BASES)]
        assert [id(c) for c in got] == [id(c) for c in want], ast.dump(node)[:200]


def test_a_plain_torch_argument_is_read_without_the_function_mode() -> None:
    torch = pytest.importorskip("torch")
    from torch.overrides import TorchFunctionMode

    from runtime.emulator._frontend import to_numpy_view

    seen: list[str] = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    b = torch.zeros(2, 4, dtype=torch.bfloat16)
    with Spy():
        a = to_numpy_view(x, "x")
        v = to_numpy_view(b, "b")
        seen_plain = list(seen)
        p = to_numpy_view(torch.nn.Parameter(x.clone(), requires_grad=False), "p")  # a subclass: dispatched as before
    assert seen_plain == []
    assert seen, "a tensor subclass's calls still reach the mode"
    a[0, 0] = 7.0  # the view shares the tensor's memory
    assert x[0, 0].item() == 7.0
    assert v.shape == (2, 4) and str(v.dtype) == "bfloat16" and np.all(v.astype(np.float32) == 0)
    assert p.shape == (2, 3)
