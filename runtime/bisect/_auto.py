"""The automatic method: map recorded kernel values to golden tensors and name the first diverging op.

How it decides (no kernel edits needed):

1. **Regions.** Every recorded value gets tile offsets in the index space of the tensors it derives from:
   a view of a kernel argument at ``[i*T, 0]`` starts the chain, elementwise ops inherit offsets per axis
   from the operand of the same extent, reductions reset the reduced axis, matmul takes rows from ``a`` and
   columns from ``b``, transpose swaps. A write (assemble/move) is at its own offsets in its target.
2. **Status.** A value *matches* when it equals, within the case tolerance, the slice of some golden tensor
   at its offsets (the golden of the same name first; compute ops may only match golden tensors later in
   golden data-flow order than their operands, so ``acc + 0`` cannot "match" its own input). A final write
   into a kernel argument mapped to a golden tensor is checked against it (*mismatch* when it departs);
   NaN inside the valid box is *nan*; anything else has no golden counterpart (*unknown*).
3. **Narrowing.** The first bad value in execution order is where the divergence is *observed*. Walking
   its operands back through unknown values (kernel-only ops, and reads of written-back state resolved to
   the writes that produced it) gives the *window* of ops that could have caused it. The culprit is, in
   order of evidence strength: the op where NaN first appears; a view/write whose tile offsets are
   inconsistent with its partner (the written values equal the golden at the *read* position) and break
   the tiling grid; for output elements nobody wrote, the view whose ``valid_shape`` cut them off; else
   the earliest op of the window.

Where it cannot map a value (reshape, unknown ops, missing data-flow links) it lists it as unmapped.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import numpy as np

from runtime.bisect._analyzer import BAD, CONST, GOOD, Analyzer, AutoResult, Golden
from runtime.bisect._claims import (
    Suspect,
    bare_alias,
    call_sites,
    departs_within_statement,
    line_claim,
    lineage,
    pair_orphans,
    rank_suspects,
    sibling_view,
    strict_culprit,
    wrong_input,
    wrong_shape,
)
from runtime.bisect._kinds import suspect_reduction_kind
from runtime.bisect._leaked import bypassed_dead_value, leaked_loop_name
from runtime.bisect._parse import parse_source
from runtime.bisect._records import Rec
from runtime.bisect._repair import (
    confirm_pairings,
    copied_other_quantity,
    dead_successor_read,
    dropped_axis,
    dropped_scale_alias,
    flipped_selection_claim,
    permuted_relayout,
    repair_search,
    stuck_loop_read,
    suspect_matmul_variant,
    suspect_swapped_operands,
    unread_operand,
    unverified_inputs,
    walk_back,
    wrong_selection,
)
from runtime.bisect._rules import (
    _ancestors,
    contraction_offsets,
    coverage_gap,
    discarded_combination,
    geometry,
    misordered_reshape,
    missing_cast,
    overwritten_state,
    rebound_after_loop,
    scrambled_reshape,
    short_valid_source,
    stale_state,
    wrong_axis,
    wrong_loop_guard,
)

__all__ = ["AutoResult", "Golden", "analyze", "approximate_links", "feed", "name_from_source"]


def name_from_source(recs: list[Rec], stage_file: str, source: str) -> None:
    """Name records after the variable their statement assigns (``var = vs * c`` -> the last op is ``var``).

    The emulator's tensor names are used when it records them; for statements it left unnamed (locals of a
    plain helper function) the kernel source (parsed, never run) supplies them: within one statement and
    iteration, the last op's result is what the name binds.
    """
    try:
        tree = parse_source(source)
    except (SyntaxError, ValueError):
        return
    stmt_of: dict[int, tuple[int, str]] = {}
    for node in ast.walk(tree):
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            target = node.target.id
        if target is not None:
            for ln in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                stmt_of[ln] = (node.lineno, target)
    base = stage_file.rsplit("/", 1)[-1]
    named = {(stmt_of[r.line], tuple(sorted(r.iteration.items()))) for r in recs
             if r.name is not None and r.line in stmt_of}
    last: dict[tuple, Rec] = {}
    for r in recs:
        if r.name is not None or r.line is None or r.is_write or (r.file and r.file.rsplit("/", 1)[-1] != base):
            continue
        if (stmt_of.get(r.line), tuple(sorted(r.iteration.items()))) in named:
            continue  # the emulator named this statement's value already
        st = stmt_of.get(r.line)
        if st is not None:
            last[(st, tuple(sorted(r.iteration.items())), r.seq)] = r
    groups: dict[tuple, Rec] = {}
    for (st, it, _seq), r in sorted(last.items(), key=lambda kv: kv[1].seq):
        prev = groups.get((st, it))
        if prev is not None and r.seq - prev.seq > 8:
            prev.name = st[1]
        groups[(st, it)] = r
    for (st, _it), r in groups.items():
        r.name = st[1]


def approximate_links(recs: list[Rec]) -> None:
    """Give records without data-flow links a program-order chain (each op reads the op before it).

    Emulators that do not yet record operand links (``OpRecord.inputs``) still get region inference and
    a window for straight-line kernels. Also cuts the written tile out of write records that carry the
    whole target tensor: its extent is the valid shape of the value written (the op just before).
    """
    prev: Rec | None = None
    if any(r.inputs for r in recs):
        return
    for r in recs:
        if r.op == "view" or r.op in CONST:
            r.inputs = []
        elif prev is not None:
            r.inputs = [{"kind": "record", "seq": prev.seq}]
        else:
            r.inputs = []
        if r.is_write and prev is not None and r.value is not None and r.offsets is not None \
                and prev.value is not None and prev.valid_shape is not None:
            v = np.asarray(r.value)
            ext = list(prev.valid_shape)
            if v.ndim == len(ext) == len(r.offsets) and list(v.shape) != list(np.asarray(prev.value).shape):
                box = tuple(slice(o, o + n) for o, n in zip(r.offsets, ext, strict=True))
                tile = v[box]
                if list(tile.shape) == ext:
                    r.value, r.shape, r.valid_shape = tile.copy(), list(np.asarray(prev.value).shape), ext
        if not r.is_write:
            prev = r


def _departed_upstream(an: Analyzer, r: Rec) -> bool:
    """A value ``r`` is computed from departs from the golden: it mismatches itself, or a write that copies it
    unchanged into a kernel output mismatches (``v_new`` is wrong where ``v_out`` receives it)."""
    up = lineage(an, r) - {r.seq}
    if any(an.status.get(s) in ("mismatch", "misplaced") for s in up):
        return True
    for w in an.recs:
        if w.is_write and an.status.get(w.seq) == "mismatch" and an.target_golden(w) is not None:
            src = an.operand_recs(w)
            if len(src) == 1 and src[0].seq in up and src[0].bshape is not None and w.bshape is not None \
                    and src[0].bshape == w.bshape:
                return True
    return False


def _stuck_local_writes(an: Analyzer, origin: Rec) -> tuple[Rec, str] | None:
    """NaN first appears at ``origin``, which reads a local tensor that several writes filled at the *same* offsets,
    leaving part of what it reads never written (``for i in range(n): assemble(bias, [0, 0], tile)`` where
    ``[i, 0]`` was meant): the first of those writes, and why (or None)."""
    names = [str(ref.get("name")) for ref in origin.inputs or [] if ref.get("kind") == "tensor"]
    for p in an.operand_recs(origin):  # (a read of the tensor recorded as its own op)
        names += [n for n in (p.source, p.name, p.target) if n]
        names += [str(ref.get("name")) for ref in p.inputs or [] if ref.get("kind") == "tensor"]
    for nm in dict.fromkeys(names):
        if an.param_map.get(nm) in an.inputs or nm not in an.writes:
            continue
        ws = [w for w in an.writes.get(nm, []) if w.seq < origin.seq and w.offsets is not None and w.bshape]
        if len(ws) < 2:
            continue
        at: dict[tuple, list[Rec]] = {}
        for w in ws:
            at.setdefault((tuple(w.offsets), tuple(w.bshape)), []).append(w)
        (offs, box), same = max(at.items(), key=lambda kv: len(kv[1]))
        if len(same) < 2 or len({w.line for w in same}) != 1:
            continue
        shape = origin.shape or []
        covered = sum(int(np.prod(b)) for (_o, b) in at)  # (distinct places written; each box once)
        total = int(np.prod(shape)) if shape else 0
        if not total or covered >= total:
            continue
        w0 = same[0]
        return w0, (f"NaN first appears at {origin.where()}, which reads {nm!r}; {len(same)} writes at "
                    f"{w0.where()} all land on offsets {list(offs)} (box {list(box)}), so only {covered} of the "
                    f"{total} elements it reads were ever written: the write's offsets do not follow its loop")
    return None


def _dropped_update(an: Analyzer, culprit: Rec) -> tuple[Rec, str] | None:
    """The write that replaced a running state's update, when ``culprit`` reads that state (a local tensor written
    in an earlier loop iteration) and, in the iteration of that write, ``culprit``'s own statement computed a value
    nothing ever read - the update meant for the state - while the write stored something else (``oi[:] = o_ij``
    where ``oi[:] = oi_new`` was meant: ``oi_new = oi * alpha + o_ij * beta`` is right in every iteration, but the
    state it reads is not). Returns (the write, why) or None."""
    kids: set[int] = set()
    for x in an.recs:
        for p in an.parents(x):
            kids.add(p.seq)
    reads = [p for p in an.parents(culprit)]
    reads += [q for p in list(reads) for q in an.parents(p) if not p.is_write]
    for w in reads:
        if not w.is_write or w.target is None or w.target in an.arg_shapes or w.iteration == culprit.iteration:
            continue
        dead = [x for x in an.recs if x.line == culprit.line and x.op == culprit.op and x.file == culprit.file
                and x.iteration == w.iteration and x.seq < w.seq and x.seq not in kids]
        fed = {p.seq for p in an.parents(w)}
        if dead and not any(d.seq in fed for d in dead):
            return w, (f"{culprit.where()} reads the state {w.target!r} that {w.where()} wrote; in that iteration "
                       f"its own statement computed {dead[0].where()}, which nothing ever reads, while the write "
                       f"stored another value: the update meant for {w.target!r} was dropped at line {w.line}")
    return None


def _window_suspects(ranked: list[Rec]) -> list[Suspect]:
    out: list[Suspect] = []
    seen: set[tuple] = set()
    for r in ranked:
        key = (r.file, r.line)
        if r.line is None or key in seen:
            continue
        seen.add(key)
        why = ("setting its value to the golden's repairs the first departing value" if not out else
               "between the last op shown right and the op whose golden value repairs the departure; no golden "
               "value of its own to test")
        out.append(Suspect(r, why, len(out) + 1))
    return out


def feed(recs: list[Rec], golden: Golden, kernel_args: list[dict]) -> Analyzer:
    """An analyzer fed with records that carry their values (tests, older recordings)."""
    linked = any(r.inputs for r in recs)
    approximate_links(recs)
    an = Analyzer(golden, kernel_args)
    for r in recs:
        an.add(r)
    an.linked = linked
    return an


def _unless_wrong_selection(an: Analyzer, culprit: Rec, claimed: list[Rec], replayer: Callable, evidence: list[str],
                            n0: int) -> Rec:
    """``culprit`` (named because its operands match), unless an operand is a selection of an input that matched
    the wrong golden (`_repair.wrong_selection`): then the selection, and the claim's own evidence (from ``n0``)
    is withdrawn."""
    n1 = len(evidence)
    sel = wrong_selection(an, claimed, replayer, evidence)
    if sel is None:
        return culprit
    del evidence[n0:n1]
    return sel


def _unless_dropped_axis(an: Analyzer, culprit: Rec, observed: Rec, replayer: Callable, evidence: list[str]) -> Rec:
    """``culprit``, unless an operand it broadcasts comes from a reduction that dropped its axis and a replay keeping
    that axis repairs the departure (`_repair.dropped_axis`): then the reduction."""
    red = dropped_axis(an, culprit, observed, replayer, evidence)
    return culprit if red is None else red


_CONTRACTING = frozenset({"matmul", "sum", "amax", "amin", "prod", "mean", "var"})
"""ops that combine the elements along an axis: a valid extent cut short there drops data without any NaN"""


def _short_valid_claim(an: Analyzer, observed: Rec, readers: list[Rec], evidence: list[str]) -> Rec | None:
    """The line computing a tail bound cut too short, when one of ``readers`` (the op a rule would name, or the
    suspects of a departure left not localized) contracts or reduces values read through views whose
    ``valid_shape`` is shorter than the data their source holds there, all bounded by one line
    (``_rules.short_valid_source``: the NaN rule's evidence without the NaN, session 45). The emulator contracts a
    padding as nothing, so every value compared on its valid region matches and the matmul "departs while its
    operands match" (flash_attention_score_grad's ``actual_s2 = (s - s2_idx * S_TILE - 1).min(S_TILE)``)."""
    for r in readers:
        if r.op not in _CONTRACTING or r.seq < 0:
            continue
        short = short_valid_source(an, r, nan=False)
        if short is None:
            continue
        evidence.append(short[1].replace(f"{r.where()} departs and no op before it can be shown to be the cause",
                                         f"{observed.where()} departs; {r.where()} combines values along an axis"))
        return Rec(seq=-1, node=None, op="valid_shape", file=r.file, line=short[0], iteration=dict(r.iteration))
    return None


def _dropped_scale_suspect(an: Analyzer, observed: Rec, suspects: list[Rec], replayer: Callable,
                           evidence: list[str]) -> Rec | None:
    """The bare alias that drops a scale (``_repair.dropped_scale_alias``), tried for each suspect of a departure left
    not localized (at most three) as it is for a named op: when the pairing that named the op reading the alias is
    dropped as not separating it from its reader (gated_delta_rule's ``qkt`` after ``q_s = q_n``, s45), the alias is
    still shown by the same replay."""
    for r in [x for x in suspects if x.seq >= 0][:3]:
        alias = dropped_scale_alias(an, r, observed, replayer, evidence)
        if alias is not None:
            return Rec(seq=-1, node=None, op="alias", file=r.file, line=alias[0], iteration=dict(r.iteration))
    return None


def _misordered_reshape_suspect(an: Analyzer, observed: Rec, suspects: list[Rec], evidence: list[str]) -> Rec | None:
    """A reshape among the suspects of a departure left not localized whose target lists its operand's axes out of
    order (``_rules.misordered_reshape``: ``reshape(x, [n, h * w, c])`` with ``n, c, h, w = x.shape``, s46); the
    values it makes have no golden (no golden holds that layout), so no replay can set them - the source says it."""
    for r in suspects:
        if r.op != "reshape" or r.seq < 0:
            continue
        found = misordered_reshape(an.source, r.line)
        if found is not None:
            evidence.append(f"{observed.where()} departs, and nothing between it and {r.where()} has a golden value; "
                            + found[1])
            an.status[r.seq] = "mismatch"
            if found[0] != r.line:
                return Rec(seq=-1, node=None, op="alias", file=r.file, line=found[0], iteration=dict(r.iteration))
            return r
    return None


def _discarded_combination_suspect(an: Analyzer, observed: Rec, suspects: list[Rec],
                                   evidence: list[str]) -> Rec | None:
    """A write among the suspects of a departure left not localized that stores a part into a running state while
    its block computes, and discards, the state's combination with that part (``_rules.discarded_combination``:
    ``mi[:] = m_ij`` where ``mi[:] = mi_new`` was meant, s47). The golden names only the reduction's end result, so
    no replay can set the state - the source says it."""
    return _source_rule_suspect(an, observed, suspects, evidence, discarded_combination)


def _source_rule_suspect(an: Analyzer, observed: Rec, suspects: list[Rec], evidence: list[str],
                         *rules: Callable[[str | None, int | None], tuple[int, str] | None]) -> Rec | None:
    """The first suspect (by line, each line once) that one of the source ``rules`` explains: marked a mismatch,
    with the rule's reason in ``evidence``; None when no rule explains any."""
    seen: set[int | None] = set()
    for r in suspects:
        if r.seq < 0 or r.line in seen:
            continue
        seen.add(r.line)
        found = next((got for rule in rules if (got := rule(an.source, r.line)) is not None), None)
        if found is not None:
            evidence.append(f"{observed.where()} departs, and nothing between it and {r.where()} has a golden value; "
                            + found[1])
            an.status[r.seq] = "mismatch"
            return r
    return None


def _leaked_name_suspect(an: Analyzer, observed: Rec, suspects: list[Rec], evidence: list[str]) -> Rec | None:
    """A suspect of a departure left not localized whose line, inside a Python loop, reads a local only an earlier,
    finished loop binds (``_leaked.leaked_loop_name``: ``div(r, ts)`` in the normalise pass where ``tsum`` was
    meant, s48), or reads a local while the value computed from it right before is never read
    (``_leaked.bypassed_dead_value``: ``reshape(v1, ..)`` after ``v2 = transpose(v1, ..)``, s48). Neither the value
    read nor what it makes has a golden (and a dead value is not even recorded), so no replay separates the read from
    the line that made its operand - the source does."""
    return _source_rule_suspect(an, observed, suspects, evidence, leaked_loop_name, bypassed_dead_value)


def analyze(recs: list[Rec] | Analyzer, golden: Golden | None = None, kernel_args: list[dict] | None = None,
            outputs: dict[str, np.ndarray] | None = None, source: str | None = None,
            stage_name: str = "", replayer: Callable[[Callable[..., None]], None] | None = None) -> AutoResult:
    """Run the automatic method on one recorded run.

    Args:
        recs: an analyzer the replay fed (``_replay``), or records with their values (then golden and
            kernel_args are needed).
        outputs: golden name -> what the wrapper returned.
        source: the kernel source text (parsed, never run) for loop lines and statement names.
        stage_name: the stage file's name (records made in its plain helper functions get their call site).
        replayer: replays the run with a hook after every op (``_replay.replay_hooked``): enables the repair
            test (``_repair``) when the rules cannot name a culprit.
    """
    if isinstance(recs, Analyzer):
        an = recs
    else:
        assert golden is not None
        an = feed(recs, golden, kernel_args or [])
    recs = an.recs
    outputs = outputs or {}
    an.source = source
    an.finish()
    evidence: list[str] = []
    wrong_shape(an, evidence)
    departs_within_statement(an, evidence)
    pair_orphans(an, evidence)
    if replayer is not None and an.paired:
        confirm_pairings(an, replayer, evidence)
    sites = call_sites(source, stage_name, recs) if stage_name else {}
    bad = [r for r in recs if an.status.get(r.seq) in BAD]
    observed = bad[0] if bad else None
    coverage, cov_culprit, cov_notes = coverage_gap(an, outputs)
    culprit: Rec | None = None
    window: list[Rec] = []

    def result(obs: Rec | None, cul: Rec | None, win: list[Rec], suspects: list[Suspect] | None = None) -> AutoResult:
        # (a culprit in the stage's own source: the guard is read from that source)
        own = cul is not None and (not stage_name or Path(str(cul.file)).name == Path(stage_name).name)
        alias = bare_alias(an, cul, evidence) if own and cul is not None else None
        if alias is None and own and cul is not None and obs is not None and replayer is not None:
            # (no golden by the alias' name: the departure one constant times its golden, s44)
            alias = dropped_scale_alias(an, cul, obs, replayer, evidence)
        if alias is not None and cul is not None:
            cul = Rec(seq=-1, node=None, op="alias", file=cul.file, line=alias[0], iteration=dict(cul.iteration))
        guard = wrong_loop_guard(source, cul.line) if own and cul is not None else None
        if guard is not None and cul is not None:
            evidence.append(guard[1])
            cul = Rec(seq=-1, node=None, op="loop_guard", file=cul.file, line=guard[0], iteration=dict(cul.iteration))
        return AutoResult(an.status, an.matched, an.offs, an.param_map, obs, cul, win, evidence, an.unmapped,
                          coverage, suspects or [], sites, an.expected, an.write_map, an.lids)

    if observed is None:
        if cov_culprit is not None:
            evidence.extend(cov_notes)
            return result(None, cov_culprit, [])
        return result(None, None, [])
    if not an.linked:
        evidence.append("the emulator records no data-flow links: data flow approximated by program order")
    window = an.window(observed)
    # 0. a reshape that lays a tile's inner padding among its valid elements (its poison surfaces downstream)
    culprit = scrambled_reshape(an, observed, evidence)
    if culprit is not None:
        return result(observed, culprit, window)
    # 1. NaN origin
    origin = an.nan_origin(window)
    if origin is not None and _departed_upstream(an, origin):
        # NaN from values that already depart (sqrt of a wrong, negative value): a consequence, not the cause
        evidence.append(f"NaN first appears at {origin.where()}, but a value it is computed from already departs "
                        "from the golden: the NaN is a consequence, not the cause")
        origin = None
    if origin is not None:
        culprit = origin
        unread = an.uninitialized_reads(origin)
        stuck = _stuck_local_writes(an, origin)
        if stuck is not None:
            culprit, why = stuck
            evidence.append(why)
            an.status[culprit.seq] = "misplaced"  # (its values are right, their place is not)
        elif unread:
            evidence.append(f"NaN first appears at {origin.where()}: it reads {', '.join(sorted(unread))} "
                            "before anything was written there (uninitialized state)")
        elif origin.summ is not None and not origin.summ.nan and origin.summ.inf:
            evidence.append(f"inf first appears at {origin.where()} although every value it reads is finite (an "
                            "overflow: a missing max subtraction or scale?); the NaN downstream is made of it")
        elif (short := short_valid_source(an, origin)) is not None:
            evidence.append(short[1])
            culprit = Rec(seq=-1, node=None, op="valid_shape", file=origin.file, line=short[0],
                          iteration=dict(origin.iteration))
        else:
            evidence.append(f"NaN first appears at {origin.where()} although its operands hold no NaN "
                            "(poison outside valid_shape or uninitialized memory)")
    # 2. state re-bound inside a loop instead of written back
    if culprit is None:
        culprit = rebound_after_loop(an, window, evidence)
    if culprit is None:
        culprit = stale_state(an, window, evidence)
    # 3. an operand used without the cast the kernel applies to it elsewhere
    if culprit is None:
        culprit = missing_cast(an, observed, evidence)
    # 3b. a reduction over an axis other than the one the golden reduces the same (matching) values over
    if culprit is None:
        culprit = wrong_axis(an, [observed, *window, *an.loop_reductions()], evidence)
    # 4. geometry: a write whose values equal the golden at the read offsets, or a view breaking the tile grid
    if culprit is None:
        culprit = geometry(an, observed, window, evidence)
    # 4b. a matmul contracting operands taken from different tiles of the contracted axis (one stuck, one walking)
    if culprit is None:
        culprit = contraction_offsets(an, [observed, *window], evidence)
    # 4c. a reshape whose target lists its operand's axes out of order (a transpose written as a reshape, or dropped
    # before it): its values have no golden, and the padding it moves shows up as elements nobody wrote (s46)
    if culprit is None:
        culprit = _misordered_reshape_suspect(
            an, observed, [r for r in [observed, *window, *reversed(_ancestors(an, observed))]
                           if r.op == "reshape" and an.status.get(r.seq) not in GOOD], evidence)
    # 5. coverage (elements nobody wrote)
    if culprit is None and cov_culprit is not None and observed.is_write:
        culprit = cov_culprit
        evidence.extend(cov_notes)
    # 6. a read of the wrong input (an input nothing reads; another read twice, one copy feeding the departure)
    if culprit is None:
        culprit = wrong_input(an, bad, evidence)
    # 7. the first departing value whose operands all match (or the misplaced view feeding it)
    if culprit is None:
        n0 = len(evidence)
        culprit = strict_culprit(an, bad, evidence)
        if culprit is not None and culprit.seq >= 0:
            # (a contraction "departing while its operands match" on their valid regions: the views' bound)
            culprit = _short_valid_claim(an, observed, [culprit], evidence) or culprit
        if culprit is not None and replayer is not None and culprit.seq >= 0:
            # (a copy whose operand holds another golden's value: the read upstream that took it, s46)
            culprit = copied_other_quantity(an, culprit, observed, replayer, evidence) or culprit
        if culprit is not None and replayer is not None and culprit.op not in ("view", "gathermask") \
                and culprit.seq >= 0:
            culprit = _unless_wrong_selection(an, culprit, [culprit], replayer, evidence, n0)
    # 8. everything between the last matching values and the departure is on one line
    if culprit is None:
        n0 = len(evidence)
        culprit = line_claim(an, observed, window, evidence)
        if culprit is not None and culprit.seq >= 0:
            culprit = _short_valid_claim(an, observed, [culprit], evidence) or culprit
        if culprit is not None and replayer is not None and culprit.seq >= 0:
            on_line = [r for r in [culprit, *window] if (r.file, r.line) == (culprit.file, culprit.line)]
            culprit = _unless_wrong_selection(an, culprit, [observed, *on_line], replayer, evidence, n0)
    # 9. two views of same-shaped inputs that disagree where the values depart
    if culprit is None:
        culprit = sibling_view(an, observed, window, evidence)
    # 10. running state overwritten before anything read it (``tsum[:] = ts`` where ``tsum[:] = tsum + ts`` was meant)
    if culprit is None:
        culprit = overwritten_state(an, window, evidence)
    # never name an op whose own value matches the golden
    if culprit is not None and culprit.seq >= 0 and an.status.get(culprit.seq) in GOOD:
        evidence.append(f"(the op at {culprit.where()} was considered but its own value matches the golden: "
                        "not named)")
        culprit = None
    if culprit is None and replayer is not None:
        rep = repair_search(an, observed, replayer)
        if rep.culprit is not None:
            lines = {(r.file, r.line) for r in [rep.culprit, *rep.window]}
            evidence.extend(rep.evidence)
            if len(lines) == 1:
                # (unless a value computed from it that nothing reads matches its golden: the read of it is the slip)
                later = dead_successor_read(an, observed, [rep.culprit], replayer, evidence)
                if later is not None:
                    return result(observed, later, window)
                # (unless it reads the indices of a top-k that, taking the other end of its input, repairs it)
                culprit = flipped_selection_claim(an, observed, rep.culprit, [rep.culprit, *rep.window], replayer,
                                                  evidence) or rep.culprit
                an.status.setdefault(culprit.seq, "unknown")
            else:
                assert rep.ref is not None
                wb = walk_back(an, observed, rep.culprit, rep.window, an.g.order[rep.ref[0]], replayer)
                evidence.extend(wb.evidence)
                if wb.culprit is not None:
                    later = dead_successor_read(an, observed, [wb.culprit], replayer, evidence)
                    if later is not None:
                        return result(observed, later, window)
                    return result(observed, _unless_dropped_axis(an, wb.culprit, observed, replayer, evidence), window)
                if wb.window:  # the earliest op whose golden alone repairs: the bug is in it or in its inputs
                    rep.culprit = wb.window[0]
                    rep.window = unverified_inputs(an, rep.culprit, set())
                    one = {(r.file, r.line) for r in [rep.culprit, *rep.window]}
                    if len(one) == 1 and rep.culprit.line is not None:
                        # the op whose golden alone repairs is computed, through values without a golden, only from
                        # ops on its own line, whose inputs from elsewhere all match: the error enters on that line
                        dropped = _dropped_update(an, rep.culprit)
                        if dropped is not None:
                            # its line computes right from a state that holds the wrong value: the write that
                            # stored that value instead of the line's own update is where the error enters
                            evidence.append(dropped[1])
                            an.status[dropped[0].seq] = "mismatch"
                            return result(observed, dropped[0], window)
                        evidence.append(f"the values {rep.culprit.where()} is computed from that no golden shows "
                                        f"right are all on line {rep.culprit.line}, and every value that line reads "
                                        "from elsewhere matches the golden: the bug is on that line")
                        an.status[rep.culprit.seq] = "mismatch"
                        return result(observed, rep.culprit, window)
                evidence.append(f"the ops between it and the last op whose value was known to be right have no "
                                f"golden value to set: the bug is on line {rep.culprit.line} or on one of "
                                f"{sorted({r.line for r in rep.window if r.line})}")
                stuck = stuck_loop_read(an, observed, replayer, evidence)
                if stuck is not None:
                    return result(observed, stuck, window)
                misread = unread_operand(an, observed, [rep.culprit, *rep.window], replayer, evidence)
                if misread is not None:
                    return result(observed, misread, window)
                bound = _short_valid_claim(an, observed, [rep.culprit, *rep.window], evidence)
                if bound is not None:
                    return result(observed, bound, window)
                relaid = permuted_relayout(an, observed, [rep.culprit, *rep.window], replayer, evidence)
                if relaid is not None:
                    return result(observed, relaid, window)
                aliased = _dropped_scale_suspect(an, observed, [rep.culprit, *rep.window], replayer, evidence)
                if aliased is not None:
                    return result(observed, aliased, window)
                flipped = suspect_matmul_variant(an, observed, [rep.culprit, *rep.window], replayer, evidence)
                if flipped is not None:
                    return result(observed, flipped, window)
                reordered = _misordered_reshape_suspect(an, observed, [rep.culprit, *rep.window], evidence)
                if reordered is not None:
                    return result(observed, reordered, window)
                discarded = _discarded_combination_suspect(an, observed, [rep.culprit, *rep.window], evidence)
                if discarded is not None:
                    return result(observed, discarded, window)
                swapped = suspect_swapped_operands(an, observed, [rep.culprit, *rep.window], replayer, evidence)
                if swapped is not None:
                    return result(observed, swapped, window)
                leaked = _leaked_name_suspect(an, observed, [rep.culprit, *rep.window], evidence)
                if leaked is not None:
                    return result(observed, leaked, window)
                kind = suspect_reduction_kind(an, observed, [rep.culprit, *rep.window], replayer, evidence)
                if kind is not None:
                    return result(observed, kind, window)
                ranked = [rep.culprit, *sorted(rep.window, key=lambda r: -r.seq)]
                suspects = _window_suspects(ranked)
                evidence.append(f"{observed.where()} is the first value that departs from the golden; see the suspects")
                return result(observed, None, window, suspects)
    if culprit is None and replayer is not None:
        culprit = stuck_loop_read(an, observed, replayer, evidence)
        if culprit is not None:
            return result(observed, culprit, window)
    if culprit is None and replayer is not None:
        culprit = unread_operand(an, observed, [*window, observed], replayer, evidence)
        if culprit is not None:
            return result(observed, culprit, window)
    if culprit is None:
        culprit = _short_valid_claim(an, observed, [observed, *window], evidence)
        if culprit is not None:
            return result(observed, culprit, window)
    if culprit is None:
        culprit = _misordered_reshape_suspect(an, observed, [observed, *window], evidence)
        if culprit is not None:
            return result(observed, culprit, window)
    if culprit is None:
        culprit = _discarded_combination_suspect(an, observed, [observed, *window], evidence)
        if culprit is not None:
            return result(observed, culprit, window)
    if culprit is None:
        suspects = rank_suspects(an, observed, window)
        evidence.append(f"{observed.where()} is the first value that departs from the golden; no op before it can "
                        "be shown to be the cause (its inputs match and its output does not): see the suspects")
        return result(observed, None, window, suspects)
    if culprit.seq >= 0 and not culprit.is_write:
        dropped = _dropped_update(an, culprit)
        if dropped is not None:
            evidence.append(dropped[1])
            an.status[dropped[0].seq] = "mismatch"
            culprit = dropped[0]
    if replayer is not None:
        culprit = _unless_dropped_axis(an, culprit, observed, replayer, evidence)
    return result(observed, culprit, window)
