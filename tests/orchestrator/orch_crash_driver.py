"""Run the orchestrator in a child process (the crash/resume test SIGKILLs it mid-module-loop)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from orch_support import fixed_clock, make_verifier  # noqa: E402

from orchestrator import api  # noqa: E402
from orchestrator.adapters.scripted import ScriptedAgents  # noqa: E402

if __name__ == "__main__":
    op_dir, script, run_id = sys.argv[1:4]
    api.run(op_dir, api.RunOptions(approve="auto", run_id=run_id),
            inject=api.Injected(agents=ScriptedAgents(script), verifier=make_verifier(), clock=fixed_clock))
