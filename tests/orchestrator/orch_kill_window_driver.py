"""Run the orchestrator in a child process that kills itself (SIGKILL) inside the checkpoint write that follows
the first node named ``argv[4]``: that node has finished, its writes are handed to the saver, nothing of it is
committed yet (the window :class:`orchestrator.store.checkpoints.RunSaver` widened)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from orch_support import fixed_clock, make_verifier  # noqa: E402

from orchestrator import api  # noqa: E402
from orchestrator.adapters.scripted import ScriptedAgents  # noqa: E402
from orchestrator.store.checkpoints import RunSaver  # noqa: E402

if __name__ == "__main__":
    op_dir, script, run_id, node = sys.argv[1:5]
    orig = RunSaver.put

    def put(self, config, checkpoint, metadata, new_versions):  # noqa: ANN001, ANN202
        if checkpoint["channel_values"].get("node") == node and self._held:
            sys.stdout.write(f"killed before the checkpoint after {node}\n")
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        return orig(self, config, checkpoint, metadata, new_versions)

    RunSaver.put = put  # type: ignore[method-assign]
    api.run(op_dir, api.RunOptions(approve="auto", run_id=run_id),
            inject=api.Injected(agents=ScriptedAgents(script), verifier=make_verifier(), clock=fixed_clock))
