"""The delivered README.md, composed in one place (the three nodes that deliver call :func:`write_readme`).

Why one place: ``cleanup`` (an L0 operator), ``verify_final`` (L1) and the perf stage's delivery gate each
used to assemble the README from the base text, the real compiler's second opinion and the perf table; the
three copies could drift. The README is a delivered file: its bytes are a function of the run's state.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from orchestrator.core.cleanup import render_readme
from orchestrator.core.perf import PerfSummary
from orchestrator.core.second_opinion import SecondOpinion
from orchestrator.core.state import FinalState
from runtime.verdicts import Verdict

README = "README.md"


def compose_readme(state: Mapping[str, Any], final: FinalState, perf: PerfSummary | None = None) -> str:
    """README.md of the delivery: usage, shapes, tolerances and how it was verified (from SPEC.md and the
    final PASS), then the real compiler's second opinion when it ran on the delivered kernel (not when the
    perf stage delivered a variant: the opinion was about the first verified kernel), then the perf table."""
    level = str(state.get("level", "L1"))
    module_count = 1 if level == "L0" else (len(state.get("modules") or []) or 1)
    text = render_readme(str(state["op_name"]), dict(state.get("spec") or {}), level=level,
                         module_count=module_count, verdict=str(final.get("verdict") or Verdict.PASS.value),
                         evidence=str(final.get("evidence") or ""))
    sections = []
    variant = int((final.get("perf") or {}).get("delivered") or 0)
    raw = final.get("toolchain")
    if raw and variant == 0:
        sections.append(SecondOpinion.model_validate(raw).markdown())
    if perf is not None:
        sections.append(perf.markdown())
    for section in sections:
        if section:
            text = text.rstrip("\n") + "\n\n" + section
    return text


def write_readme(root: Path, state: Mapping[str, Any], final: FinalState, perf: PerfSummary | None = None) -> None:
    """Write the delivery README into the op dir."""
    (root / README).write_text(compose_readme(state, final, perf), encoding="utf-8")
