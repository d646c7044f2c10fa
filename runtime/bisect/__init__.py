"""First-divergence localization for PyPTO kernels (issue 9): ``bisect(op_dir, stage_file, case=None)``.

Two methods in one sandboxed, recorded emulator run: the *automatic* method maps every recorded op value to
golden intermediates (names, tile offsets from view/assemble geometry, data flow) and names the earliest op
that departs; the *checkpoint* method compares kernel parameters named like golden intermediates. The report
is sanitized and deterministic; ``report.to_agent_context()`` feeds the debugger agent.
"""

from runtime.bisect.api import BisectError, bisect
from runtime.bisect.report import BisectReport, CheckpointResult, OpFinding, OutputResult, Stats

__all__ = [
    "BisectError",
    "BisectReport",
    "CheckpointResult",
    "OpFinding",
    "OutputResult",
    "Stats",
    "bisect",
]
