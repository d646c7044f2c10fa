"""The operator-directory contract: SPEC.md + golden.py -> spec, cases, inputs, golden runs, complexity.

Public surface (docs/INTERFACES.md "runtime.opdir")::

    op = load_op_dir("workspace/silu")          # raises OpDirError(.problems)
    op.spec, op.cases(), op.make_inputs(case), op.inventory(), op.module_markers()
    run_golden(op, case) -> GoldenRun           # golden.py in its own process, intermediates captured
    with golden_server(): ...                   # ... a fork of one golden process per run instead
    complexity(op) -> Complexity                # module_count and L0/L1 from golden.py
    intake(op_dir) -> IntakeReport              # everything checked, nothing written
"""

from runtime.opdir._cases import BANDS, TAIL_MULTIPLE, Case
from runtime.opdir._complexity import Complexity, complexity, complexity_from_signals
from runtime.opdir._golden_runner import GOLDEN_CASE_TIMEOUT_S, GoldenRun, run_golden, run_golden_cases
from runtime.opdir._golden_server import GoldenServer, golden_server
from runtime.opdir._inputs import band_values
from runtime.opdir._intake import GoldenSummary, IntakeReport, intake
from runtime.opdir._inventory import InventoryRow, ModuleMarker
from runtime.opdir._opdir import OpDir, load_op_dir
from runtime.opdir._problems import GoldenError, OpDirError, Problem, closest_dir_hint, enclosing_op_dir_hint
from runtime.opdir._spec import CASE_DTYPE, Spec, TensorSpec, Tolerance, parse_spec_text

__all__ = [
    "BANDS",
    "CASE_DTYPE",
    "GOLDEN_CASE_TIMEOUT_S",
    "TAIL_MULTIPLE",
    "Case",
    "Complexity",
    "GoldenError",
    "GoldenRun",
    "GoldenServer",
    "GoldenSummary",
    "IntakeReport",
    "InventoryRow",
    "ModuleMarker",
    "OpDir",
    "OpDirError",
    "Problem",
    "Spec",
    "TensorSpec",
    "Tolerance",
    "band_values",
    "closest_dir_hint",
    "enclosing_op_dir_hint",
    "complexity",
    "complexity_from_signals",
    "golden_server",
    "intake",
    "load_op_dir",
    "parse_spec_text",
    "run_golden",
    "run_golden_cases",
]
