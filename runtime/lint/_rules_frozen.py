"""Module-marker rules: stage files mark their modules, verified modules stay frozen, stubs do not ship.

A verified module's code is the evidence behind its verification; if a later stage edits it, the earlier
PASS no longer describes the code. The region of module Mj runs from its ``# --- Module Mj: <role> ---``
marker to the next module marker, an ``# --- end of modules ---`` line, or the end of the enclosing block
(first line indented less than the marker), compared ignoring trailing whitespace, trailing blank lines and
``# STUB`` lines. The marker's role text is not part of the region. The definition lives in
`runtime.markers` (shared with the verifier, the op-dir intake and the orchestrator).
"""

from __future__ import annotations

from collections.abc import Iterator

from runtime.lint._opdir import parse_stage_name
from runtime.lint._registry import Hit, LintContext, Skip, check
from runtime.lint._util import kernel_pf
from runtime.markers import STUB_RE, module_regions

__all__: list[str] = []


@check("PF05")
def pf05_frozen_modules(ctx: LintContext) -> Iterator[Hit]:
    if ctx.previous_stage is None:
        raise Skip("needs --previous-stage (the verified stage file of module k-1)")
    try:
        prev_lines = ctx.previous_stage.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        yield Hit(f"cannot read previous stage {ctx.previous_stage}: {exc}")
        return
    pf = kernel_pf(ctx)
    before = module_regions(prev_lines)
    now = module_regions(pf.lines)
    k = max(now) if now else max(before, default=0) + 1
    for j in sorted(before):
        if j >= k:
            continue
        if j not in now:
            yield Hit(f"frozen module M{j} (verified in {ctx.previous_stage.name}) has no marker here", 1, 1)
            continue
        start, new = now[j].marker_line, now[j].body
        old = before[j].body
        for (_la, a), (lb, b) in zip(old, new, strict=False):
            if a != b:
                yield Hit(f"frozen module M{j} changed at line {lb}: was `{a.strip()}`, now `{b.strip()}`", lb, 1)
                break
        else:
            if len(old) != len(new):
                i = min(len(old), len(new))
                where = new[i][0] if i < len(new) else (new[-1][0] + 1 if new else start + 1)
                what = "lines added" if len(new) > len(old) else "lines removed"
                yield Hit(f"frozen module M{j} changed at line {where} ({what})", where, 1)


@check("PF08")
def pf08_no_stub_in_final(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    for i, text in enumerate(pf.lines, start=1):
        if STUB_RE.search(text):
            yield Hit(f"`# STUB` line left in the final kernel: `{text.strip()[:80]}`", i, text.find("#") + 1)


@check("PF09")
def pf09_stage_markers(ctx: LintContext) -> Iterator[Hit]:
    pf = kernel_pf(ctx)
    op_name = ctx.op.op_name if ctx.op is not None else None
    stage = parse_stage_name(ctx.display, op_name)
    if stage.kind != "stage":
        raise Skip("not a stage file name (`<op>_module<sfx>_impl.py`)")
    if stage.error:
        yield Hit(f"stage file name: {stage.error}", 1, 1)
        return
    markers = pf.module_markers()
    seen = [m[0] for m in markers]
    ranges = [(fn.lineno, fn.end_lineno or fn.lineno) for fn in pf.jit_fns]
    for num, line, _role, _indent in markers:
        if num not in stage.modules:
            yield Hit(f"marker for module M{num} in the stage file of modules {stage.suffix}", line, 1)
        elif not any(a <= line <= b for a, b in ranges):
            yield Hit(f"marker for module M{num} is outside the JIT kernel", line, 1)
    for num in stage.modules:
        if seen.count(num) == 0:
            yield Hit(f"no `# --- Module M{num}: <role> ---` marker", 1, 1)
        elif seen.count(num) > 1:
            yield Hit(f"module M{num} is marked {seen.count(num)} times", 1, 1)
    in_scope = [n for n in seen if n in stage.modules]
    if in_scope != sorted(in_scope):
        yield Hit(f"module markers out of order: {', '.join('M' + str(n) for n in in_scope)}", 1, 1)
