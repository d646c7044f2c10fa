"""SPEC ``ties: unspecified`` (mutation sweep s30): the gym's llada2_gate_select, unmodified, failed every
verification - verification drew tied inputs and the kernel's top-k picked other tied experts than torch's, and its
scores tie in the golden's bf16 where the kernel's fp32 tells them apart. For such a SPEC no tied rows are drawn and
a top-k's ids may differ where the values they pick agree."""

from __future__ import annotations

import numpy as np
import pytest

from orchestrator.adapters.gym._real import _picks_among_ties
from runtime.compare import compare_outputs
from runtime.opdir._cases import BANDS, Case
from runtime.opdir._inputs import apply_special_values
from runtime.opdir._spec import Spec, TensorSpec
from runtime.verify._engine import tie_equivalent


def _leaves(outs: list[np.ndarray], golden: list[np.ndarray]):
    return [compare_outputs(a, b, atol=1e-3, rtol=1e-3, prefix=f"output[{j}]")[0]
            for j, (a, b) in enumerate(zip(outs, golden, strict=True))]


def test_ids_that_pick_equal_values_are_a_tie_and_ids_that_pick_other_values_are_not() -> None:
    ids = np.array([[3, 7, 1]], dtype=np.int32)
    values = np.array([[0.9, 0.5, 0.5]], dtype=np.float32)
    swapped = np.array([[3, 1, 7]], dtype=np.int32)  # the two tied experts in the other order
    leaves = tie_equivalent(_leaves([swapped, values], [ids, values]), [ids, values], [swapped, values],
                            rtol=1e-3)
    assert all(leaf.all_close for leaf in leaves) and leaves[0].out_of_tolerance_count == 2
    cut = np.array([[3, 7, 4]], dtype=np.int32)  # expert 4 ties expert 1 at the cut (a value left out)
    assert tie_equivalent(_leaves([cut, values], [ids, values]), [ids, values], [cut, values], rtol=1e-3)[0].all_close
    wrong = np.array([[0.9, 0.5, 0.2]], dtype=np.float32)  # another id and another value: a wrong pick
    leaves = tie_equivalent(_leaves([cut, wrong], [ids, values]), [ids, values], [cut, wrong], rtol=1e-3)
    assert not leaves[0].all_close and not leaves[1].all_close


def test_ids_of_other_values_are_wrong_even_when_the_values_are_right() -> None:
    """Red team s31d: values from a top-k, ids from an ascending argsort (every id wrong, every value right) passed -
    any id leaf was forgiven beside a close value leaf. Only ids that depart where the golden's values tie are."""
    ids = np.array([[5, 2, 9, 0], [1, 3, 0, 2]], dtype=np.int32)
    values = np.array([[0.9, 0.7, 0.4, 0.1], [0.8, 0.6, 0.3, 0.2]], dtype=np.float32)
    smallest = np.array([[0, 9, 2, 5], [2, 0, 3, 1]], dtype=np.int32)
    leaves = tie_equivalent(_leaves([smallest, values], [ids, values]), [ids, values], [smallest, values],
                            rtol=1e-3)
    assert not leaves[0].all_close
    twice = np.array([[5, 2, 9, 9], [1, 3, 0, 2]], dtype=np.int32)  # the last id repeated: never a tie
    assert not tie_equivalent(_leaves([twice, values], [ids, values]), [ids, values], [twice, values], rtol=1e-3)[0].all_close


def test_a_spec_without_the_declaration_judges_ties() -> None:
    spec = Spec(op_name="k", inputs=[TensorSpec(name="x", shape=["B", 16], dtype="T")],
                outputs=[TensorSpec(name="y", shape=["B", 4], dtype="int32")], supported_dtypes=["fp32"],
                tolerance={"fp32": {"atol": 0.0, "rtol": 0.0}})
    assert spec.ties == "judged"
    assert spec.model_copy(update={"ties": "unspecified"}).ties == "unspecified"
    with pytest.raises(ValueError):
        Spec.model_validate({**spec.model_dump(exclude={"attrs"}), "ties": "sometimes"})


@pytest.mark.parametrize("rows", [1, 64])
def test_no_tied_rows_are_drawn_when_ties_are_unspecified(rows: int) -> None:
    t = TensorSpec(name="x", shape=["B", 32], dtype="T", range=(-1.0, 1.0))
    case = Case(name="c", dims={"B": rows}, dtype="fp32", seed=5, band=BANDS[0], special=True)
    drawn = np.random.default_rng(1).uniform(-1, 1, (rows, 32)).astype(np.float32)
    judged = apply_special_values(t, case, 0, drawn)
    free = apply_special_values(t, case, 0, drawn, ties=False)

    def partly_tied(a: np.ndarray) -> int:  # rows holding a repeated value without being constant
        return sum(1 for r in a.reshape(-1, 32) if 1 < len(np.unique(r)) < 32)

    assert partly_tied(judged) >= 1 and partly_tied(free) == 0


def test_the_gym_import_declares_ties_only_for_indices_picked_by_a_sort() -> None:
    ints = {"outputs": [{"name": "ids", "dtype": "int32"}, {"name": "w", "dtype": "fp32"}]}
    floats = {"outputs": [{"name": "w", "dtype": "fp32"}]}
    golden = "def golden(s):\n    _, ids = torch.topk(s, k=8, dim=-1)\n    return ids, s.gather(1, ids)\n"
    assert _picks_among_ties(golden, ints) and not _picks_among_ties(golden, floats)
    assert not _picks_among_ties("def golden(x):\n    return x.argmaxish\n", ints)
