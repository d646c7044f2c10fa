"""cleanup: final stage file -> ``<op>_impl.py`` (L1, mechanical); L0 already wrote it and only gets README."""

from __future__ import annotations

from langgraph.runtime import Runtime

from orchestrator.core.cleanup import cleanup_source
from orchestrator.core.delivery import write_readme
from orchestrator.core.nodes._common import dev, node, op_path, read_text, services
from orchestrator.core.perf import request_update as perf_request_update
from orchestrator.core.second_opinion import attach as attach_second_opinion
from orchestrator.core.state import FinalState, ForgeState
from orchestrator.store.paths import sha256_file
from runtime.interfaces import parse_interfaces
from runtime.stages import final_file
from runtime.verdicts import Verdict


@node("cleanup")
def cleanup(state: ForgeState, runtime: Runtime) -> dict:
    svc = services(runtime)
    root = op_path(state)
    op = state["op_name"]
    mods = state["modules"]
    last = mods[-1]
    if state.get("level") == "L0":
        final = FinalState(verdict=Verdict.PASS, report_hash=last.get("report_hash"), evidence=last.get("evidence"),
                           impl_sha256=last.get("verified_sha256"), file=final_file(op))
        attach_second_opinion(svc, dict(state), root, final_file(op), final)  # the real compiler, when there is one
        write_readme(root, state, final)
        return {"phase": "final", "final": final, **perf_request_update(svc),
                "dev_log": [dev(svc, "cleanup", "L0: README.md from SPEC.md", "written", "final gate")]}
    interfaces, _ = parse_interfaces(read_text(root / "module_interfaces.yaml"))  # approved, so valid
    text = cleanup_source(read_text(root / last["stage_file"]), op,
                          stage_file=last["stage_file"], evidence=str(last.get("evidence") or ""),
                          interfaces=interfaces)
    (root / final_file(op)).write_text(text, encoding="utf-8")
    return {"phase": "cleanup", "final": FinalState(file=final_file(op), impl_sha256=sha256_file(root / final_file(op))),
            "dev_log": [dev(svc, "cleanup", f"{last['stage_file']} -> {final_file(op)}",
                            "wrapper renamed, STUB lines removed", "final verification")]}
