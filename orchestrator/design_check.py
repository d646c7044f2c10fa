"""The deterministic design check (ARCHITECTURE §4 ``design_check``).

Why here and not in an agent: the design is frozen once approved and every later stage file is checked
against module_interfaces.yaml, so its shape must be proven by code. This module checks what the
orchestrator relies on (yaml schema and sources, module count vs DESIGN.md and the complexity decision,
boundary names present in golden.py) and adds the blocking findings of ``runtime.lint`` stage "design"
when that package is available.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

log = logging.getLogger(__name__)

_DECISION = re.compile(r"module_count\s*[:=]\s*(\d+)")
_REQUIRED = ("schema_version", "op", "primary_inputs", "modules", "final_outputs")


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
    try:
        data = yaml.safe_load(ymlp.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        return DesignCheck(ok=False, problems=[f"module_interfaces.yaml is not valid YAML: {exc}"])
    if not isinstance(data, dict):
        return DesignCheck(ok=False, problems=["module_interfaces.yaml must be a mapping"])
    for key in _REQUIRED:
        if key not in data:
            problems.append(f"module_interfaces.yaml: missing top-level key '{key}'")
    if problems:
        return DesignCheck(ok=False, problems=problems)
    prim = [str(p.get("name")) for p in data.get("primary_inputs") or [] if isinstance(p, dict)]
    modules = data.get("modules") or []
    if not isinstance(modules, list) or not modules:
        return DesignCheck(ok=False, problems=["module_interfaces.yaml: 'modules' must be a non-empty list"])
    produced: dict[int, list[str]] = {}
    facts_mods: list[dict] = []
    for pos, mod in enumerate(modules, start=1):
        if not isinstance(mod, dict):
            problems.append(f"modules[{pos}] must be a mapping")
            continue
        mid = mod.get("id")
        if mid != pos:
            problems.append(f"modules[{pos}]: id must be {pos} (ids contiguous from 1), got {mid!r}")
        for inp in mod.get("inputs") or []:
            src = str(inp.get("source", ""))
            name = str(inp.get("name", ""))
            if src == "primary":
                if name not in prim:
                    problems.append(f"module {pos}: input '{name}' is not a primary input")
            else:
                m = re.fullmatch(r"module_(\d+)", src)
                if not m or int(m.group(1)) >= pos or name not in produced.get(int(m.group(1)), []):
                    problems.append(f"module {pos}: input '{name}' has invalid source '{src}'")
        outs = [str(o.get("name")) for o in mod.get("outputs") or [] if isinstance(o, dict)]
        if not outs:
            problems.append(f"module {pos}: declares no outputs")
        produced[pos] = outs
        facts_mods.append({"id": pos, "name": str(mod.get("name", f"M{pos}")), "outputs": outs})
    n = len(modules)
    for fo in data.get("final_outputs") or []:
        m = re.fullmatch(r"module_(\d+)", str(fo.get("source", "")))
        if not m or int(m.group(1)) > n or str(fo.get("name")) not in produced.get(int(m.group(1)), []):
            problems.append(f"final output '{fo.get('name')}' has invalid source '{fo.get('source')}'")
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
        from runtime.lint import blocking, lint_paths  # type: ignore[attr-defined]
    except ImportError:
        return []
    try:
        findings = lint_paths([op_dir / "DESIGN.md", op_dir / "module_interfaces.yaml"], stage="design",
                              op_dir=op_dir)
        return [f"{f.rule_id} {Path(str(f.file)).name}:{f.line}: {f.message}" for f in blocking(findings)]
    except Exception as exc:  # a lint crash must not pass a design silently
        log.exception("design lint crashed")
        return [f"design lint could not run: {exc}"]
