"""Frozen module regions: ``# --- Module Mk: <role> ---`` blocks of verified modules must not change.

Why in the orchestrator too: the verifier is the authority (it fails a stage that edits a frozen
region), but the verify node also checks before calling it so that a violation is named precisely in the
feedback (module and first differing line) and costs no emulation.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"^(\s*)#\s*---\s*Module\s+M(\d+)\s*:.*---\s*$")


def module_regions(source: str) -> dict[int, list[str]]:
    """Module id -> lines of its marked region (marker line through the line before the next marker or dedent)."""
    lines = source.splitlines()
    regions: dict[int, list[str]] = {}
    i = 0
    while i < len(lines):
        m = _MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        indent, mid = len(m.group(1)), int(m.group(2))
        body = [lines[i].rstrip()]
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if _MARKER.match(line):
                break
            if line.strip() and len(line) - len(line.lstrip()) < indent:
                break
            body.append(line.rstrip())
            j += 1
        while body and not body[-1].strip():
            body.pop()
        regions[mid] = body
        i = j
    return regions


def frozen_violations(previous: str, current: str, frozen: list[int]) -> list[str]:
    """Messages for every frozen module whose region differs (ignoring trailing whitespace)."""
    before, after = module_regions(previous), module_regions(current)
    out = []
    for mid in frozen:
        if mid not in before:
            continue
        if mid not in after:
            out.append(f"frozen module M{mid}: its '# --- Module M{mid}' region was removed")
            continue
        if before[mid] != after[mid]:
            diff_at = next((n for n, (a, b) in enumerate(zip(before[mid], after[mid])) if a != b),
                           min(len(before[mid]), len(after[mid])))
            out.append(f"frozen module M{mid} was modified (region line {diff_at + 1}); verified modules "
                       "must stay identical unless the run rolls back to them")
    return out
