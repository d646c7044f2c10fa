"""The orchestrator graph (ARCHITECTURE §4) — wiring only; nodes and routing live in their own modules.

intake -> design -> design_check -> gate_design -> plan_stages -> implement <-> verify / debug -> audit
-> gate_module -> ... -> cleanup -> verify_final -> gate_final -> report, with gate_blocked reachable from
every place that can exhaust a budget. ``build_graph()`` validates the wiring at compile time.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from orchestrator.core import routing
from orchestrator.core.nodes.audit import audit
from orchestrator.core.nodes.cleanup import cleanup
from orchestrator.core.nodes.debug import debug
from orchestrator.core.nodes.design import design
from orchestrator.core.nodes.design_check import design_check
from orchestrator.core.nodes.gates import gate_blocked, gate_design, gate_final, gate_module
from orchestrator.core.nodes.implement import implement
from orchestrator.core.nodes.intake import intake
from orchestrator.core.nodes.perf import after_perf, perf
from orchestrator.core.nodes.perf_gates import (
    after_gate_perf_deliver,
    after_gate_perf_start,
    gate_perf_deliver,
    gate_perf_start,
)
from orchestrator.core.nodes.plan_stages import plan_stages
from orchestrator.core.nodes.report import report
from orchestrator.core.nodes.verify import verify
from orchestrator.core.nodes.verify_final import verify_final
from orchestrator.core.services import Services
from orchestrator.core.state import ForgeState

NODES = {
    "intake": intake, "design": design, "design_check": design_check, "gate_design": gate_design,
    "plan_stages": plan_stages, "implement": implement, "verify": verify, "debug": debug, "audit": audit,
    "gate_module": gate_module, "cleanup": cleanup, "verify_final": verify_final, "gate_final": gate_final,
    "gate_blocked": gate_blocked, "report": report,
    "gate_perf_start": gate_perf_start, "perf": perf, "gate_perf_deliver": gate_perf_deliver,
}

_BRANCHES = {
    "intake": (routing.after_intake, ["design", "design_check"]),
    "design": (routing.after_design, ["design", "design_check", "gate_blocked"]),
    "design_check": (routing.after_design_check, ["design", "gate_design", "plan_stages", "gate_blocked"]),
    "gate_design": (routing.after_gate_design, ["plan_stages", "design"]),
    "implement": (routing.after_implement, ["verify", "implement", "gate_blocked"]),
    "verify": (routing.after_verify, ["audit", "implement", "debug", "gate_blocked"]),
    "audit": (routing.after_audit, ["gate_module", "cleanup", "implement", "gate_blocked"]),
    "gate_module": (routing.after_gate_module, ["implement", "cleanup"]),
    "cleanup": (routing.after_cleanup, ["verify_final", "gate_final"]),
    "verify_final": (routing.after_verify_final, ["gate_final", "gate_blocked"]),
    "gate_final": (routing.after_gate_final, ["report", "implement", "gate_perf_start"]),
    "gate_perf_start": (after_gate_perf_start, ["perf", "report"]),
    "perf": (after_perf, ["perf", "gate_perf_deliver"]),
    "gate_perf_deliver": (after_gate_perf_deliver, ["report"]),
    "gate_blocked": (routing.after_gate_blocked, ["design", "implement", "report"]),
}

GATE_NODES = ("gate_design", "gate_module", "gate_final", "gate_blocked", "gate_perf_start", "gate_perf_deliver")

MODULE_STEPS = ("implement", "verify", "debug", "audit")
"""The nodes of one module's attempt loop (the progress line shows them with the module and its attempt)."""
MODULE_NODES = frozenset((*MODULE_STEPS, "gate_module", "gate_blocked"))
"""Every node that works on one module - its steps and the gates that stop on it; the others are the design before
the modules, cleanup and delivery after them (the run's timeline shows a module beside these only)."""


def build_graph() -> StateGraph[ForgeState, Services, ForgeState, ForgeState]:
    """The uncompiled builder (validated when compiled)."""
    g = StateGraph(ForgeState, context_schema=Services)
    for name, fn in NODES.items():
        g.add_node(name, fn)
    g.add_edge(START, "intake")
    g.add_edge("plan_stages", "implement")
    g.add_edge("debug", "implement")
    g.add_edge("report", END)
    for name, (fn, targets) in _BRANCHES.items():
        g.add_conditional_edges(name, fn, {t: t for t in targets})
    return g


_COMPILED: list = []


def compile_graph(checkpointer=None):
    """Compile (LangGraph validates nodes and edges here) - once per process; each run gets a copy bound to its
    own checkpointer (compiling inspects every node function's bytecode: ~0.1-0.3 s, paid once, not per run)."""
    if not _COMPILED:
        _COMPILED.append(build_graph().compile())
    return _COMPILED[0].copy({"checkpointer": checkpointer})
