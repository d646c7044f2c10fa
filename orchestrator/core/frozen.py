"""Pointers for a frozen-module finding: where the verified region is, so the implementer can restore it.

Why only pointers: whether a frozen region changed is decided by lint PF05 inside the verifier (the one
definition of a region is `runtime.markers`); the verifier's FAIL_LINT report is the verdict. The
orchestrator adds what the report cannot know: which verified stage file holds the region to copy back.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from orchestrator.core.services import LintItem
from runtime.markers import module_regions

__all__ = ["frozen_pointers"]

_FROZEN = re.compile(r"\bfrozen module M(\d+)\b")


def frozen_pointers(findings: Iterable[LintItem], previous_source: str, previous_file: str) -> list[str]:
    """One feedback line per module named by a PF05 finding: its region's lines in the verified stage file."""
    regions = module_regions(previous_source.splitlines())
    out: list[str] = []
    for mid in sorted({int(m.group(1)) for f in findings if f.rule_id == "PF05"
                       for m in [_FROZEN.search(f.message)] if m}):
        region = regions.get(mid)
        if region is None:
            continue
        last = region.body[-1][0] if region.body else region.marker_line
        out.append(f"M{mid} is verified and frozen: keep its region exactly as in {previous_file} lines "
                   f"{region.marker_line}-{last} (its marker through its last line; only `# STUB` lines may change)")
    return out
