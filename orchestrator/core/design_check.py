"""The deterministic design check (ARCHITECTURE §4 ``design_check``).

Why here and not in an agent: the design is frozen once approved and every later stage file is checked
against module_interfaces.yaml, so its shape must be proven by code. This module checks what the
orchestrator relies on (yaml schema and sources, module count vs DESIGN.md and the complexity decision,
boundary names present in golden.py) and adds the blocking findings of ``runtime.lint`` stage "design".
The yaml itself is read by `runtime.interfaces` (the one model of it, shared with lint and the verifier).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from runtime.interfaces import parse_interfaces
from runtime.lint import blocking, lint_paths

log = logging.getLogger(__name__)

_DECISION = re.compile(r"module_count\s*[:=]\s*(\d+)")


class DesignFacts(BaseModel):
    """What the graph keeps from a design that passed the check."""

    module_count: int
    modules: list[dict] = Field(default_factory=list)
    """[{id, name, outputs: [names]}] in order."""
    primary_inputs: list[str] = Field(default_factory=list)


class DesignCheck(BaseModel):
    ok: bool
    problems: list[str] = Field(default_factory=list)
    facts: DesignFacts | None = None


def check_design(op_dir: Path, *, computed_module_count: int | None, rationale: str | None = None) -> DesignCheck:
    """Check DESIGN.md + module_interfaces.yaml in ``op_dir``; never raises for a bad design."""
    problems: list[str] = []
    design = op_dir / "DESIGN.md"
    ymlp = op_dir / "module_interfaces.yaml"
    if not design.is_file():
        problems.append("DESIGN.md is missing")
    if not ymlp.is_file():
        problems.append("module_interfaces.yaml is missing")
    if problems:
        return DesignCheck(ok=False, problems=problems)
    # SPEC agreement of the yaml is lint PF06's finding (below), so it is not asked for twice here
    model, problems = parse_interfaces(ymlp.read_text(encoding="utf-8"))
    if model is None:
        return DesignCheck(ok=False, problems=problems)
    n = len(model.modules)
    prim = model.primary_names
    facts_mods: list[dict[str, Any]] = [{"id": m.id, "name": m.name or f"M{m.id}", "outputs": [o.name for o in m.outputs]}
                  for m in model.modules]
    text = design.read_text(encoding="utf-8")
    decl = _DECISION.search(text)
    if not decl:
        problems.append("DESIGN.md does not state the decision 'module_count = N'")
    elif int(decl.group(1)) != n:
        problems.append(f"DESIGN.md says module_count = {decl.group(1)} but module_interfaces.yaml has {n} modules")
    if computed_module_count is not None and n != computed_module_count and not (rationale or "").strip():
        if "rationale" not in text.lower():
            problems.append(f"module_count {n} differs from the computed {computed_module_count} without a rationale")
    golden = (op_dir / "golden.py").read_text(encoding="utf-8") if (op_dir / "golden.py").is_file() else ""
    for mod in facts_mods[:-1]:  # boundary outputs of modules 1..N-1 must be golden intermediates
        for out in mod["outputs"]:
            if not re.search(rf"\b{re.escape(out)}\b", golden):
                problems.append(f"boundary '{out}' of module {mod['id']} is not a name in golden.py")
    problems.extend(_lint_design(op_dir))
    facts = DesignFacts(module_count=n, modules=facts_mods, primary_inputs=prim)
    return DesignCheck(ok=not problems, problems=problems, facts=facts if not problems else facts)


def _lint_design(op_dir: Path) -> list[str]:
    try:
        findings = lint_paths([op_dir / "DESIGN.md", op_dir / "module_interfaces.yaml"], stage="design",
                              op_dir=op_dir)
        return [f"{f.rule_id} {Path(str(f.file)).name}:{f.line}: {f.message}" for f in blocking(findings)]
    except Exception as exc:  # a lint crash must not pass a design silently
        log.exception("design lint crashed")
        return [f"design lint could not run: {exc}"]
