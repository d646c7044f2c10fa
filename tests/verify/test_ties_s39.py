"""Red team s39 (``tests/redteam/test_round27_s39.py``, ``moe_tied_foreign_ids``): under ``ties: unspecified`` a
departing id was forgiven when the golden's *value* at its position tied with another value of the row - whatever
the id was. A top-8 that sent back a non-existent expert (the id negated) wherever two picked probabilities were
within 0.2% passed every seed. A departing id must now be one of the golden's ids whose value ties with the value at
its position (directly or along a chain of near-equal values), or, where the value ties with the row's last one, an
id the golden left out (a tie at the cut, at most 5% of rows)."""

from __future__ import annotations

import numpy as np

from runtime.compare import compare_outputs
from runtime.verify._engine import tie_equivalent

VALUES = np.array([[0.9, 0.5, 0.5, 0.3, 0.1]], dtype=np.float32)
IDS = np.array([[3, 7, 1, 4, 9]], dtype=np.int32)


def _close(ids: np.ndarray, values: np.ndarray = VALUES, want: np.ndarray = IDS, golden: np.ndarray = VALUES) -> bool:
    outs, gold = [ids, values], [want, golden]
    leaves = [compare_outputs(a, b, atol=1e-3, rtol=1e-3, prefix=f"output[{j}]")[0]
              for j, (a, b) in enumerate(zip(outs, gold, strict=True))]
    return all(leaf.all_close for leaf in tie_equivalent(leaves, gold, outs, rtol=1e-3))


def test_an_id_the_golden_left_out_is_wrong_inside_the_row() -> None:
    assert _close(np.array([[3, 1, 7, 4, 9]], dtype=np.int32))  # the two tied experts in the other order
    assert not _close(np.array([[3, -7, 1, 4, 9]], dtype=np.int32))  # a non-existent expert where 0.5 ties 0.5
    assert not _close(np.array([[3, 12, 1, 4, 9]], dtype=np.int32))  # another expert there, never picked


def test_a_golden_id_moved_to_a_value_it_does_not_tie_with_is_wrong() -> None:
    assert not _close(np.array([[3, 4, 1, 7, 9]], dtype=np.int32))  # expert 4 (0.3) at a 0.5 position


def test_a_chain_of_near_equal_values_is_one_tie_and_the_cut_still_counts() -> None:
    values = np.array([[0.9, 0.5, 0.4996, 0.4992, 0.1]], dtype=np.float32)  # 0.5 ~ 0.4996 ~ 0.4992, not 0.5 ~ 0.4992
    assert _close(np.array([[3, 4, 1, 7, 9]], dtype=np.int32), values, golden=values)
    assert _close(np.array([[3, 7, 1, 4, 11]], dtype=np.int32))  # expert 11 ties the last value: a tie at the cut
    chain_to_cut = np.array([[0.9, 0.5, 0.3, 0.1, 0.1]], dtype=np.float32)
    assert _close(np.array([[3, 7, 1, 11, 4]], dtype=np.int32), chain_to_cut, golden=chain_to_cut)
