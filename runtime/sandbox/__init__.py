"""The sandbox that runs candidate (model-written) kernels for the verifier.

``run_candidate`` starts ``_runner.py`` in a confined child process (see ``_exec`` for the layers), passes
inputs as ``.npz`` files and reads back only arrays and a per-call record. Nothing the child reports can
change a verdict on its own: the parent compares against golden tensors the child never saw.
"""

from runtime.sandbox._exec import LAYERS, CandidateRun, RunOutput, SandboxError, SandboxPolicy, run_candidate

__all__ = ["LAYERS", "CandidateRun", "RunOutput", "SandboxError", "SandboxPolicy", "run_candidate"]
