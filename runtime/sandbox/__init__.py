"""The sandbox that runs candidate (model-written) kernels, and the one subprocess runner of the project.

``run_candidate`` starts ``_runner.py`` confined by the operating system (Bubblewrap namespaces + seccomp where
available, see ``_proc``), sends it the request over stdin and reads back only framed arrays and per-call records
from a pipe, after the whole sandbox is dead. Nothing the child reports can change a verdict on its own: the parent
compares against golden tensors the child never saw. ``run_process`` is the same runner for trusted children
(the golden), with the same environment allow-list (``env_policy``).
"""

from runtime.sandbox._exec import LAYERS, CandidateRun, RunOutput, SandboxError, SandboxPolicy, run_candidate
from runtime.sandbox._proc import (
           ISOLATION_LEVELS,
           Isolation,
           Limits,
           ProcResult,
           isolation_level,
           private_dir,
           run_process,
)

__all__ = ["ISOLATION_LEVELS", "LAYERS", "CandidateRun", "Isolation", "Limits", "ProcResult", "RunOutput",
           "SandboxError", "SandboxPolicy", "isolation_level", "private_dir", "run_candidate", "run_process"]
