"""The verification authority: ``verify(op_dir, target)`` is the only thing that can advance a module.

See ``_engine`` for the protocol (spec/verification.md), ``_report`` for the report and ``runtime.sandbox``
for how candidate code is confined. Usage::

    from runtime.verify import verify
    report = verify("workspace/silu", "workspace/silu/silu_impl.py")
    report.verdict, report.report_hash, report.memory_row()
"""

from runtime.verify._engine import VerifySettings, VerifyUsageError, verify
from runtime.verify._report import CaseReport, ErrorInfo, LintSection, SandboxSection, Verdict, VerifyReport

__all__ = [
    "CaseReport",
    "ErrorInfo",
    "LintSection",
    "SandboxSection",
    "Verdict",
    "VerifyReport",
    "VerifySettings",
    "VerifyUsageError",
    "verify",
]
