"""The Golden function inventory table and module markers, with line numbers and the module-assignment rule."""

from __future__ import annotations

from opdir_helpers import SILU

from runtime.opdir import load_op_dir
from runtime.opdir._inventory import parse_inventory, parse_module_markers

TABLE = """\
import numpy as np
# Golden function inventory
# | # | Golden operation | Shape transformation |
# |---|------------------|----------------------|
# | 1 | matmul(q, k^T)   | [B,T,K]@[B,K,T]->[B,T,T] |
# | 2 | softmax          | [B,T,T] -> [B,T,T] |
# | 3 | matmul(p, v)     | [B,T,T]@[B,T,K]->[B,T,K] |

def golden(q, k, v):
    # --- Module M1: scores ---
    s = q @ k.T
    # --- Module M2: output ---
    return s @ v
"""


def test_silu_inventory_rows_and_lines() -> None:
    rows = load_op_dir(SILU).inventory()
    assert [r.index for r in rows] == [1, 2, 3, 4]
    assert rows[1].operation == "sigmoid: 1 / (1 + exp(-xf))" and rows[1].shape == "[B,D] -> [B,D]"
    assert [r.line for r in rows] == [4, 5, 6, 7]
    assert all(r.module == 1 for r in rows)  # no markers anywhere: single module


def test_markers_with_lines() -> None:
    markers, problems = parse_module_markers(TABLE)
    assert problems == []
    assert [(m.module, m.role, m.line) for m in markers] == [(1, "scores", 10), (2, "output", 12)]


def test_markers_only_in_code_leave_rows_unassigned() -> None:
    rows, problems = parse_inventory(TABLE)
    assert problems == []
    assert [(r.index, r.module, r.line) for r in rows] == [(1, None, 5), (2, None, 6), (3, None, 7)]


def test_module_column_decides() -> None:
    text = TABLE.replace("| # | Golden operation | Shape transformation |",
                         "| # | Golden operation | Shape transformation | Module |")
    text = text.replace("[B,T,T] |\n# | 3", "[B,T,T] | M1 |\n# | 3").replace("->[B,T,K] |", "->[B,T,K] | 2 |")
    text = text.replace("->[B,T,T] |\n# | 2", "->[B,T,T] | M1 |\n# | 2")
    rows, problems = parse_inventory(text)
    assert problems == []
    assert [r.module for r in rows] == [1, 1, 2]


def test_markers_inside_table_assign_rows_below_them() -> None:
    text = TABLE.replace("# | 1 |", "# --- Module M1: scores ---\n# | 1 |").replace(
        "# | 3 |", "# --- Module M2: output ---\n# | 3 |")
    rows, problems = parse_inventory(text)
    assert problems == []
    assert [(r.index, r.module) for r in rows] == [(1, 1), (2, 1), (3, 2)]
    assert rows[2].line == 9


def test_missing_inventory_is_a_problem() -> None:
    rows, problems = parse_inventory("import numpy as np\n\ndef golden(x):\n    return x\n")
    assert rows == []
    assert problems[0].field == "inventory" and "no '# Golden function inventory' header" in problems[0].message


def test_bad_rows_reported_with_lines() -> None:
    text = TABLE.replace("# | 2 | softmax", "# | two | softmax").replace("# | 3 |", "# | 1 |")
    rows, problems = parse_inventory(text)
    assert [(p.line, p.message) for p in problems] == [
        (6, "row number must be a positive integer, got 'two'"),
        (7, "row number 1 is used twice"),
    ]
    assert [r.index for r in rows] == [1, 1]


def test_marker_numbering_and_malformed_markers() -> None:
    text = TABLE.replace("# --- Module M2: output ---", "# --- Module M3: output ---")
    _, problems = parse_module_markers(text)
    assert len(problems) == 1 and "without gaps, found M1, M3" in problems[0].message
    _, problems = parse_module_markers(TABLE.replace("# --- Module M2: output ---", "# -- Module 2 output"))
    assert problems[0].line == 12 and "malformed module marker" in problems[0].message
