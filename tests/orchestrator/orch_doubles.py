"""A verifier test double (used only where a test names it; see ``conftest.verifier``).

It hashes the same inputs as ``runtime.verify`` and decides by the fault each bad fixture declares in its
docstring ("(bad: ... a lint failure)" / "a numeric failure"): the prepared wrong kernels are also really
wrong, so the real verifier reaches the same verdict for them.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from orchestrator.core.services import LintItem, VerifyOutcome


def _sha(p: Path) -> str | None:
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


class FakeVerifier:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    def __call__(self, op_dir: Path, target: str, *, previous_stage: str | None, reports_dir: Path) -> VerifyOutcome:
        self.calls.append((target, previous_stage))
        src = (op_dir / target).read_text(encoding="utf-8")
        hashes = {k: v for k in (target, "golden.py", "SPEC.md", "module_interfaces.yaml")
                  if (v := _sha(op_dir / k)) is not None}
        lint: list[LintItem] = []
        if "a lint failure" in src:
            line = next(i for i, s in enumerate(src.splitlines(), 1) if s.startswith("import os"))
            lint = [LintItem(rule_id="PF01", file=target, line=line, message="import os is not allowed")]
            verdict = "FAIL_LINT"
        elif "a numeric failure" in src:
            verdict = "FAIL_NUMERIC"
        else:
            verdict = "PASS"
        body = {"verdict": verdict, "target": target, "hashes": hashes}
        report_hash = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        body["report_hash"] = report_hash
        reports_dir.mkdir(parents=True, exist_ok=True)
        path = reports_dir / f"{report_hash}.json"
        path.write_text(json.dumps(body, sort_keys=True), encoding="utf-8")
        return VerifyOutcome(verdict=verdict, target=target, hashes=hashes, report_hash=report_hash,
                             report_path=str(path.relative_to(op_dir)), summary=f"double: {verdict}",
                             memory_row=f"| - | - | {target} | - | 1e-05 | 1e-05 | {verdict == 'PASS'} | - | - | "
                                        f"{verdict} {report_hash[:12]} |",
                             lint_blocking=lint, sanitized={"verdict": verdict})


def declared_fault(src: str) -> str | None:
    m = re.search(r"\(bad: [^)]*\)", src)
    return m.group(0) if m else None


class Recording:
    """Wraps a verifier function and records (target, previous_stage) of every call."""

    def __init__(self, fn) -> None:
        self.fn = fn
        self.calls: list[tuple[str, str | None]] = []

    def __call__(self, op_dir: Path, target: str, *, previous_stage: str | None, reports_dir: Path) -> VerifyOutcome:
        self.calls.append((target, previous_stage))
        return self.fn(op_dir, target, previous_stage=previous_stage, reports_dir=reports_dir)
