"""Unseen cases: shapes, seeds and a call pattern the author of a kernel could not see (issue #24, item 4).

Why: the SPEC's cases are public. A kernel whose tile count is ``(n + 3) // 16`` is exact for ``n = 64`` and
``n = 77`` and drops rows for ``n = 70``; a kernel can fingerprint six public inputs; a kernel can change after
the N-th call. So every verification also runs cases drawn from a per-run seed that nobody saw in advance.

What :func:`unseen_cases` draws (``rng = default_rng([seed, 0x7e5])``), from the SPEC alone:

- per dynamic axis, eight sizes against :data:`~runtime.opdir._cases.TAIL_MULTIPLE` (16), see :func:`_axis_sizes`:
  a **tail of 1**, a **fill** size (above three quarters of what the byte cap allows, at most 4x the SPEC's
  largest), a **power of two** (>= 128), an **aligned** one, a **small** one, **one less than a tile multiple**,
  a **uniform tail** and a **larger** one; sizes already in the SPEC for that axis are skipped. The other dims come
  from a P0 shape (rotating). Tail of 1, fill and small run in every dtype (:data:`_EVERY_DTYPE`);
- a **fresh-seed rerun** of every P0 shape, and every shape+dtype that has only one case in the run gets a
  second one with another seed: the verifier compares what the kernel sent to the device across calls of the
  same shape (a program that depends on input values is smuggling), which needs two calls per shape;
- **special values** (``Case.special``): the second case of every same-shape pair and the P0 reruns hold some
  all-zero, constant and tied rows (:func:`runtime.opdir._inputs.apply_special_values`);
- dtypes and value bands rotate; seeds are drawn (>= 2**20, never a SPEC seed).

- (version 3) with two or more dynamic axes, a **joint** shape: every dynamic axis off the SPEC at once, each at a
  tail size (its tail of 1 or its uniform tail, drawn), so that the corner tile is partial on every axis. Every
  other class moves one axis away from a P0 shape: a kernel wrong only when no axis has a SPEC size (a corner tile
  it mishandles; red team s22: a kernel that dropped a row only then passed every seed) was never called wrong.
- (version 4) the **small** size is 1: a dynamic axis of one (a decode step's batch, one token) runs in every dtype
  of every verification. Red team s25: a "B == 1 fast path" that wrote nothing passed 6 of 8 verifications, the
  small size being 1 in one draw of eight.

- (version 5) the byte cap of an unseen case is 4.25x the largest SPEC case (at least 4 MiB, at most 64 MiB), so the
  fill size really reaches 3-4x the SPEC's largest size below the 64 MiB ceiling. Mutation sweep s30: the cap was
  1.25x, so above a 3.2 MiB SPEC case the fill stayed at 1.25x and the power of two was halved back to a SPEC size;
  a sigmoid kernel clamping its tile count at 8 (128 rows, SPEC 64 rows of 16384) passed every verification. A
  size halved to fit onto a SPEC size is dropped (the SPEC runs it already). The power of two is at least 128
  whatever the SPEC's size (red team s30b: with SPEC sizes up to 21 it was at most 64, and a 64-row fast path with
  a slip in its offsets passed).

- (version 6) the special cases also hold **tiny rows**: a few rows scaled towards 0 by 2**-7, the same rows in
  every input with as many rows (:func:`runtime.opdir._inputs.apply_special_values`). Mutation sweep s30: sum_lstm
  with its RMSNorm eps 1e-5 instead of 1e-6 passed every verification - the eps shows only where the normalised
  pre-activation is small while the weights are not; a band scales whole tensors, weights included, and there
  the error stayed under atol. And the **power of two** of an axis every output keeps is drawn from 128 up to 8192
  whatever the SPEC's size, halved to the byte cap (red team s31: 128-row blocks with a slip in the second block's
  offset passed every verification of a 21-row SPEC; with 512, 1024-row blocks did).

- (version 7) every other special case holds its zero, constant, near-constant and tied vectors along a **leading
  axis** (columns; for rank 3 or more all leading axes together, all trailing axes together or one leading axis,
  the columns cases in turn) instead of the last one, without tiny rows, and boolean inputs get all-False and
  all-True vectors: red team s32 - BatchNorm over the batch with a one-pass variance ``E[x^2] - E[x]^2``, a
  per-column ``x / amax`` without a clamp and a masked mean without one passed every verification. The **power of
  two** runs in every dtype (a bf16-only path with a 128-row block slip passed 61% of verifications of a two-dtype
  op), from 256 on an axis every output keeps, and the call cap is :data:`MAX_UNSEEN` (44; 20 before).

- (version 8) the columns cases of inputs of rank 3 or more also take **one middle axis against all the others**
  (vectors over B, H and W for each channel of [B, C, H, W]: the statistics of a BatchNorm2d) - first for rank 4 and
  more, after the two multi-axis layouts for rank 3 -, and some special vectors hold the **two ends of the range**
  exactly (a quarter of their elements each; one each for a SPEC with ``ties: unspecified``; single vectors and
  one-element vectors too), with the near-constant kind first where vectors are fewer than kinds: red team s33 and
  s33b - a per-channel
  one-pass variance and a per-channel ``x / amax`` without a clamp on NCHW input, and a binary cross-entropy clamping
  ``log(p)`` but not ``log(1 - p)`` (p exactly 1.0 came only from a constant row rounding up: 15% of verifications)
  passed.

- (version 9) every class of :data:`_MUST_V9` runs in every verification: size 1 (every dtype), one less than a tile
  multiple, size 1 with every other dynamic axis at its tail of 1, and one size each of 2-adic valuation 32, 64 and
  128 on every axis; every axis at 1 at once (every dtype) and, with three axes or more, each pair of axes at 1
  (:func:`_ones`); besides the tail of 1, power of two and fill (every dtype) and the joint shape - the call cap grows
  to hold them (:data:`MAX_UNSEEN_V9`). The power of two starts at four blocks of the SPEC's largest power of two
  (:func:`_powers`); the classes are planned in :data:`_ORDER_V9`, the total byte budget doubles, every pair leaves
  room for the later powers of two at their least size, the fills share the rest, and a pair over what it may take is
  shrunk to it. Red teams s34 and s34b: with 44 calls a 3-dtype x 2-axis or 2-dtype x 3-axis SPEC never drew size 1,
  ``B == S == 1`` never ran, no size of valuation 64 or 128 did, and a three-dtype SPEC of 9-18 MiB cases rarely drew
  a bf16 power of two above two blocks.

That is :data:`UNSEEN_VERSION` 9. Version 8 is version 9 without its new classes, with the version-2 order, the
version-7 power of two, a call cap of 44 and a 256 MiB budget spent in plan order.
Version 7 is version 8 without the middle-axis layouts and the range's ends. Version
6 is version 7 with every special vector along the last axis and the power
of two in one dtype. Version 5 is version 6 without tiny rows; version 4 is version 5 with the 1.25x
cap; version 3 is version 4 with the small size drawn from 1..8; version 2 is version 3 without the joint shape;
version 1 (seven classes, fill from half the cap bound and in one dtype, no power of two, no special values) is kept
for the run seeds of the shipped traces only (:data:`LEGACY_RUN_SEEDS`).

Bounds (stated in docs/verification.md): at most :data:`MAX_UNSEEN` unseen wrapper calls; each unseen case holds
at most :func:`case_cap` bytes of inputs + outputs (4.25x the largest SPEC case - version 4: 1.25x -, at least 4 MiB,
at most :data:`CASE_BYTES_CAP` = 64 MiB); an axis size is halved (keeping its tail) until the case fits. SPEC shapes
over the cap get no fresh-seed rerun and no repeat. So unseen cases add at most 44 calls (versions 7 and 8; 20 before;
version 9: at most :data:`MAX_UNSEEN_V9`) of at
most 64 MiB each, within the total byte cap.

The call order (SPEC and unseen cases interleaved, plus repeats) is :func:`call_plan`'s: also drawn from the
seed, so the number and order of wrapper calls differ between verifications.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable

import numpy as np

from runtime.dtypes import is_float
from runtime.opdir._cases import _TAIL_PAD, BANDS, TAIL_MULTIPLE, Case, _dims_label, _has_tail
from runtime.opdir._inputs import (
    DEFAULT_FLOAT_RANGE,
    FAMILY_KINDS,
    TOP_BAND,
    TOP_SPLIT_BAND,
    VECTOR_KINDS,
    few_vectors,
    one_vector,
    shared_range,
)
from runtime.opdir._memory import case_bytes
from runtime.opdir._spec import Spec

__all__ = ["BLOCK_PERIODS_V24", "BLOCK_SIZES_V24", "CASE_BYTES_CAP", "FILL_FACTOR", "LEGACY_RUN_SEEDS", "MAX_FAMILY_CASES", "MAX_UNSEEN", "MAX_UNSEEN_V6", "MAX_UNSEEN_V9",
           "MAX_BLOCK_PER_DTYPE_AXIS", "MAX_COVER_PER_DTYPE_AXIS", "MAX_HINT_PER_DTYPE_AXIS", "MAX_STRING_VALUES", "MAX_UNSEEN_V12_MORE", "PAIR_BYTES", "POW2_TAIL_MAX", "TOTAL_BYTES_FLOOR", "UNSEEN_PREFIX", "UNSEEN_VERSION",
           "alias_groups", "attribute_cases", "attribute_repeat", "block_plan", "call_plan", "case_cap", "cover_plan", "decode_vector_plan",
           "draw_seed", "end_plan", "family_plan", "flipped_bools", "hint_plan", "int_attribute_cases",
           "int_values", "pow2_tail_plan", "single_partners", "string_attribute_cases", "sweep_plan", "tail_cover_plan", "total_cap", "unseen_cases", "unseen_version",
           "varied_attributes", "varied_ints", "varied_strings", "vector_plan", "verification_seed"]

MAX_UNSEEN = 44
"""Most unseen wrapper calls in one verification (same-shape reruns included), drawing version 7: every size class
in one dtype and the every-dtype classes in each supported dtype fit for up to four dtypes (one dynamic axis).
Red team s32b: with 20 calls, version 7's power of two in every dtype pushed the small size (B = 1) and the
one-below-a-multiple size out of every verification of a three-dtype op (and the tail of 15 out of the shipped
silu's), and a kernel wrong only below 16 rows passed every verification."""
MAX_UNSEEN_V6 = 20
"""The call cap of drawing versions 1-6 (their recorded cases stay as they were)."""
MAX_UNSEEN_V9 = 160
"""(version 9) The call cap grows with the SPEC: room for every class of :data:`_MUST_V9` in its dtypes on every
dynamic axis (two calls each) plus the reruns, at least :data:`MAX_UNSEEN` and at most this (1 dtype x 1 axis: 24
calls, 2 x 2: 62, 3 x 3: 120, 4 dtypes x 3 axes: 144). Red team s34: with 44 calls, 3 dtypes x 2 axes or 2 dtypes x 3 axes left size 1 and one-less-than-a-tile
out of every verification - an ``S == 1`` decode-step path and a ``B == 1`` single-request path with a
``(n + 7) // 16`` tile count passed every seed."""
TOTAL_BYTES_FLOOR = 256 * 1024**2
"""All unseen cases together hold at most ``max(TOTAL_BYTES_FLOOR, largest SPEC case / 4)`` bytes of inputs +
outputs (:func:`total_cap`): the verifier holds every case at once, so for a several-GB op 20 unseen cases of
64 MiB each were a constant of about 1.25 GiB, several times over (inputs, golden and device outputs)."""
MAX_UNSEEN_V12_MORE = 24
"""(version 12) More calls on top of :data:`MAX_UNSEEN_V9`: room for the two classes version 12 adds on every axis
(``small2``, ``a256``) of a SPEC with three dynamic axes and three dtypes, so that no class of version 9 is left out."""
_EVERY_DTYPE = ("tail1", "fill", "small")
"""Size classes drawn in every supported dtype (version 2: every dtype sees a size above 3x the SPEC's largest;
red team s16 C: a bf16-only path wrong from 3x passed 74% of verifications when the fill size had one dtype)."""
_EVERY_DTYPE_V7 = ("tail1", "fill", "small", "pow2")
"""(version 7) the power of two too: the only class above 4x the SPEC ran in one dtype, and a bf16-only path with a
128-row block slip passed 61% of verifications of a two-dtype op (red team s32, g2s)."""
_EVERY_DTYPE_V1 = ("tail1", "small")
_ORDER_V9 = ("tail1", "small", "small2", "tile-1", "a32", "a64", "a128", "a256", "pow2", "fill", "aligned", "tail",
             "larger")
"""(version 9) The order the size classes are planned in (round robin over the axes, class by class): the cheap
telling sizes first, then the power of two before the fill - the byte budget is spent in this order, and the fill
sizes, the largest, are the ones shrunk to it (red team s34: a bf16 power of two never ran on a SPEC of ~9 MiB cases
once the fp32 fill and power of two had spent the budget)."""
_VALUATION = {"a32": 32, "a64": 64, "a128": 128, "a256": 256}
"""(version 9) the valuation classes and their smallest size (taken when the drawn odd multiple is over the case cap:
halving would change the valuation)"""
_MUST_V9 = frozenset({"tail1", "small", "small-joint", "ones", "ones-pair", "tile-1", "a32", "a64", "a128", "pow2",
                      "fill", "joint", "small2", "a256"})
"""(version 9) The classes every verification runs (in every dtype where :data:`_EVERY_DTYPE_V7` says): the call
cap makes room for them (:data:`MAX_UNSEEN_V9`), and a pair over the remaining byte budget is shrunk to it
(:func:`_shrunk`) instead of dropped."""
_POW2_MIN = 128
"""The power-of-two class is at least this (8 tiles of 16: two steps of a 64-row fast path), when the SPEC allows."""
_POW2_KEPT = 8192
"""(version 6) For an axis every output keeps (none reduces over it), the power of two is drawn from 128 up to this
whatever the SPEC's size - halved to what the byte cap allows (red team s31, k03: 128-row blocks with a slip in the
block offset, right while there is one block, passed every verification of a 21-row SPEC - no unseen size went
above 128; with 512 the same slip in 1024-row blocks passed). Not for an axis an output reduces over: a reduction's
rounding grows with its length (`FILL_FACTOR`)."""
CASE_BYTES_CAP = 64 * 1024**2
"""Inputs + outputs of one unseen case stay under this unless the SPEC's own cases are bigger."""
UNSEEN_PREFIX = "unseen"
"""Unseen case names start with it: ``unseen3-B70_D64-fp32`` (no seed: the seed is never shown to agents)."""
UNSEEN_VERSION = 26
"""The drawing of unseen cases. Version 2 (red team s16): a power-of-two size class, the fill size in every dtype and
above 3x the SPEC's largest, and special values (zero / constant rows, ties) in the second case of every same-shape
pair and in the fresh-seed reruns of the SPEC's shapes (:func:`runtime.opdir._inputs.apply_special_values`).
Version 3 (red team s22): the joint shape of two or more dynamic axes (:func:`_joint`). Version 4 (red team s25):
the small size is 1 (drawn as before, so every other class is version 3's). Version 5 (mutation sweep s30): the
byte cap is 4.25x the largest SPEC case instead of 1.25x (:func:`case_cap`). Version 6 (mutation sweep s30): the
special cases also hold tiny rows (``Case.tiny``), the same rows in every input with as many rows, and the power of
two of an axis every output keeps goes up to 8192 and the byte cap (:data:`_POW2_KEPT`). Version 7 (red team s32):
every other special case holds its special vectors along a leading axis (``Case.columns``: a one-pass variance over
the batch and a per-column scale without a clamp passed every verification), and the power of two runs in every
dtype (:data:`_EVERY_DTYPE_V7`). Version 8 (red team s33): the columns layouts of inputs of rank 3 or more include
one middle axis against all the others (``Case.middle``: a per-channel one-pass variance and a per-channel max without
a clamp on NCHW input passed every verification), and the special vectors include ones holding the two ends of the
range exactly (``Case.edges``: a binary cross-entropy without a clamp on ``log(1 - p)`` passed 85% of them). Version 9
(red team s34): every class of :data:`_MUST_V9` runs whatever the number of dtypes and axes (the call cap grows,
:data:`MAX_UNSEEN_V9`), planned in :data:`_ORDER_V9`, and a pair over the remaining byte budget is shrunk to it.
Version 10 (red team s35): the same cases, then the largest SPEC shape in every dtype with every integer input at the
top of its range (:data:`runtime.opdir._inputs.TOP_BAND`) and again with the first input's last axis split between the two
ends (``TOP_SPLIT_BAND``), plus :func:`attribute_cases` - the SPEC's float attributes at
other values (drawn per verification) on a SPEC shape in every dtype. Version 11 (red team s36): the attribute cases
vary lists of floats, take a tiny attribute far up, add a value close to the SPEC's and run on a tail shape too
(:func:`attribute_cases`); every other case is version 10's. Version 12 (red team s37): the special cases also hold
peaked and ascending float vectors (``Case.peaks``: a late jump of a running max), cases pass one tensor for
several inputs of the same shape and dtype (``Case.alias``, :func:`alias_groups`), and the attributes whose SPEC
values are whole numbers are passed as Python ints (:func:`_integral_sets`); every other case is version 11's.
Version 13 (red team s38): after every other case, the vector cases (:func:`vector_plan`, ``Case.vector``): a float
input that is one vector (``[N]``, ``[1, V]``) is near-constant, peaked, sorted, constant or tiny as a whole, one
kind per case, and then each kept axis's largest power of two plus a tail of 1..15 (:func:`pow2_tail_plan`, the
accident round of s38); every other case is version 12's. Version 14 (red team s38 "accident2", session 39): the
int attributes golden() uses as a count, an exponent, a bound or a scale (:func:`varied_ints`,
:mod:`runtime.opdir._intattrs`) run at other whole values (:func:`int_values`) in cases of their own
(:func:`int_attribute_cases`) and on the last unseen case of every shape (:func:`vary_unseen_attributes`); every other
case is version 13's. Version 15 (red team s39 and its accident round): the size-1 case of every dynamic axis holds
version 13's whole-vector kinds in its one row (:func:`decode_vector_plan`: a ``B == 1`` decode path with a one-pass
variance passed), a one-vector float input beside matrices is near-constant at the low or the high end of its range
(:func:`end_plan`: a MoE gate filling dropped groups with 0.0 passed), varied float attributes keep full float64
precision (:func:`_attr_value`: a wrapper using the SPEC's value for any value of more than seven significant digits
passed), and one attribute case is called twice (:func:`attribute_repeat`); every other draw is version 14's.
Version 16 (accident round 30, s40): a SPEC of static shapes (a one-case gym import) gets the attribute cases on its
one shape (:func:`attribute_cases`: before, none - the sum_lstm of the gym with ``eps_state`` for ``eps_cell``
passed); every other draw is version 15's. Version 17 (red team round 29, s40): the special rows and columns also hold
the value families real data has and no draw made (``Case.families``, :data:`runtime.opdir._inputs.FAMILY_KINDS`:
bell-shaped, sparse, with negative zeros, whole numbers), and after every other case :func:`family_plan` gives them
to whole vectors - a 1-D weight beside a matrix at its initial value (gamma 1.0, beta 0.0), the size-1 decode row,
the vector cases (eight kernels 10% off on one family each, detected per row on the device, passed every seed);
every case of version 16 keeps its shape, dtype, seed and band. Version 18 (red team round 31, s41): after the attribute
cases of version 17, the varied float attributes far from the SPEC's value (:func:`_far_sets`: below 1 for a value of 1
or more, and 4-10x above it) and every bool attribute both the wrapper and golden() take flipped
(:func:`flipped_bools`) - a ``max(cap, 1.0)`` guard, a cap >= 100 taken as "no cap" and a wrapper that ignored ``unit_offset``
passed every seed of version 17; every case of version 17 is drawn as before. Version 19 (red team round 32, s42):
an int attribute whose only vetoes are shape arguments of a reshape (a GroupNorm's ``num_groups``) varies through
values that keep the reshape whole (:func:`int_values`' "shape": half or a quarter, then twice), in the int cases
only (not on the unseen shapes: a reshape may involve a dynamic axis), and each str attribute both sides take runs
at the other values golden.py compares it with (:func:`varied_strings`, :func:`string_attribute_cases`) - a GroupNorm
built for the SPEC's 8 groups, one taking the group count for the group width and an activation wrapper computing
silu for every ``kind`` passed every seed of version 18. A set golden refuses, or whose outputs differ in shape or
dtype from golden's at the SPEC's values, is not run (``runtime.verify._engine._drop_refused_attributes``). Every
case of version 18 is drawn as before, except the int values of an op that has both a reshape int and another
varied int (their draws share a stream). Version 20 (red team round 33, s43): a str attribute also runs at the values
golden.py names without writing them beside the parameter (:func:`runtime.opdir._intattrs.string_attribute_values`:
``kind in MODES``, a ``dict(silu=..., gelu_tanh=...)`` table read with ``.get(kind)``, ``for name, fn in TABLE: if
name == mode``) - a wrapper taking ``kind`` or ``mode`` and ignoring it passed every seed of version 19 there. Every
case of version 19 is drawn as before; the new values come after version 19's, from the same stream. Version 21 (red
team round 34, s44): after every other case, one call of each one-dtype size class in every other dtype, a partial
single tile (9..15) and a tile plus a partial one (18..30) on every axis in every dtype, and odd multiples of 256 and
512 above 4x on a kept axis (:func:`sweep_plan`); every case of version 20 is drawn as before. Version 22 (red team
round 35): after every other case, tails of 2..14 in every window of sizes in every dtype (:func:`cover_plan`), rows at
their own scales. Version 23 (red team round 36): after every other case, a size one past whole blocks of 32..1536
rows in every window above two tiles and the other axes at fresh tails in every window up to 4x (:func:`block_plan`),
the sizes the verified file names itself - its bounds, compared residues and blocks - when the verifier passes
``hints`` (:func:`hint_plan`, :mod:`runtime.verify._hints`), and a same-shape partner for every single call of
versions 21-23 up to :data:`PAIR_BYTES` (:func:`single_partners`); every case of version 22 is drawn as before.
Version 24 (red team round 37): the file's sizes in every spelling of the arithmetic (``n & 15``, ``n >> 6``,
``divmod``, ``(n + c) % m``, ``range`` membership; :mod:`runtime.verify._hints`), a residue's intervals inside the
file's own bounds first (:func:`hint_plan`), block periods of 5 .. 40 tiles (:data:`BLOCK_PERIODS_V24`), and after
every other case every tail 1..15 of every window from two tiles to 2x the SPEC's largest (:func:`tail_cover_plan`);
every case of version 22 is drawn as before (version 23's block and hint cases are version 24's draws).
Version 25 (red team round 38) draws what version 24 does from the hints it is given; the verified file's hints are
read by version 25's reader (:func:`runtime.verify._hints.source_hints`: annotated constants, config-class fields,
default arguments, constant tables a loop walks, paddings), so only a file using those spellings gets other cases.
Version 26 (red team round 39) likewise draws what version 25 does from its hints; version 26's reader also takes the
sizes where a test of one size flips (``7.5 < math.log2(n) < 8.2``: 182 and 295; :mod:`runtime.verify._scan`) for
bounds, so only a file with a window that names no integer gets other cases."""
LEGACY_RUN_SEEDS = frozenset({
    8073106555080404082, 1375231499958067986, 4714508118518851981, 8790150582367487093, 5005340479135436709,
    4653713241000648732, 4971532019015743374, 5156450107698526626, 5087138263457286476,
})
"""Run seeds of the shipped traces (``workspace/*/traces/default/manifest.json``, ``unseen_seed``), recorded with
version 1. A replay verifies every attempt again and feeds the report to the agents (the debugger reads the case
list, MEMORY.md the evidence hash): the recorded answers match only the recorded cases. So exactly these run seeds
keep version 1; every other seed (a new run draws 63 random bits) gets the current drawing."""
_SEED_BASE = 1 << 20
_STREAM = 0x7E5


def _new_seed(rng: np.random.Generator, used: set[int]) -> int:
    """A case seed drawn from ``rng`` that no case in ``used`` has (added to it)."""
    while True:
        s = int(rng.integers(_SEED_BASE, 1 << 62))
        if s not in used:
            used.add(s)
            return s


def _planned_cases(spec: Spec, plan: list[tuple[dict[str, int], bool, dict[str, object]]], cap: int, used: set[int],
                   rng: np.random.Generator, first: int, label: Callable[[dict[str, object]], str], *,
                   peaks: bool = True) -> list[Case]:
    """The attribute cases of ``plan`` - ``(dims, special values, attributes)`` - in every dtype, in that order, each
    under ``cap`` bytes; named ``unseen<first + i>-<dims>-<dtype>-<label(attrs)>``, seeded from ``rng`` one draw per
    case in this order (a recorded verification's cases depend on it: every version's attribute, int, str, far and
    flipped cases are built here). ``peaks``: special values include peaks (versions before 12 had none)."""
    out: list[Case] = []
    for dtype in spec.supported_dtypes:
        for dims, special, attrs in plan:
            if _bytes(spec, dims, dtype) > cap:
                continue
            name = f"{UNSEEN_PREFIX}{first + len(out)}-{_dims_label(spec, dims)}-{dtype}-{label(attrs)}"
            out.append(Case(name=name, dims=dict(dims), dtype=dtype, seed=_new_seed(rng, used), band=BANDS[0],
                            tail=_has_tail(spec, dims), unseen=True, special=special, tiny=special,
                            masks=special, edges=special, peaks=special and peaks, attrs=attrs))
    return out


def _fresh_seed() -> int:
    import secrets

    return secrets.randbits(63)


def verification_seed(run_seed: int, target: bytes) -> int:
    """The seed one verification draws its unseen cases from: the run's seed and the bytes of the verified file.

    Why not the run's seed alone: a pipeline run verifies many attempts with one recorded seed, and reports show
    agents each unseen case's shape; a kernel written after a failing report could special-case exactly those
    shapes (held-out attack A10). A new kernel text gets new unseen cases; a replay, with the same recorded seed
    and the same files, gets the same ones.
    """
    import hashlib

    digest = hashlib.sha256(int(run_seed).to_bytes(8, "little") + b"\0" + target).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def unseen_version(run_seed: int) -> int:
    """The drawing a verification with this run seed uses: 1 for the shipped traces' seeds, else the current."""
    return 1 if int(run_seed) in LEGACY_RUN_SEEDS else UNSEEN_VERSION


def draw_seed() -> int:
    """A fresh unseen-case seed (63 random bits), for a verification run that was not given one.

    (The test suite replaces this function by a per-test constant so that tests stay deterministic.)
    """
    return _fresh_seed()


FILL_FACTOR = 4
"""The "fill" size of an axis is at most this many times the SPEC's largest size, on top of the byte cap: a SPEC's
tolerances are set for its own sizes, and a reduction over a much longer axis accumulates more rounding than
they allow (measured: an honest-looking layer_norm_backward's dgamma, a sum over the dynamic axis, sat at the
fp32 tolerance at 12x, so its pass/fail depended on the last bits); attention-like kernels also do more than
linear work per element."""


def _axis_sizes(spec: Spec, axis: str, rng: np.random.Generator, version: int = UNSEEN_VERSION
                ) -> list[tuple[str, int]]:
    """(label, size) for ``axis``, most telling first, none of the SPEC's own; size ``0`` stands for the "fill"
    size, which :func:`unseen_cases` draws against the byte cap (it depends on the other dims and the dtype).

    - a **tail of 1** (16k + 1): a tile count ``(n + c) // 16`` is exact for every tail >= 16 - c and drops the
      last rows for every tail below it; only a tail of 1 catches every c < 15 whatever the seed;
    - **fill**: the top of what the byte cap allows (at most :data:`FILL_FACTOR` x the SPEC's largest; version 2:
      above 3x the SPEC's largest, in every dtype; version 1: half to all of it): a kernel that is right only up
      to some size it clamps to must clamp above that;
    - (version 2) a **power of two** >= 128 (8 tiles), at most the fill bound: a "fast path" for multiples of
      32, 64 or 128 rows is taken on it, and from its second step on (128 = two 64-row steps);
    - an **aligned** size (16k with k odd, off the SPEC): a "fast path" taken on multiples of the tile that
      assumes 32-, 64-, ... row alignment is wrong on it;
    - a **uniform tail** (16k + r, r drawn from 2..14): every tail is as likely as any other;
    - **one less than a tile multiple** (16k - 1), a **small** size (1..8; version 4: 1), a **larger** one (1.5x..3x the
      SPEC's largest, log-uniform, any remainder).

    ``k`` is drawn from 1 .. 2x the SPEC's largest size in tiles, so no size class stays near the SPEC's.
    (Held-out attack A1: the earlier draw never exceeded ~1.5x the SPEC, never drew a multiple of 16 and rarely
    an even tail - a kernel clamping its tile count or wrong on aligned sizes passed every seed. Red team s16 B:
    the aligned size is never a multiple of 32, so a 64-row fast path wrong from its second step passed ~97% of
    verifications - hence the power-of-two class.)
    """
    t = TAIL_MULTIPLE
    seen = sorted({int(s[axis]) for s in spec.p0_shapes if axis in s}) or [t]
    hi = seen[-1]
    span = max(3, 2 * hi // t + 2)

    def k() -> int:
        return int(rng.integers(1, span))

    tail_one = k() * t + 1
    aligned = (2 * int(rng.integers(0, span // 2)) + 1) * t  # an odd multiple: wrong for every 2**j >= 32 alignment
    while aligned in seen:
        aligned += 2 * t
    uniform_tail = int(rng.integers(0, span)) * t + int(rng.integers(2, t - 1))
    tile_minus_one = k() * t - 1
    small = int(rng.integers(1, t // 2 + 1))
    if version >= 4:  # the draw stays, so every class after it is version 3's
        small = 1
    larger = int(np.exp(rng.uniform(np.log(max(2.0, 1.5 * hi)), np.log(max(3.0, 3.0 * hi)))))
    classes: tuple[tuple[str, int], ...]
    if version < 2:
        classes = (("tail1", tail_one), ("fill", 0), ("aligned", aligned), ("tail", uniform_tail),
                   ("tile-1", tile_minus_one), ("small", small), ("larger", larger))
    else:
        powers, top = _powers(spec, axis, version)
        pow2 = powers[int(rng.integers(0, len(powers)))] if powers else 2 * top
        # most telling first: the tail of 1, the top sizes and the power of two run in every verification
        # whatever the number of dtypes and axes; "tail" and "larger" are the first left out when calls run short
        classes = (("tail1", tail_one), ("fill", 0), ("pow2", pow2), ("aligned", aligned), ("small", small),
                   ("tile-1", tile_minus_one), ("tail", uniform_tail), ("larger", larger))
    if version >= 9:
        # (version 9) one size of each 2-adic valuation 32, 64 and 128 (2**j times an odd number): a fast path guarded
        # by a multiple of 2**j that assumes 2**(j+1) is wrong exactly there (red team s34b: a `rows % 64` path
        # unrolled by 128 rows passed 99% of verifications - "aligned" is an odd multiple of 16, and the power of two
        # a multiple of every smaller one)
        def valued(j: int) -> int:  # 2**j times an odd number, within the fill bound, none of the SPEC's
            odd = int(rng.integers(0, 3)) % (max(0, (FILL_FACTOR * hi >> j) - 1) // 2 + 1)
            size = (2 * odd + 1) << j
            while size in seen:
                size += 2 << j
            return size

        for j, label in ((5, "a32"), (6, "a64"), (7, "a128")):
            classes += ((label, valued(j)),)
        if version >= 12:
            # (version 12, red team s37c) a second small size, 2..8 (a decode batch: a `n <= 8` one-row path passed
            # 95% of verifications - only size 1 and, rarely, a drawn tail were under 16), and a size of valuation
            # 256 (a 512-row block path for `n % 256 == 0` dropped an odd 256-row block and passed 80%)
            classes += (("small2", int(rng.integers(2, t // 2 + 1))),)
            size = valued(8)
            if size != pow2:  # a power of two of 256 is of valuation 256 itself (and runs in every dtype)
                classes += (("a256", size),)
        classes = tuple(sorted(classes, key=lambda c: _ORDER_V9.index(c[0])))
    out: list[tuple[str, int]] = []
    for label, size in classes:
        if size not in seen and size not in [o[1] for o in out]:
            out.append((label, size))
    return out


def _powers(spec: Spec, axis: str, version: int) -> tuple[list[int], int]:
    """(the powers of two the power-of-two class of ``axis`` is drawn from, least first; the top of the range)."""
    t = TAIL_MULTIPLE
    seen = sorted({int(s[axis]) for s in spec.p0_shapes if axis in s}) or [t]
    hi = seen[-1]
    top = max(4 * t, 1 << (FILL_FACTOR * hi).bit_length() - 1)  # the largest power of two <= 4x (>= 4 tiles)
    if version >= 5:  # 128 at least whatever the SPEC's size (red team s30b: a 64-row fast path, SPEC B = 21)
        top = max(top, _POW2_MIN)
    kept = version >= 6 and spec.outputs and all(axis in o.shape for o in spec.outputs)
    if kept:
        top = max(top, _POW2_KEPT)  # no output reduces over the axis: no rounding grows with it
    # (version 7) a kept axis from 256: 128 rows are one 128-row block, where a slip in the next block's offset
    # cannot show (red team s32: the remaining misses of g2s were draws of 128)
    low = min(2 * _POW2_MIN if kept and version >= 7 else _POW2_MIN, top)
    if version >= 9:  # at least four blocks of the SPEC's largest power of two: a block path right for one or two
        # blocks (a slot index `b % 2` for the block index) is wrong from the third (red team s34b, SPEC B 256/269)
        low = min(max(low, 4 << (hi.bit_length() - 1)), top)
    return [p for p in (1 << j for j in range(low.bit_length() - 1, top.bit_length())) if p not in seen], top


def _bytes(spec: Spec, dims: dict[str, int], dtype: str) -> int:
    """Inputs + outputs of a case of these dims and dtype (what every cap and budget here is counted in)."""
    return case_bytes(spec, Case(name="probe", dims=dims, dtype=dtype, seed=0, band=BANDS[0]))


def _fill(spec: Spec, dims: dict[str, int], axis: str, dtype: str, cap: int, rng: np.random.Generator,
          version: int = UNSEEN_VERSION) -> int:
    """A size for ``axis`` up to the largest one whose case fits ``cap`` bytes (and at most :data:`FILL_FACTOR` x
    the SPEC's largest size), with a random remainder: above three quarters of it (version 2: so above 3x the
    SPEC's largest when the cap does not bind), or above half of it (version 1)."""
    seen = [int(s[axis]) for s in spec.p0_shapes if axis in s] or [TAIL_MULTIPLE]
    top = FILL_FACTOR * max(seen)

    def fits(n: int) -> bool:
        return _bytes(spec, {**dims, axis: n}, dtype) <= cap

    if not fits(1):
        return 0
    lo, hi = 1, top
    if not fits(hi):
        while hi - lo > 1:  # the largest size that fits: case bytes grow with the size
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        hi = lo
    low = hi // 2 if version < 2 else 3 * hi // 4 + 1
    return max(1, int(rng.integers(max(1, low), hi + 1)))


def _fit(spec: Spec, dims: dict[str, int], axis: str, dtype: str, cap: int) -> dict[str, int] | None:
    """``dims`` with ``axis`` halved (its tail kept) until the case holds at most ``cap`` bytes; None if never."""
    size = dims[axis]
    while True:
        trial = {**dims, axis: size}
        if _bytes(spec, trial, dtype) <= cap:
            return trial
        if size <= 1:
            return None
        size = _halve(size)


def _halve(size: int) -> int:
    """About half of ``size``, its tail (remainder to :data:`TAIL_MULTIPLE`) kept."""
    t = TAIL_MULTIPLE
    return max(1, (size // t // 2) * t + size % t) if size > t else max(1, size // 2)


def _shrunk(spec: Spec, dims: dict[str, int], axis: str, dtype: str, cap: int, label: str,
            low: int = 0) -> dict[str, int] | None:
    """(version 9) ``dims`` with its class's axis halved (:func:`_fit`: its tail kept, so a tail of 1 stays one and a
    power of two stays one) until the case fits ``cap`` - the byte budget left for the pair; None when it never fits,
    lands on a SPEC size, or a power of two falls under :data:`_POW2_MIN` or ``low`` (the least of its class)."""
    got = _fit(spec, dims, axis, dtype, cap)
    if got is None or got[axis] in [int(sh.get(axis, -1)) for sh in spec.p0_shapes]:
        return None
    if label == "pow2" and got[axis] < max(_POW2_MIN, low):
        return None
    return got


def _small_joint(spec: Spec, per_axis: list[tuple[int, str, list[tuple[str, int]]]], axis: str,
                 base: dict[str, int], dtype: str, cap: int) -> dict[str, int] | None:
    """(version 9) ``axis`` at 1 and every other dynamic axis at its tail of 1 (16k + 1), the largest of those halved
    (its tail kept) until the case fits ``cap``; None when an axis has no tail of 1 or it never fits. Why: a size-1
    path (a decode step, a single request) is its own code; its tile count is wrong only where another axis has a
    short tail, and the small size takes the other axes from a P0 shape (red team s34: ``B == 1`` with a ``(n + 7) //
    16`` tile count over H x S passed every seed - its P0 shapes had tails of 13 and 0)."""
    dims = {**base, axis: 1}
    others = []
    for _, other, sizes in per_axis:
        if other == axis:
            continue
        tails = [size for label, size in sizes if label == "tail1"]
        if not tails:
            return None
        dims[other] = tails[0]
        others.append(other)
    return _halved_largest(spec, dims, others, dtype, cap)


def _valued(spec: Spec, shapes: list[dict[str, int]], base: dict[str, int], axis: str, sizes: tuple[int, int],
            dtype: str, cap: int) -> dict[str, int] | None:
    """(version 9) A valuation class's shape within ``cap``: its drawn size, else its smallest (``2**j``), on ``base``
    and then on the other P0 shapes - never a halved size, whose 2-adic valuation would differ; None if none fits."""
    for b in [base, *(sh for sh in shapes if sh is not base)]:
        for size in sizes:
            dims = {**b, axis: size}
            if _bytes(spec, dims, dtype) <= cap:
                return dims
    return None


def _ones(spec: Spec, per_axis: list[tuple[int, str, list[tuple[str, int]]]], base: dict[str, int],
          dtypes: list[str], offset: int, cap: int) -> list[tuple[str, dict[str, int], list[str]]]:
    """(version 9) Every dynamic axis at 1 at once, in every dtype ("ones"); with three axes or more also each pair of
    axes at 1 with the others at their tail of 1, in one dtype each ("ones-pair"). Why: size 1 on one axis takes the
    others from a P0 shape or their tails of 1, so ``B == S == 1`` (one decode step of one request) never ran, and a
    path for it that folds the row into another tile shape passed every seed (red team s34b)."""
    out: list[tuple[str, dict[str, int], list[str]]] = []
    axes = [axis for _, axis, _ in per_axis]
    out.append(("ones", {**base, **{a: 1 for a in axes}}, list(dtypes)))
    if len(axes) >= 3:
        tails = {axis: next((size for label, size in sizes if label == "tail1"), None) for _, axis, sizes in per_axis}
        for i, a in enumerate(axes):
            for b in axes[i + 1:]:
                dims = {**base, **{o: tails[o] or 1 for o in axes}, a: 1, b: 1}
                dtype = dtypes[(offset + i) % len(dtypes)]
                if _bytes(spec, dims, dtype) <= cap:
                    out.append(("ones-pair", dims, [dtype]))
    return out


def _joint(spec: Spec, per_axis: list[tuple[int, str, list[tuple[str, int]]]], base: dict[str, int], dtype: str,
           cap: int, rng: np.random.Generator) -> dict[str, int] | None:
    """The joint shape (version 3): ``base`` with every dynamic axis at one of its drawn tail sizes ("tail1" or
    "tail"), the largest axis halved (its tail kept, :func:`_halve`) until the case fits ``cap``; None when it never
    fits."""
    dims = dict(base)
    for _, axis, sizes in per_axis:
        tails = [size for label, size in sizes if label in ("tail1", "tail")]
        if not tails:
            return None
        dims[axis] = tails[int(rng.integers(0, len(tails)))]
    return _halved_largest(spec, dims, [axis for _, axis, _ in per_axis], dtype, cap)


def _halved_largest(spec: Spec, dims: dict[str, int], axes: list[str], dtype: str, cap: int) -> dict[str, int] | None:
    """``dims`` (changed in place) with the largest of ``axes`` halved, its tail kept (:func:`_halve`), until the case
    holds at most ``cap`` bytes; None when the largest reaches 1 first."""
    while _bytes(spec, dims, dtype) > cap:
        axis = max(axes, key=lambda a: dims[a])
        if dims[axis] <= 1:
            return None
        dims[axis] = _halve(dims[axis])
    return dims


def case_cap(spec: Spec, spec_cases: list[Case], version: int = UNSEEN_VERSION) -> int:
    """Most bytes (inputs + outputs) one unseen case may hold: :data:`FILL_FACTOR` + 0.25 times the largest SPEC
    case (version 4 and before: 1.25x), at least 4 MiB, at most :data:`CASE_BYTES_CAP`."""
    largest = max((case_bytes(spec, c) for c in spec_cases), default=0)
    factor = FILL_FACTOR + 0.25 if version >= 5 else 1.25
    return min(CASE_BYTES_CAP, max(CASE_BYTES_CAP // 16, int(largest * factor)))


def total_cap(spec: Spec, spec_cases: list[Case], version: int = UNSEEN_VERSION) -> int:
    """Most bytes all unseen cases of one verification hold together (see :data:`TOTAL_BYTES_FLOOR`; version 9: twice
    it, for the classes every verification now runs in every dtype - red team s34b: on a three-dtype SPEC of 9-18 MiB
    cases the tails of 1, the valuation sizes and the fp32/fp16 powers of two spent 256 MiB before bf16's came)."""
    largest = max((case_bytes(spec, c) for c in spec_cases), default=0)
    return max(TOTAL_BYTES_FLOOR * (2 if version >= 9 else 1), largest // 4)


def unseen_cases(spec: Spec, spec_cases: list[Case], seed: int, version: int = UNSEEN_VERSION,
                 hints: object = None) -> list[Case]:
    """The unseen cases of one verification (deterministic in ``seed`` and ``version``; see the module docstring).

    ``version`` 1 is the drawing the shipped traces were recorded with (:func:`unseen_version`). ``hints`` (version 23:
    a :class:`runtime.verify._hints.SizeHints` of the verified file) adds :func:`hint_plan`'s sizes."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _STREAM])
    shapes = [dict(s) for s in spec.p0_shapes] or [{}]
    dtypes = list(spec.supported_dtypes)
    cap = case_cap(spec, spec_cases, version)
    budget = [total_cap(spec, spec_cases, version)]
    used_seeds = {c.seed for c in spec_cases}
    out: list[Case] = []
    calls = MAX_UNSEEN if version >= 7 else MAX_UNSEEN_V6

    def new_seed() -> int:
        return _new_seed(rng, used_seeds)

    def fits(dims: dict[str, int], dtype: str, n: int = 1) -> bool:
        """``n`` more cases of this shape stay within the calls and the total byte budget."""
        size = _bytes(spec, dims, dtype)
        return len(out) + n <= calls and n * size <= budget[0]

    def add(dims: dict[str, int], dtype: str, special: bool = False, band: str | None = None,
            alias: list[str] | None = None, vector: str = "", whole: dict[str, str] | None = None,
            seeds: np.random.Generator | None = None, scaled: bool = False) -> None:
        if not fits(dims, dtype):
            return
        budget[0] -= _bytes(spec, dims, dtype)
        band = band or BANDS[len(out) % len(BANDS)]
        name = f"{UNSEEN_PREFIX}{len(out) + 1}-{_dims_label(spec, dims)}-{dtype}"
        if alias is not None:
            name += "-" + "_".join(alias[1:]) + f"_is_{alias[0]}"
        # (version 7) every other special case has its special vectors along a leading axis, and no tiny rows
        # (version 13) a vector case keeps the rows of its other inputs (its one-vector inputs are whole)
        columns = special and version >= 7 and sum(c.special for c in out) % 2 == 1 and not vector
        out.append(Case(name=name, dims=dims, dtype=dtype, band=band, whole=dict(whole or {}),
                        seed=new_seed() if seeds is None else _new_seed(seeds, used_seeds),
                        tail=_has_tail(spec, dims), unseen=True, special=special and version >= 2,
                        tiny=special and version >= 6 and not columns, columns=columns,
                        orient=sum(c.columns for c in out), masks=special and version >= 7,
                        middle=columns and version >= 8, edges=special and version >= 8,
                        peaks=special and version >= 12, alias=list(alias or ()), vector=vector,
                        families=special and version >= 17, scaled=scaled))

    planned: list[tuple[dict[str, int], str]] = []
    labels: list[tuple[str, str]] = []
    """(class, axis) of each planned entry (version 9: which pairs must run, and which axis to shrink)"""
    first_round = 0
    every_dtype = _EVERY_DTYPE_V7 if version >= 7 else _EVERY_DTYPE if version >= 2 else _EVERY_DTYPE_V1
    per_axis = [(a_i, axis, _axis_sizes(spec, axis, rng, version)) for a_i, axis in enumerate(spec.dynamic_axes)]
    offset = int(rng.integers(0, len(dtypes)))  # which dtype each size class gets is drawn too (attack A1b)
    for s_i in range(max((len(sizes) for _, _, sizes in per_axis), default=0)):  # round robin: most telling first
        for a_i, axis, sizes in per_axis:
            if s_i >= len(sizes):
                continue
            label, size = sizes[s_i]
            base = shapes[(a_i + s_i) % len(shapes)]
            # the most telling classes run in every dtype: a dtype-specific path cannot hide from them
            for dtype in dtypes if label in every_dtype else [dtypes[(offset + a_i + s_i) % len(dtypes)]]:
                got = size or _fill(spec, base, axis, dtype, cap, rng, version)
                if not got or got in [int(sh.get(axis, -1)) for sh in shapes]:
                    continue
                dims = _fit(spec, {**base, axis: got}, axis, dtype, cap)
                if label in _VALUATION and (dims is None or dims[axis] != got):  # halving changed its valuation:
                    dims = _valued(spec, shapes, base, axis, (got, _VALUATION[label]), dtype, cap)
                if dims is not None and version >= 5 and dims[axis] in [int(sh.get(axis, -1)) for sh in shapes]:
                    continue  # halved onto a SPEC size: the SPEC runs it already
                if dims is not None and (dims, dtype) not in planned:
                    planned.append((dims, dtype))
                    labels.append((label, axis))
            if label == "small" and version >= 9 and len(per_axis) >= 2:
                dtype = dtypes[(offset + a_i + s_i + 1) % len(dtypes)]
                dims = _small_joint(spec, per_axis, axis, base, dtype, cap)
                if dims is not None and (dims, dtype) not in planned:
                    planned.append((dims, dtype))
                    labels.append(("small-joint", axis))
                if a_i == len(per_axis) - 1:  # after every axis's size 1: the corners of ones (red team s34b)
                    for label2, dims, dts in _ones(spec, per_axis, base, dtypes, offset, cap):
                        for dtype in dts:
                            if (dims, dtype) not in planned:
                                planned.append((dims, dtype))
                                labels.append((label2, ""))
        if s_i == 0:
            first_round = len(planned)  # the tails of 1
    if version >= 3 and len(per_axis) >= 2:  # after the tails of 1, before the fill sizes: never the first left out
        dtype = dtypes[(offset + len(per_axis)) % len(dtypes)]
        dims = _joint(spec, per_axis, shapes[int(rng.integers(0, len(shapes)))], dtype, cap, rng)
        if dims is not None and (dims, dtype) not in planned:
            planned.insert(first_round, (dims, dtype))
            labels.insert(first_round, ("joint", ""))
    if version >= 9:  # room for every class that must run, two calls each, and the reruns
        must = sum(label in _MUST_V9 for label, _ in labels)
        calls = min(MAX_UNSEEN_V9 + (MAX_UNSEEN_V12_MORE if version >= 12 else 0), max(calls, 2 * must + 4))
    # two calls per new shape and dtype: the same-shape comparison needs a second value set
    kept = list(zip(planned[: calls // 2 - 1], labels, strict=False))  # leaves room for the P0 reruns
    floors = {a: (_powers(spec, a, version)[0] or [0])[0] for a in spec.dynamic_axes} if version >= 9 else {}

    def pair(dims: dict[str, int], dtype: str) -> int:
        return 2 * _bytes(spec, dims, dtype)

    pow2_runs: list[tuple[dict[str, int], str, str]] = []  # (version 13) the powers of two that ran
    ran: list[tuple[dict[str, int], str, str, str]] = []  # (version 21) the pairs that ran: dims, dtype, class, axis
    for i, ((dims, dtype), (label, axis)) in enumerate(kept):
        if version >= 9 and label in _MUST_V9 and axis and len(out) + 2 <= calls:
            # (red team s34b: the fp32 power of two took the budget at the 64 MiB case cap and bf16's was shrunk
            # to nothing) every pair before a power of two leaves room for it at its least size, and the fills,
            # after them, share what is left dtype by dtype; a pair over what it may take is shrunk to it
            allowed = budget[0] - sum(pair({**d, a: floors[a]}, t) for (d, t), (lb, a) in kept[i + 1:]
                                      if lb == "pow2" and floors[a])
            if label == "fill":
                allowed //= max(1, sum(lb == "fill" for _, (lb, _) in kept[i:]))
            if pair(dims, dtype) > allowed:
                low = floors.get(axis, 0) if label == "pow2" else 0
                dims = _shrunk(spec, dims, axis, dtype, allowed // 2, label, low) or dims
        if fits(dims, dtype, 2):  # a pair or nothing: one call of a shape cannot be compared with another
            add(dims, dtype)
            add(dims, dtype, special=True)  # the pair's second value set holds special values (version 2)
            if label == "pow2":
                pow2_runs.append((dict(dims), dtype, axis))
            ran.append((dict(dims), dtype, label, axis))
    for s_i, base in enumerate(shapes[:2]):  # fresh seeds on the SPEC's own shapes (they have 3 seeds already)
        dtype = dtypes[s_i % len(dtypes)]
        if _bytes(spec, base, dtype) <= cap:  # a several-GB SPEC case is not run again
            add(dict(base), dtype, special=True)
    groups: dict[tuple, int] = {}
    for c in [*spec_cases, *out]:
        key = (tuple(sorted(c.dims.items())), c.dtype)
        groups[key] = groups.get(key, 0) + 1
    for c in spec_cases:
        key = (tuple(sorted(c.dims.items())), c.dtype)
        if groups.get(key) == 1 and case_bytes(spec, c) <= cap:
            groups[key] = 2
            add(dict(c.dims), c.dtype)
    if version >= 10:  # (red team s35) every input at the top of its range, one sign, on the largest SPEC shape -
        # and the same with the first input's last axis split between the two ends (sums that climb, then cancel)
        calls += 2 * len(dtypes)  # room of its own: the classes above keep theirs
        top = max(shapes, key=lambda sh: _bytes(spec, sh, dtypes[0]))
        for dtype in dtypes:
            if _bytes(spec, top, dtype) <= cap:
                add(dict(top), dtype, band=TOP_BAND)
                add(dict(top), dtype, band=TOP_SPLIT_BAND)
    if version >= 12:  # (red team s37) one tensor passed for several inputs, as in a caller's `f(x, x)`
        plan12 = _alias_plan(spec, shapes, dtypes)
        calls += len(plan12)
        for dims, dtype, group in plan12:
            if _bytes(spec, dims, dtype) <= cap:
                add(dict(dims), dtype, band=BANDS[0], alias=group)  # both signs: an offset band may hold one only
    if version >= 13:  # (red team s38) a float input that is one vector, whole: near-constant, peaked, sorted, ...
        plan13 = [(dims, dtype, kind) for dims, dtype, kind in vector_plan(spec, shapes, dtypes)
                  if _bytes(spec, dims, dtype) <= cap]
        calls += len(plan13)  # room of their own, calls and bytes: the classes above keep theirs
        budget[0] += sum(_bytes(spec, dims, dtype) for dims, dtype, _ in plan13)
        for dims, dtype, kind in plan13:
            add(dict(dims), dtype, special=True, band=BANDS[0], vector=kind)
        kept_axes = sum(bool(spec.outputs) and all(a in o.shape for o in spec.outputs) for a in spec.dynamic_axes)
        calls += 2 * kept_axes  # calls of their own; the bytes are what the total cap leaves (the verifier holds
        # every case at once), each pair halved to its share of it
        plan15: list[tuple[dict[str, int], str, dict[str, str]]] = []
        plan17: list[tuple[dict[str, int], str, str, dict[str, str]]] = []
        reserved = 0
        if version >= 15:  # (red team s39) bytes out of the total cap, set aside before the tails take what is left
            plan15 = [(dims, dtype, whole) for dims, dtype, whole in
                      [*decode_vector_plan(spec, shapes, dtypes), *end_plan(spec, shapes, dtypes)]
                      if _bytes(spec, dims, dtype) <= cap]
            reserved = _reserve(spec, [(dims, dtype) for dims, dtype, _whole in plan15], reserved, budget[0])
            if version >= 17:  # (red team s40) the same for the value families' whole vectors, within the calls
                # version 9 allows (every class of version 9 keeps its room: the families' rows run in them anyway)
                room = MAX_UNSEEN_V9 - (len(out) + 2 * kept_axes + len(plan15))
                plan17 = [entry for entry in family_plan(spec, shapes, dtypes)
                          if _bytes(spec, entry[0], entry[1]) <= cap][:max(0, room)]
                reserved = _reserve(spec, [(dims, dtype) for dims, dtype, _v, _w in plan17], reserved, budget[0])
            budget[0] -= reserved
        tails = pow2_tail_plan(spec, pow2_runs, seed, min(cap, budget[0] // max(1, 2 * kept_axes)))
        for dims, dtype in tails:
            if fits(dims, dtype, 2):
                add(dims, dtype)
                add(dims, dtype, special=True)
        budget[0] += reserved
        if plan15:  # after the tails, so that every case before keeps its band (drawn from its position)
            calls += len(plan15)  # calls of their own; a case over the bytes left is left out
            seeds15 = np.random.default_rng([int(seed) & ((1 << 63) - 1), _V15_STREAM])
            for dims, dtype, whole in plan15:
                add(dict(dims), dtype, band=BANDS[0], whole=whole, seeds=seeds15)
        if plan17:  # (red team s40) after every other case, so that each case of version 16 keeps its seed and band
            calls += len(plan17)  # calls of their own; a case over the bytes left is left out
            seeds17 = np.random.default_rng([int(seed) & ((1 << 63) - 1), _V17_STREAM])
            for dims, dtype, vector, whole in plan17:
                add(dict(dims), dtype, special=True, band=BANDS[0], vector=vector, whole=whole, seeds=seeds17)
    singles_from = len(out)  # (version 23) the single calls of the sweep, the cover and the block plan follow

    def own(plan: list[tuple[dict[str, int], str]], *stream: int, **kind: bool) -> None:
        """A plan after every other case, with calls and a seed stream of its own (``stream``: the key after the
        verification's seed), so that each case of the versions before keeps its draw; a case over the bytes left
        is left out (`add`)."""
        nonlocal calls
        calls += len(plan)
        seeds = np.random.default_rng([int(seed) & ((1 << 63) - 1), *stream])
        for dims, dtype in plan:
            add(dims, dtype, seeds=seeds, **kind)

    if version >= 21:  # (red team s44) after every other case, so that each case of version 20 keeps its draw
        own(sweep_plan(spec, shapes, dtypes, ran, every_dtype, seed, cap), _V21_STREAM)
    if version >= 22:  # (red team round 35)
        own(cover_plan(spec, shapes, dtypes, out, seed, cap), _V22_STREAM, 1, scaled=True)
    if version >= 23:  # (red team round 36)
        own(block_plan(spec, shapes, dtypes, out, seed, cap, version), _V23_STREAM, 1, scaled=True)
        if hints:  # the sizes the verified file names itself (its bounds, residues and blocks)
            own(hint_plan(spec, shapes, dtypes, out, hints, seed, cap, version), _V23_HINT_STREAM, 1,
                scaled=True)
        # a same-shape partner for every single call of the sweep, the cover and the block plan up to PAIR_BYTES
        # (red team round 35's `r35_baked_single_calls`: a host answer baked into the program for sizes that ran once)
        own(single_partners(spec, spec_cases, out, singles_from), _V23_STREAM, 2, special=True)
    if version >= 24:  # (red team round 37) every tail in every window up to 2x, after every other case
        own(tail_cover_plan(spec, shapes, dtypes, out, seed, cap), _V24_STREAM, scaled=True)
    return out


_V21_STREAM = 0x721
PARTIAL_SIZES = (9, 15)
"""(version 21) One partial tile of more than half a tile: a size drawn from these bounds on every dynamic axis."""
TWO_TILE_SIZES = (18, 30)
"""(version 21) A full tile and a partial one of 2..14 rows: a size drawn from these bounds on every dynamic axis."""
MAX_SWEEP_PER_DTYPE = 16
"""(version 21) At most this many sweep calls per supported dtype (:func:`sweep_plan`): all of them for one axis (the
silu2 fixture: about 20 in two dtypes); for several axes the copies of the large one-dtype classes are the first left
out, then the valuations above 4x."""
_V21_FIRST_COPIES = frozenset({"tile-1", "small2", "a32", "a64", "aligned"})
"""(version 21) the one-dtype classes copied to the other dtypes before the new sizes past two tiles: small sizes"""
_V21_VALUATIONS = (8, 9)
"""(version 21) On an axis every output keeps: an odd multiple (3 or more) of 256 and of 512 rows."""


def sweep_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str],
               ran: list[tuple[dict[str, int], str, str, str]], every_dtype: tuple[str, ...], seed: int, cap: int
               ) -> list[tuple[dict[str, int], str]]:
    """(version 21, red team s44) One call each, after every other case, from a stream of their own:

    - every size class that ran in one drawn dtype (one less than a tile multiple, the 2-adic valuations, the small
      decode batch, the aligned, uniform-tail and larger sizes) once more in each other supported dtype: a
      dtype-specific path wrong on one class passed half the verifications of a two-dtype op (a bf16 path with a
      64-row step for odd multiples of 32, a bf16 tile count dropping a tail of 15, a decode path for 2..8 rows);
    - on every dynamic axis, in every dtype, a size with **one partial tile over half a tile** (9..15 rows: a decode
      path written for at most 8 rows passed 90% of verifications - version 20 drew 9..14 in under 3% of runs) and one
      of **a full tile and a partial one** (18..30: a second tile's valid rows off by one passed 77%);
    - on every dynamic axis, in every dtype, a size past two tiles (up to 4x the SPEC's largest) with a tail (2..14) no
      other size of the run has, while there is one (a bf16 path above 2x with a `(n + 3) // 16` tile count passed 28%), and an odd multiple of the tile past one tile (version 20's aligned size is the tile itself
      one run in five: a fp32 path walking 32-row steps for multiples of 16 passed 58%);
    - on an axis every output keeps, an **odd multiple of 256 and of 512 above the SPEC's 4x** (up to the power-of-two
      bound, :data:`_POW2_KEPT`): a path for ``n % 512 == 256`` walking 512-row blocks passed every verification of a
      77-row SPEC, whose 2-adic sizes stop at 4x (308: the odd multiple of 256 is 256 itself, the power of two).

    Each case is halved (its tail kept) to the case cap; a valuation case over it is left out (halving would change
    its valuation). Sizes of the SPEC's own shapes are not run again. At most :data:`MAX_SWEEP_PER_DTYPE` calls per
    dtype, in the order of the tiers below (the first left out last).

    The fresh-tail size takes the other dynamic axes at unseen sizes of the run (a kernel's batched path for ``B > 4``
    wrong on a tail of ``S`` passed 63% of the runs of a [B, S, D] op: every size of ``S`` ran beside a SPEC ``B``)."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _V21_STREAM, 1])
    tiers: list[list[tuple[dict[str, int] | None, str]]] = [[], [], [], [], []]
    """most telling and cheapest first: partial tiles; copies of the small classes; a fresh tail and an odd multiple;
    the valuations above 4x; the other copies"""
    for dims, dtype, label, axis in ran:
        if label in every_dtype or not axis:
            continue
        tier = tiers[1] if label in _V21_FIRST_COPIES else tiers[4]
        tier.extend((dict(dims), other) for other in dtypes if other != dtype)
    t = TAIL_MULTIPLE
    for a_i, axis in enumerate(spec.dynamic_axes):
        base = shapes[a_i % len(shapes)]
        spec_sizes = {int(sh.get(axis, -1)) for sh in shapes}
        for lo, hi in (PARTIAL_SIZES, TWO_TILE_SIZES):
            size = int(rng.integers(lo, hi + 1))
            if size in spec_sizes:
                size = lo + (size - lo + 1) % (hi - lo + 1)
            tiers[0].extend((_fit(spec, {**base, axis: size}, axis, dtype, cap), dtype) for dtype in dtypes)
        span = max(3, 2 * max(spec_sizes) // t + 2)
        far = max(3, FILL_FACTOR * max(spec_sizes) // t)  # up to the SPEC's 4x
        drawn = {int(d[axis]) % t for d, _t, _lb, a in ran if a == axis} | {s % t for s in spec_sizes}
        fresh = [r for r in range(2, t - 1) if r not in drawn] or list(range(2, t - 1))
        others = {a: sorted({int(d[a]) for d, _t, _lb, _a in ran if a in d and int(d[a]) % t}
                            - {int(sh.get(a, -1)) for sh in shapes})
                  for a in spec.dynamic_axes if a != axis}
        for dtype in dtypes:  # a tail no size of the run has (while there is one), in every dtype, past two tiles,
            # the other axes at unseen sizes of the run with a partial tile, as the joint shape (a batched path wrong
            # on the tail of another axis; the corner tile partial on every axis)
            r = fresh.pop(int(rng.integers(0, len(fresh)))) if len(fresh) > 1 else fresh[0]
            joint = {a: sizes[int(rng.integers(0, len(sizes)))] for a, sizes in others.items() if sizes}
            tiers[2].append((_fit(spec, {**base, **joint, axis: int(rng.integers(2, far)) * t + r}, axis, dtype, cap)
                             or _fit(spec, {**base, axis: int(rng.integers(2, far)) * t + r}, axis, dtype, cap),
                             dtype))
            odd = 2 * int(rng.integers(1, max(2, span // 2))) + 1  # an odd multiple of a tile past one (16 is one)
            tiers[2].append((_fit(spec, {**base, axis: odd * t}, axis, dtype, cap), dtype))
        kept = bool(spec.outputs) and all(axis in o.shape for o in spec.outputs)
        if not kept:
            continue
        for j in _V21_VALUATIONS:
            odds = list(range(3, (_POW2_KEPT >> j) + 1, 2))
            if not odds:
                continue
            size = odds[int(rng.integers(0, len(odds)))] << j
            for dtype in dtypes:
                dims = {**base, axis: size}
                while _bytes(spec, dims, dtype) > cap and dims[axis] > (3 << j):
                    dims = {**base, axis: max(3, (dims[axis] >> j) // 2 | 1) << j}
                tiers[3].append((dims if _bytes(spec, dims, dtype) <= cap else None, dtype))
    plan: list[tuple[dict[str, int], str]] = []
    seen = {(tuple(sorted(d.items())), dt) for d, dt, _lb, _a in ran}
    for entry, dtype in (e for tier in tiers for e in tier):
        if entry is None or entry in shapes:
            continue
        key = (tuple(sorted(entry.items())), dtype)
        if key not in seen:
            seen.add(key)
            plan.append((entry, dtype))
    return plan[:MAX_SWEEP_PER_DTYPE * len(dtypes)]


_POW2_TAIL_STREAM = 0x7A1
POW2_TAIL_MAX = TAIL_MULTIPLE - 1
"""(version 13) The tail added to a kept axis's power of two is drawn from 1 .. this."""


def pow2_tail_plan(spec: Spec, pow2_runs: list[tuple[dict[str, int], str, str]], seed: int,
                   cap: int) -> list[tuple[dict[str, int], str]]:
    """(version 13) For each axis that every output keeps: the largest power of two its class draws from plus a
    tail ``r`` drawn from 1..:data:`POW2_TAIL_MAX` (its own random stream: no other draw moves), on the other dims
    and in the dtype of the largest power of two that ran (the first of them on a tie), halved with its tail kept (:func:`_fit`) until the case fits ``cap`` - a power
    of two is drawn up to the cap, so its successor often is over it.

    Why (accident round s38, ``rms_prefill64``): above :data:`FILL_FACTOR` x the SPEC's largest size an axis no output
    reduces over gets only its power of two (up to :data:`_POW2_KEPT`) - every size there a multiple of 64 - so a
    "prefill" path for ``n >= 1024`` walking 64-row blocks with ``n // 64`` never wrote its tail rows and passed every
    verification. A reduced axis is left out: its sizes stay under the fill bound, where the fill size's random
    remainder already draws tails."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _POW2_TAIL_STREAM])
    out: list[tuple[dict[str, int], str]] = []
    seen_shapes = [dict(s) for s in spec.p0_shapes]
    for axis in spec.dynamic_axes:
        if not spec.outputs or not all(axis in o.shape for o in spec.outputs):
            continue
        runs = [(dims, dtype) for dims, dtype, a in pow2_runs if a == axis]
        r = int(rng.integers(1, POW2_TAIL_MAX + 1))  # drawn for every kept axis, so one axis's draw never moves
        if not runs:
            continue
        dims, dtype = max(runs, key=lambda run: run[0][axis])
        powers, _ = _powers(spec, axis, 13)
        size = max([*powers, dims[axis]]) + r  # the largest power of two of the class, whichever one ran
        trial = _fit(spec, {**dims, axis: size}, axis, dtype, cap)  # halved, its tail kept, to the cap
        if trial is not None and trial[axis] > TAIL_MULTIPLE and trial not in seen_shapes:
            out.append((trial, dtype))
    return out


def vector_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str]) -> list[tuple[dict[str, int], str, str]]:
    """(version 13) The vector cases: each of :data:`runtime.opdir._inputs.VECTOR_KINDS` once, on the SPEC's shapes
    where every float input is a vector, a few or a scalar and some float input is one vector (``[N]``, ``[1, V]``: :func:`runtime.opdir._inputs.one_vector`) or a few
    (``[4, V]``: :func:`runtime.opdir._inputs.few_vectors`) and the dtypes in turn; none when no input ever is. Red team s38: such an input got only ties and the range's ends - a
    1-D softmax whose lazily rescaled running max forgot the sum and a one-pass variance of a [N] vector passed every
    verification (the kinds of :func:`runtime.opdir._inputs.apply_special_values` went to rows, and it has one)."""
    def vectors(dims: dict[str, int], dtype: str) -> bool:
        shapes = [tuple(t.concrete_shape(dims)) for t in spec.inputs if is_float(t.concrete_dtype(dtype))]
        small = [one_vector(sh) or few_vectors(sh) for sh in shapes]
        # only where the op's float data is vectors: a weight vector beside a [32, 16384] activation (sum_lstm's
        # w_state, b_state) made near-constant or sorted together aligned their extremes across every row, and the
        # vendor's honest fp16 kernel left its tolerance on 3 of 6 seeds (s38) - a magnitude the SPEC's tolerance
        # was never set for, not a bug the kinds are for (those read the vector as data: a softmax, a variance)
        return any(small) and all(ok or math.prod(sh) < 3 for ok, sh in zip(small, shapes, strict=True))

    plan: list[tuple[dict[str, int], str, str]] = []
    for k, kind in enumerate(VECTOR_KINDS):
        dtype = dtypes[k % len(dtypes)]
        where = [sh for sh in shapes[k % len(shapes):] + shapes[:k % len(shapes)] if vectors(sh, dtype)]
        if where:
            plan.append((where[0], dtype, kind))
    return plan


_V15_STREAM = 0x715
"""(version 15) The random stream of the seeds of :func:`decode_vector_plan`'s and :func:`end_plan`'s cases: no
other draw moves."""
DECODE_NEAR_CALLS = 3
"""(version 15) How many near-constant size-1 cases each dtype gets (:func:`decode_vector_plan`), each its own draw:
red team s39's one-row one-pass variance (``ln_decode_one_pass``) was outside the tolerance on 30 of 40 such rows
(fp16, 18 +- 0.04: the rounding of ``E[x^2]`` decides), so one case let a quarter of verifications pass; three, 1 in
64."""
MAX_END_CASES = 8
"""(version 15) Most cases of :func:`end_plan`."""


def decode_vector_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str]
                       ) -> list[tuple[dict[str, int], str, dict[str, str]]]:
    """(version 15) The size-1 cases of each dynamic axis (and, with two axes or more, of all of them at 1) on the
    first SPEC shape, where a float input that holds the axis is then one vector (``x`` [1, D] of a ``B == 1``
    decode step): that row holds each of :data:`runtime.opdir._inputs.VECTOR_KINDS` as a whole - near-constant
    :data:`DECODE_NEAR_CALLS` times in every dtype, the other kinds with the dtypes in turn -, every other input drawn
    as usual (``Case.whole``: a
    weight is not made a kind with it, the s38 caution of :func:`vector_plan`).

    Red team s39 (``ln_decode_one_pass``): a layer norm whose ``B == 1`` path computes the variance in one pass was
    off by 3x the tolerance on one token near a large constant and passed every verification: the size-1 cases ran
    with special values, but a single row gets only ties and the range's ends (the first row stays ordinary, the
    other kinds go to later rows), and version 13's vector cases run on the SPEC's shapes only."""
    if not shapes or not shapes[0] or not spec.dynamic_axes:
        return []
    base = {k: int(v) for k, v in shapes[0].items()}
    axes_sets = [[a] for a in spec.dynamic_axes]
    if len(spec.dynamic_axes) >= 2:
        axes_sets.append(list(spec.dynamic_axes))
    kinds = [("near", d) for d in dtypes for _ in range(DECODE_NEAR_CALLS)] + \
        [(k, dtypes[i % len(dtypes)]) for i, k in enumerate(VECTOR_KINDS) if k != "near"]
    seen = [{k: int(v) for k, v in sh.items()} for sh in shapes]
    plan: list[tuple[dict[str, int], str, dict[str, str]]] = []
    for axes in axes_sets:
        dims = {**base, **{a: 1 for a in axes}}
        if dims in seen:
            continue  # a SPEC shape: version 13's vector cases run there
        seen.append(dims)
        for kind, dtype in kinds:
            names = [t.name for t in spec.inputs if is_float(t.concrete_dtype(dtype))
                     and any(a in t.shape for a in axes) and one_vector(tuple(t.concrete_shape(dims)))]
            if names:
                plan.append((dims, dtype, {n: kind for n in names}))
    return plan


def end_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str]
             ) -> list[tuple[dict[str, int], str, dict[str, str]]]:
    """(version 15) Each float input that is one vector on a SPEC shape (a bias, a gamma, a per-channel scale) beside
    an input that is not, near-constant at the low end of its range as a whole in every dtype, then at the high end
    (the dtypes in turn), the other inputs drawn as usual (:data:`runtime.opdir._inputs.END_KINDS`); at most
    :data:`MAX_END_CASES`. Where every float input is a vector version 13's near-constant kind runs already.

    Accident round s39 (``gg_mask_zero``): a group-limited MoE gate filling its dropped groups with 0.0 for -inf was
    right wherever the kept groups held top-k experts with a positive score, i.e. unless the 1-D bias was mostly
    negative - drawn across [-0.5, 0.5], never; near-constant at -0.45, 24 rows of 64 wrong."""
    plan: list[tuple[dict[str, int], str, dict[str, str]]] = []
    for e, end in enumerate(("low", "high")):
        for i, t in enumerate(spec.inputs):
            for k, dtype in enumerate(dtypes if end == "low" else [dtypes[i % len(dtypes)]]):
                if not is_float(t.concrete_dtype(dtype)):
                    continue
                for sh in shapes[(i + k + e) % len(shapes):] + shapes[:(i + k + e) % len(shapes)]:
                    dims = {a: int(v) for a, v in sh.items()}
                    if one_vector(tuple(t.concrete_shape(dims))) and any(
                            is_float(o.concrete_dtype(dtype)) and not one_vector(tuple(o.concrete_shape(dims)))
                            and math.prod(o.concrete_shape(dims)) >= 3 for o in spec.inputs):
                        plan.append((dims, dtype, {t.name: end}))
                        break
    return plan[:MAX_END_CASES]



def _reserve(spec: Spec, cases: list[tuple[dict[str, int], str]], reserved: int, budget: int) -> int:
    """``reserved`` plus the bytes of each of ``cases`` (in order) that still fit ``budget``: what versions 15 and 17
    set aside out of the total cap for their whole-vector cases before the tails take what is left."""
    for dims, dtype in cases:
        size = _bytes(spec, dims, dtype)
        if reserved + size <= budget:
            reserved += size
    return reserved

_V17_STREAM = 0x717
"""(version 17) The random stream of the seeds of :func:`family_plan`'s cases: no other draw moves."""
MAX_FAMILY_CASES = 16
"""(version 17) Most cases of :func:`family_plan`."""


def family_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str]
                ) -> list[tuple[dict[str, int], str, str, dict[str, str]]]:
    """(version 17) The cases that give whole vectors the value families of
    :data:`runtime.opdir._inputs.FAMILY_KINDS` (special rows and columns get them from ``Case.families``), as
    ``(dims, dtype, vector kind, {input: whole kind})``:

    - a 1-D weight beside a matrix at its initial value (:data:`runtime.opdir._inputs.INIT_KINDS`): every float input
      that is one vector on a SPEC shape beside one that is not (a gamma, a beta, a per-channel scale) at ``init`` in
      every dtype - gamma 1.0, beta 0.0, as a freshly built LayerNorm -, then at ``zero`` once where some such input
      holds both 0 and 1 (a gamma in [-2, 2] is 1.0 at init);
    - the size-1 row of :func:`decode_vector_plan` (a decode step's one token) holding each family as a whole, the
      dtypes in turn;
    - where every float input is a vector (:func:`vector_plan`), each family as version 13's vector kinds.

    Red team s40 (round 29): ``ln_beta_zero`` and ``ln_gamma_constant`` (10% off where beta is all zeros / gamma one
    value) passed every seed - a 1-D input was never all zeros or constant."""
    plan: list[tuple[dict[str, int], str, str, dict[str, str]]] = []
    for sh in shapes:  # the first SPEC shape with a 1-D weight beside a matrix
        dims = {a: int(v) for a, v in sh.items()}
        for k, dtype in enumerate(dtypes):
            # a weight holds no dynamic axis: a per-row statistic ([B] mean and rstd of a backward) is data
            weights = [t for t in spec.inputs if is_float(t.concrete_dtype(dtype))
                       and one_vector(tuple(t.concrete_shape(dims))) and not set(t.shape) & set(spec.dynamic_axes)]
            beside = any(is_float(o.concrete_dtype(dtype)) and not one_vector(tuple(o.concrete_shape(dims)))
                         and math.prod(o.concrete_shape(dims)) >= 3 for o in spec.inputs)
            if not weights or not beside:
                continue
            plan.append((dims, dtype, "", {t.name: "init" for t in weights}))
            if k == 0 and any((t.range or DEFAULT_FLOAT_RANGE)[0] <= 0.0 and 1.0 <= (t.range or DEFAULT_FLOAT_RANGE)[1]
                              for t in weights):
                plan.append((dims, dtype, "", {t.name: "zero" for t in weights}))
        if plan:
            break
    decode = decode_vector_plan(spec, shapes, dtypes)
    seen: list[dict[str, int]] = []
    for dims, _dtype, whole in decode:
        if dims in seen:
            continue
        seen.append(dims)
        for i, kind in enumerate(FAMILY_KINDS):
            dtype = dtypes[i % len(dtypes)]
            names = [n for n in whole if is_float(next(t for t in spec.inputs if t.name == n).concrete_dtype(dtype))]
            if names:
                plan.append((dims, dtype, "", {n: kind for n in names}))
    vectors = {kind: (dims, dtype) for dims, dtype, kind in vector_plan(spec, shapes, dtypes)}
    if vectors:
        dims = next(iter(vectors.values()))[0]
        for i, kind in enumerate(FAMILY_KINDS):
            plan.append((dims, dtypes[i % len(dtypes)], kind, {}))
    return plan[:MAX_FAMILY_CASES]


MAX_ALIAS_CASES = 8
"""(version 12) Most cases that pass one tensor for several inputs (:func:`_alias_plan`)."""


def alias_groups(spec: Spec, dtype: str) -> list[tuple[str, ...]]:
    """(version 12) The groups of float inputs a caller may pass one tensor for: every pair with the same shape and
    dtype whose ranges overlap (the tensor's values are drawn where they do), then all such inputs at once when there
    are three or more with a common range. Red team s37: a wrapper that took a squaring path when ``len({x, r}) ==
    1`` (tensors hash by identity) passed every verification and got the sign wrong for a user's ``mul(x, x)`` -
    every call passed separate arrays; s37b: ``fma(x, y, y)`` (the second and third of three) and ``mulr(p, p)`` (x
    in [-1, 1], r in [0, 1]) passed, only the first pair of equal ranges being tried."""
    floats = [t for t in spec.inputs if is_float(t.concrete_dtype(dtype))]
    pairs = [(a.name, b.name) for i, a in enumerate(floats) for b in floats[i + 1:]
             if a.shape == b.shape and a.concrete_dtype(dtype) == b.concrete_dtype(dtype)
             and shared_range(spec, (a.name, b.name)) is not None]
    out: list[tuple[str, ...]] = list(pairs)
    names = [t.name for t in floats if any(t.name in p for p in pairs)]
    if len(names) >= 3 and len(pairs) == len(names) * (len(names) - 1) // 2 and \
            shared_range(spec, tuple(names)) is not None:
        out.append(tuple(names))
    return out


def _alias_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str]
                ) -> list[tuple[dict[str, int], str, list[str]]]:
    """(version 12) The aliased cases: each group of :func:`alias_groups` once, the SPEC's shapes and dtypes in turn,
    and the first group in every dtype; at most :data:`MAX_ALIAS_CASES`."""
    plan: list[tuple[dict[str, int], str, list[str]]] = []
    groups = {dtype: alias_groups(spec, dtype) for dtype in dtypes}
    for k, dtype in enumerate(dtypes):
        for i, group in enumerate(groups[dtype]):
            if k == 0 or i == 0:
                plan.append((shapes[(i + k) % len(shapes)], dtype, list(group)))
    return plan[:MAX_ALIAS_CASES]


ATTR_FACTORS = ((0.5, 0.9), (1.1, 1.5))
"""(version 10) An attribute case multiplies each varied attribute by a factor drawn uniformly from one of these ranges
(rounded to three significant digits; never the SPEC's own value): one value below the SPEC's and one above, as every
value a kernel may take for one from the SPEC - red team s35b: ``min(cap, 30.0)`` is right for every cap up to the
SPEC's. Not far above: a probability or a momentum stays near its range."""
ATTR_NEAR = (1.01, 1.03)
"""(version 11) A third value, close to the SPEC's: red team s36, a kernel cache keyed on ``int(cap)`` kept the first
call's cap - the other values are at least 10% away, so no two of them ever shared a key."""
ATTR_TINY, ATTR_TINY_FACTORS = 1e-3, (100.0, 1000.0)
"""(version 11) An attribute under ``ATTR_TINY`` in magnitude (an ``eps``) is taken this many times larger in the case
above the SPEC's value: red team s36, an RMSNorm kernel with its own eps=1e-6 built in passed every bf16
verification - 0.5-1.5x of 1e-6 moves no output by a bf16 tolerance, not even on the tiny rows (mean square ~3e-4);
1e-4..1e-3 does."""


def _varies(v: object) -> bool:
    """(version 11) Whether an attribute value is varied: one float, or a list of floats (``betas: [0.9, 0.999]``),
    every one finite and one at least non-zero. A 0.0 stays 0.0 (in a list too: ``bounds:
    [0.0, 6.0]`` varies the 6.0): it may be a switch - ``dropout_p: 0.0`` of an inference-only attention; red team
    s36c: varied, an honest kernel that refuses p != 0 failed every verification, and a golden that refuses it made
    every verification an ERROR."""
    leaves = list(v) if isinstance(v, list | tuple) else [v]
    return bool(leaves) and all(type(x) is float and np.isfinite(x) for x in leaves) and any(x != 0.0 for x in leaves)


def varied_attributes(spec: Spec, wrapper_attrs: list[str], golden_keywords: list[str], version: int = UNSEEN_VERSION
                      ) -> list[str]:
    """The SPEC attributes an attribute case varies: float values (not ints or bools: a count, an axis or a flag
    changes what the op is, not a value it computes with), non-zero and finite, that both the wrapper and the golden
    take as parameters - so both are told the other value. An attribute the wrapper does not take is fixed by the
    SPEC: the kernel may build it in. From version 11 also a list of floats (red team s36: Adam's ``betas`` were
    never varied, and a kernel with torch's default betas built in passed) - its 0.0 leaves stay (`_varies`)."""
    out = []
    for name in wrapper_attrs:
        v = spec.attrs.get(name)
        if name not in golden_keywords:
            continue
        if version >= 11:
            if _varies(v):
                out.append(name)
        elif type(v) is float and v != 0.0 and np.isfinite(v):
            out.append(name)
    return out


def flipped_bools(spec: Spec, wrapper_attrs: list[str], golden_keywords: list[str], version: int = UNSEEN_VERSION
                  ) -> list[str]:
    """(version 18) The SPEC's bool attributes that both the wrapper and the golden take as parameters: each runs
    flipped in cases of its own (:func:`attribute_cases`). Red team round 31 (s41, ``rn_unit_offset_ignored``): an
    RMSNorm wrapper that took Gemma's ``unit_offset`` and never used it passed every verification - a bool stayed at
    the SPEC's value in every call. A wrapper that supports one value only does not take the attribute (it is then the
    SPEC's, fixed); a set whose golden outputs are not of the SPEC's shapes (a ``keepdim``) is not run
    (``runtime.verify._engine._drop_reshaped_attributes``)."""
    if version < 18:
        return []
    return [n for n in wrapper_attrs if type(spec.attrs.get(n)) is bool and n in golden_keywords]


ATTR_FAR_BELOW_ONE = (0.05, 0.9)
"""(version 18) A varied attribute of magnitude 1 or more is also run at a magnitude in this range, below 1 (its sign
kept): red team round 31's ``sc_cap_floor_one`` clamped the cap to at least 1.0 "so the division cannot blow up" and
passed every seed - no value under 0.5x the SPEC's (15 for a cap of 30) was ever drawn."""
ATTR_FAR_ABOVE = (4.0, 10.0)
"""(version 18) The factor of the far-above value of an attribute of magnitude 1 or more. ``sc_large_cap_linear`` ("a
cap of 100 or more never bites", y = x there) passed every seed: the largest value drawn was 3x the SPEC's. An
attribute under 1 in magnitude - an ``eps``, a momentum, a scale, a probability - keeps its SPEC value in both far
sets: its domain is often bounded and the SPEC's tolerance is set for its value. Measured in the first forms of
version 18 on the gym's sum_lstm (fp16): ``alpha`` 0.1 taken to 0.98 left an honest rewrite's ``c_new`` 0.066 off,
and the eps 1e-6 taken to 3e-8 its ``h_new`` 0.016 off (``sl_h_mean_after_sum``, under 0.1% of the elements) - so an
eps floored at 1e-7 (``rn_eps_floor``) stays open."""
_V18_STREAM = 0x718
"""(version 18) The random stream of the far and flipped attribute cases: no draw of version 17 moves."""


def _far_value(v: float, below: bool, rng: np.random.Generator, version: int) -> float:
    """(version 18) ``v`` far below (:data:`ATTR_FAR_BELOW_ONE`) or far above (:data:`ATTR_FAR_ABOVE`) its SPEC value
    when it is 1 or more in magnitude, at full float64 precision; a smaller value stays."""
    if abs(v) < 1.0:
        return v
    if below:
        return float(np.copysign(rng.uniform(*ATTR_FAR_BELOW_ONE), v))
    return _attr_value(v, *ATTR_FAR_ABOVE, rng, version, 1)


def _far_sets(spec: Spec, names: list[str], rng: np.random.Generator, version: int) -> list[dict[str, object]]:
    """(version 18) Two sets of the attributes ``names``: every varied leaf far below its SPEC value, then far above
    (a list keeps the SPEC's order of its leaves); a set that moves nothing is left out."""
    sets: list[dict[str, object]] = []
    for below in (True, False):
        attrs: dict[str, object] = {}
        for name in names:
            v = spec.attrs[name]
            if isinstance(v, list | tuple):
                drawn = [_far_value(float(x), below, rng, version) for x in v]
                attrs[name] = type(v)(_in_order(list(map(float, v)), drawn))
            else:
                attrs[name] = _far_value(float(v), below, rng, version)
        if any(attrs[n] != spec.attrs[n] for n in names):
            sets.append(attrs)
    return sets


def _attr_value(v: float, low: float, high: float, rng: np.random.Generator, version: int = 10, i: int = 0) -> float:
    """Set ``i``'s value for a SPEC value ``v``: ``v`` times a factor from [low, high) (version 10: three significant
    digits). Version 11: seven significant digits (red team s36b: a kernel using ``round(cap, 2)`` was exact on every
    three-digit value drawn, and wrong for cap = 100/3), 0.0 kept (`_varies`), a value in (0, 1) kept in it."""
    r = rng.uniform(low, high)
    if version >= 11 and v == 0.0:
        return 0.0
    if version >= 11 and 0.0 < v < 1.0 <= v * r:
        # (version 11) a value in (0, 1) stays in it - a momentum, a probability: Adam's beta2 = 0.999 taken 2% up is
        # 1.02, where the bias correction's root is of a negative number (the gym's honest AdamW got inf); above the
        # SPEC's value means closer to 1 then
        w = _digits(1.0 - (1.0 - v) * (0.5 + 0.4 * (r - low) / (high - low)), version)
        return w if w != v else (1.0 + v) / 2
    w = float(f"{v * r:.3g}") if version < 11 else _digits(v * r, version)
    return w if w != v else v * (low + high) / 2


def _digits(w: float, version: int) -> float:
    """A drawn attribute value as passed: seven significant digits (version 11) or (version 15) every digit a float64
    holds. Red team s39 (``sc_seven_digits``): a wrapper that used the SPEC's cap whenever the caller's had more than
    seven significant digits (``50 / 3``, ``1 / math.sqrt(d)``: any value a program computes) passed every
    verification. The case name still shows seven digits; nothing reads a value back from it."""
    return float(w) if version >= 15 else float(f"{w:.7g}")


def _in_order(spec: list[float], drawn: list[float]) -> list[float]:
    """The drawn leaves of a list, reassigned so that they keep the order the SPEC's leaves have (red team s36c: PPO's
    clip ``bounds: [0.8, 1.2]`` scaled leaf by leaf came out as ``[0.62, 0.61]``, where the golden's ``np.clip``
    returns the upper bound and an honest ``max(min(x, hi), lo)`` the lower one). Equal SPEC leaves keep their draws."""
    by_spec = sorted(range(len(spec)), key=lambda k: spec[k])
    if any(spec[a] == spec[b] for a, b in zip(by_spec, by_spec[1:], strict=False)):
        return drawn
    out = list(drawn)
    for k, value in zip(by_spec, sorted(drawn), strict=True):
        out[k] = value
    return out


def _attr_label(v: object) -> str:
    return "_".join(f"{x:.7g}" for x in v) if isinstance(v, list | tuple) else f"{v:.7g}"


def _attribute_sets(spec: Spec, names: list[str], rng: np.random.Generator, version: int) -> list[dict[str, object]]:
    """Below the SPEC's values, above them, and (version 11) close to them - every varied leaf moved in each."""
    sets: list[dict[str, object]] = []
    factors = [*ATTR_FACTORS, ATTR_NEAR] if version >= 11 else list(ATTR_FACTORS)
    for i, (low, high) in enumerate(factors):
        attrs: dict[str, object] = {}
        for name in names:
            v = spec.attrs[name]
            if version >= 11 and isinstance(v, list | tuple):
                drawn = [_attr_value(float(x), *_tiny(float(x), i, low, high), rng, version, i) for x in v]
                attrs[name] = type(v)(_in_order(list(map(float, v)), drawn))
            elif version >= 11:
                attrs[name] = _attr_value(float(v), *_tiny(float(v), i, low, high), rng, version, i)
            else:
                attrs[name] = _attr_value(float(v), low, high, rng)
        sets.append(attrs)
    if version >= 12:
        sets += _integral_sets(spec, names, rng)
    return sets


ATTR_INT_FACTORS = (None, (0.5, 0.9), (1.5, 3.0))
"""(version 12) The whole-number sets (:func:`_integral_sets`): the SPEC's own values, values below them, values far
above them."""


def _integral_sets(spec: Spec, names: list[str], rng: np.random.Generator) -> list[dict[str, object]]:
    """(version 12) The attributes whose SPEC values are whole numbers (``cap: 30.0``, ``bounds: [0.0, 6.0]``) passed as
    Python ints - as a caller writes ``softcap(x, cap=50)`` -, in three sets (:data:`ATTR_INT_FACTORS`): the SPEC's
    own values, other whole numbers below them and far above them; the other attributes at the SPEC's values. No set
    when no attribute has a whole-number value. Red team s37: a wrapper that used the SPEC's 30.0 when
    ``isinstance(cap, int)`` passed every verification (every value drawn was a float) and was off by 18 for
    ``cap=50``; s37b: with ints only 10-50% above the SPEC's, a branch for ints >= 48, or <= 30, passed."""
    whole = []
    for name in names:
        v = spec.attrs[name]
        leaves = [float(x) for x in (v if isinstance(v, list | tuple) else [v])]
        if all(x.is_integer() for x in leaves) and any(abs(x) >= 1.0 for x in leaves):
            whole.append((name, v, leaves))
    sets: list[dict[str, object]] = []
    for factors in ATTR_INT_FACTORS if whole else ():
        attrs: dict[str, object] = {}
        for name, v, leaves in whole:
            moved = []
            for x in leaves:
                if factors is None or x == 0.0:
                    moved.append(int(x))
                    continue
                w = int(round(x * rng.uniform(*factors)))  # never the SPEC's own value: one step further out
                moved.append(w if w != int(x) else int(x) + (1 if (x > 0) == (factors[0] > 1) else -1))
            ints = [int(w) for w in _in_order(leaves, [float(w) for w in moved])]
            attrs[name] = type(v)(ints) if isinstance(v, list | tuple) else ints[0]
        sets.append(attrs)
    return sets


def attribute_cases(spec: Spec, spec_cases: list[Case], names: list[str], seed: int, first: int,
                    version: int = UNSEEN_VERSION, flips: list[str] | None = None) -> list[Case]:
    """(version 10) Cases with the attributes ``names`` (:func:`varied_attributes`) at other values: the first SPEC
    shape in every dtype, twice - below the SPEC's values, then above them with special values (:data:`ATTR_FACTORS`). Red team s35: a softcap kernel dividing by the caller's ``cap`` and multiplying by the SPEC's
    30.0 passed every verification (every call passed the SPEC's value) and was wrong for Gemma 2's attention cap of
    50. The values are in the case name (``unseen31-B64_V256-fp32-cap18.9``): the agent fixing a failure needs them;
    ``first`` numbers the cases after the other unseen ones.

    Version 11 (red team s36): every leaf of a list attribute is varied; a tiny attribute goes far above
    (:data:`ATTR_TINY_FACTORS`); a third value close to the SPEC's (:data:`ATTR_NEAR`); and the two sets run again on a
    shape with a partial last tile (the first SPEC shape that has one, else the first with every dynamic axis 13
    longer, as `build_cases` pads) - a kernel whose tail path was built with the SPEC's cap passed every
    verification, the attribute cases all being on an aligned shape. The unseen shape cases take other values too
    (:func:`vary_unseen_attributes`).

    Version 18 (red team round 31): then, with a random stream of their own, the far sets (:func:`_far_sets`) and each
    bool of ``flips`` (:func:`flipped_bools`) flipped, on the first SPEC shape with special values in every dtype
    (a flipped bool also on the tail shape): :func:`_far_and_flipped_cases`."""
    static = version >= 16 and not spec.p0_shapes and not spec.named_dims()
    flips = flips if version >= 18 and flips else []
    if version < 10 or not (names or flips) or not (spec.p0_shapes or static):
        return []
    if not names:
        return _far_and_flipped_cases(spec, spec_cases, names, flips, seed, first, version)
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _STREAM, 10])
    sets = _attribute_sets(spec, names, rng, version)
    # (version 16) a SPEC of static shapes has its one shape: before, it got no attribute case at all - only the
    # one "below" set on its last unseen case (`vary_unseen_attributes`), never the set far above a tiny ``eps``
    # with special (tiny) rows (accident round 30, s40: the gym's sum_lstm with ``eps_state`` for ``eps_cell``,
    # both 1e-6 in the SPEC, passed every seed; the int cases of version 14 already run on the static shape)
    base = {k: int(v) for k, v in spec.p0_shapes[0].items()} if spec.p0_shapes else {}
    plan: list[tuple[dict[str, int], bool, dict[str, object]]] = [(base, False, sets[0]), (base, True, sets[1])]
    if version >= 11:
        plan.append((base, False, sets[2]))
        if version >= 12:  # the whole numbers passed as ints (`_integral_sets`)
            plan += [(base, False, ints) for ints in sets[3:]]
        tail = _tail_shape(spec, base)
        if tail is not None:
            plan += [(tail, False, sets[0]), (tail, True, sets[1])]
    out = _planned_cases(spec, plan, case_cap(spec, spec_cases, version), {c.seed for c in spec_cases}, rng, first,
                         lambda attrs: _attrs_label(names, attrs, version), peaks=version >= 12)
    if version >= 18:
        out += _far_and_flipped_cases(spec, spec_cases, names, flips, seed, first + len(out), version,
                                      {c.seed for c in out})
    return out


def _far_and_flipped_cases(spec: Spec, spec_cases: list[Case], names: list[str], flips: list[str], seed: int,
                           first: int, version: int, taken: set[int] | None = None) -> list[Case]:
    """(version 18) The far sets of ``names`` (:func:`_far_sets`) on the first SPEC shape with special values, and
    each bool of ``flips`` flipped there and on the tail shape (:func:`_tail_shape`), in every dtype; the seeds and
    values come from a stream of their own, so every case before them is version 17's."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _STREAM, _V18_STREAM])
    base = {k: int(v) for k, v in spec.p0_shapes[0].items()} if spec.p0_shapes else {}
    plan: list[tuple[dict[str, int], bool, dict[str, object]]] = []
    if names:
        plan += [(base, True, far) for far in _far_sets(spec, names, rng, version)]
    tail = _tail_shape(spec, base)
    for name in flips:
        flipped: dict[str, object] = {name: not spec.attrs[name]}
        plan.append((base, True, flipped))
        if tail is not None:
            plan.append((tail, False, flipped))
    ones = _ones_shape(spec, base) if version >= 19 else None
    if ones is not None:  # (version 19) the far sets and the flipped bools on a decode row too
        plan += [(ones, False, attrs) for dims, _special, attrs in list(plan) if dims == base]
    labelled = [*names, *flips]

    def label(attrs: dict[str, object]) -> str:
        return "-".join(f"{k}{attrs[k]}" if isinstance(attrs[k], bool) else f"{k}{_attr_label(attrs[k])}"
                        for k in labelled if k in attrs)

    return _planned_cases(spec, plan, case_cap(spec, spec_cases, version),
                          {c.seed for c in spec_cases} | (taken or set()), rng, first, label)


def _attrs_label(names: list[str], attrs: dict[str, object], version: int) -> str:
    if version < 11:
        return "-".join(f"{k}{attrs[k]:g}" for k in names)
    return "-".join(f"{k}{_attr_label(attrs[k])}" for k in names if k in attrs)


def vary_unseen_attributes(spec: Spec, cases: list[Case], names: list[str], seed: int,
                           version: int = UNSEEN_VERSION, ints: dict[str, str] | None = None) -> list[Case]:
    """(version 11) The last unseen case of every shape and dtype (size 1, the tail of 1, the power of two, the fill
    size ...; of a same-shape pair, the one with special values) with the attributes at other values: the three sets
    of the attribute cases, and - when two or more values are varied - each value moved alone, close to the SPEC's,
    the others at theirs, in turn. Red team s36b: a decode path for B
    == 1 and a path for B > 256 built with the SPEC's cap passed (the attribute cases run on two SPEC shapes), and a
    kernel cache keyed on ``beta1`` alone passed (every set moved both betas). The values join the case's name.

    (version 14) ``ints`` (:func:`varied_ints`): the same cases also take the int sets (:func:`_int_sets`) in turn,
    beside the float values - a kernel whose decode path was built with the SPEC's window is wrong there too."""
    ints = ints if version >= 14 and ints else {}
    if version < 11 or not (names or ints):
        return cases
    sets: list[dict[str, object]] = []
    if names:
        rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _STREAM, 11])
        sets = _attribute_sets(spec, names, rng, version)
        leaves = [(n, j) for n in names for j in range(len(spec.attrs[n]) if isinstance(spec.attrs[n], list | tuple)
                                                         else 1)]
        if len(leaves) > 1:
            for name, j in leaves:  # one value moved alone, close to the SPEC's
                v = spec.attrs[name]
                if isinstance(v, list | tuple):
                    moved = list(v)
                    moved[j] = _attr_value(float(v[j]), *ATTR_NEAR, rng, version, 2)
                    sets.append({name: type(v)(moved)})
                else:
                    sets.append({name: _attr_value(float(v), *ATTR_NEAR, rng, version, 2)})
    int_sets = _int_sets(spec, ints, np.random.default_rng([int(seed) & ((1 << 63) - 1), _INT_STREAM, 1])) \
        if ints else []

    def key(c: Case) -> tuple:
        return tuple(sorted(c.dims.items())), c.dtype

    group = Counter(key(c) for c in cases if c.unseen and not c.attrs)
    out, seen, k = [], Counter[tuple](), 0
    labelled = [*names, *ints]
    for c in cases:
        if c.unseen and not c.attrs:
            seen[key(c)] += 1
            if seen[key(c)] == group[key(c)]:  # the last case of every shape (and dtype): each shape is called so
                attrs = dict(sets[k % len(sets)]) if sets else {}
                if int_sets:
                    attrs.update(int_sets[k % len(int_sets)])
                k += 1
                c = c.model_copy(update={"attrs": attrs, "name": f"{c.name}-{_attrs_label(labelled, attrs, version)}"})
        out.append(c)
    return out


_INT_STREAM = 0x1A7
"""(version 14) The random stream of the int values (:func:`_int_sets`) and of the int cases' seeds: no other draw
moves."""
INT_TILE = TAIL_MULTIPLE
"""(version 14) A bound is also drawn wider than a tile of this many positions (:func:`int_values`)."""


def varied_ints(spec: Spec, wrapper_attrs: list[str], golden_keywords: list[str], golden_tree: object,
                version: int = UNSEEN_VERSION) -> dict[str, str]:
    """(version 14) The int attributes an int case varies, with the role their values are drawn for: a positive int
    (not a bool, not 0: a switch; not negative) that both the wrapper and golden() take - so both are told the other
    value - and that golden() uses as a count, an exponent, a bound or a scale and never as an axis, an index, a
    shape, a dtype, a flag or in a call the analysis does not know (:func:`runtime.opdir._intattrs.int_attribute_roles`;
    ambiguous stays: a false refusal is worse than a miss). An int equal to one of the SPEC's dim sizes stays too (a
    layer count a kernel may read from its weight's shape) - version 15: a literal size in a tensor's shape as well
    as a ``p0_shapes`` value (review s39: ``heads: 8`` beside ``q: [B, 8, D]``, golden looping ``range(heads)``, was
    varied to 1-3 and 9-11, and an honest kernel reading the head count from ``q`` was refused; a gym import's SPEC
    has only literal shapes). ``vary_ints`` in the SPEC varies an int whatever the
    analysis says (its role's values, a scale's when none is found); ``fixed_ints`` never varies one.

    Red team s38 ("accident2"): ``step: 1`` (AdamW's bias corrections with the power forgotten), ``window: 8`` built
    in and ``iters: 20`` (a Sinkhorn one round short, columns first - both within fp32 tolerance after five rounds)
    passed every verification: no int was ever varied."""
    import ast

    from runtime.opdir._intattrs import int_attribute_roles

    if version < 14 or not isinstance(golden_tree, ast.Module):
        return {}
    forced, fixed = set(spec.vary_ints), set(spec.fixed_ints)
    names = [n for n in wrapper_attrs if n in golden_keywords and n not in fixed
             and type(spec.attrs.get(n)) is int and spec.attrs[n] >= 1]
    roles = int_attribute_roles(golden_tree, names)
    dims = {int(v) for sh in spec.p0_shapes for v in sh.values()}
    if version >= 15:  # (review s39) a literal dim of a tensor's shape too: ``q: [B, 8, D]`` beside ``heads: 8``
        dims |= {int(d) for t in [*spec.inputs, *spec.outputs] for d in t.shape if type(d) is int}
    # (version 20) a shape int is kept by an input's literal dim only: a kernel may read a group count from a weight
    # of [G] (golden then refuses another value), not from a dynamic axis's SPEC size or an output's top-k width
    input_dims = {int(d) for t in spec.inputs for d in t.shape if type(d) is int}
    out: dict[str, str] = {}
    for name in names:
        role = roles[name]
        # (version 19) an int whose only vetoes are shape arguments of a reshape (a GroupNorm's num_groups) varies
        # too, through values that keep a reshape whole (`int_values`'s "shape"); a set golden refuses or whose
        # outputs change shape is dropped when the cases run. (version 20) an expand's sizes count as a reshape's
        shape = version >= 19 and (role.shape_only if version >= 20 else role.reshape_only) and not role.kinds
        shape_dims = input_dims if version >= 20 else dims
        if name in forced:
            out[name] = next((k for k in ("count", "exponent", "bound", "scale") if k in role.kinds),
                             "shape" if shape else "scale")
        elif role.kind is not None and not (spec.attrs[name] >= 2 and spec.attrs[name] in dims):
            out[name] = role.kind
        elif shape and not (spec.attrs[name] >= 2 and spec.attrs[name] in shape_dims):
            out[name] = "shape"
    return out


def int_values(kind: str, v: int, rng: np.random.Generator) -> tuple[int, int]:
    """(version 14) Two other whole values, both >= 1 and other than ``v``, for an int of this role - below the SPEC's
    (or small) first, above it second, cheap to run:

    - **count** (``range(n)``): 1..3 (under ``v``), then ``v + 1 .. v + 3``: a Sinkhorn one round short or normalising
      columns first agrees with ``iters: 20`` to 1e-7 and with 1-3 rounds by no tolerance;
    - **exponent** (``beta ** step``): 2..5, then ``v + 1 .. v + 3`` - a power forgotten at ``step: 1`` shows at 2;
    - **bound** (``j > i - window``, a ``tril`` diagonal): 1 .. ``v - 1``, then wider than a tile
      (:data:`INT_TILE` + 1 .. 2x it - 1; ``v + 1 .. v + 16`` above that) - a window built in as the SPEC's 8 within
      one 16-column tile differs at 3 and at 24, where the band crosses a tile boundary;
    - **scale** (an operand with a tensor): 0.5-0.9x and 1.5-3x, rounded (as version 12's whole numbers);
    - (version 19) **shape** (a shape argument of a reshape only: a group count): half or a quarter of ``v`` (of those
      whole, drawn; 1 for an odd ``v``), then ``2 v`` - values that keep ``d // v`` whole wherever ``v`` divides a
      power-of-two ``d`` (red team round 31: a GroupNorm built for 8 groups, and one taking the group count for the
      group width - the same at 16 groups of 16 channels - are wrong at 4 and 16, 8 and 32).
    For ``v == 1`` the first value is above it too (2-3; a bound 2..16; a shape 2, then 4)."""
    if kind == "shape":
        if v == 1:
            return 2, 4
        halves = [v // f for f in (2, 4) if v % f == 0] or [1]
        return halves[int(rng.integers(0, len(halves)))], 2 * v
    def draw(lo: int, hi: int, avoid: set[int]) -> int:
        pool = [x for x in range(max(1, lo), max(1, hi) + 1) if x not in avoid]
        return pool[int(rng.integers(0, len(pool)))] if pool else max(avoid) + 1

    t = INT_TILE
    if kind == "count":
        a = draw(1, min(3, v - 1), {v}) if v >= 2 else draw(2, 3, {v})
        return a, draw(v + 1, v + 3, {v, a})
    if kind == "exponent":
        a = draw(2, 5, {v})
        return a, draw(v + 1, v + 3, {v, a})
    if kind == "bound":
        a = draw(1, v - 1, {v}) if v >= 2 else draw(2, t, {v})
        return a, draw(t + 1, 2 * t - 1, {v, a}) if v <= t else draw(v + 1, v + t, {v, a})
    low, high = rng.uniform(0.5, 0.9), rng.uniform(1.5, 3.0)
    a = int(round(v * low)) if v >= 2 else 2
    a = a if a not in (v, 0) else (v - 1 if v >= 2 else 2)
    b = int(round(v * high))
    return a, b if b not in (v, a) else max(v, a) + 1


def _int_sets(spec: Spec, ints: dict[str, str], rng: np.random.Generator) -> list[dict[str, object]]:
    """(version 14) Two sets of values of the varied ints (:func:`int_values`): the first values of every int, then
    the second ones; with two ints or more, also each int alone at its second value, the others at the SPEC's."""
    pairs = {name: int_values(kind, int(spec.attrs[name]), rng) for name, kind in ints.items()}
    sets: list[dict[str, object]] = [{n: a for n, (a, _) in pairs.items()}, {n: b for n, (_, b) in pairs.items()}]
    if len(pairs) > 1:
        sets += [{n: b} for n, (_, b) in pairs.items()]
    shapes: dict[str, object] = {n: 4 * int(spec.attrs[n]) for n, kind in ints.items() if kind == "shape"}
    if shapes:  # (version 19) a reshape's int also at 4x, alone: where golden refuses it, the 2x set still runs
        sets.append(shapes)
    return sets


def int_attribute_cases(spec: Spec, spec_cases: list[Case], ints: dict[str, str], seed: int, first: int,
                        version: int = UNSEEN_VERSION) -> list[Case]:
    """(version 14) Cases with the varied ints (:func:`varied_ints`) at other whole values (:func:`_int_sets`): each
    set on the first SPEC shape (a static SPEC's one shape) in every dtype, then on the attribute cases' tail shape (a partial last tile, as
    version 11's float cases) with special values; the floats at the SPEC's values. The values are in the case name
    (``unseen40-S64-fp32-window3``). A set golden.py refuses is dropped with a diagnostic, as the float sets are
    (`runtime.verify._engine._drop_refused_attributes`). A wrapper that takes the int and refuses the value fails:
    an attribute the wrapper takes is one the kernel claims to honour - a kernel for one value leaves the parameter
    out of its wrapper (the SPEC's value is then fixed), or the SPEC lists it in ``fixed_ints``."""
    if version < 14 or not ints or not (spec.p0_shapes or not spec.named_dims()):
        return []
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _INT_STREAM, 0])
    sets = _int_sets(spec, ints, np.random.default_rng([int(seed) & ((1 << 63) - 1), _INT_STREAM, 1]))
    # the first SPEC shape; a SPEC of static shapes (a gym import: mhc_sinkhorn's [8, 4, 4]) has its one shape
    base = {k: int(v) for k, v in spec.p0_shapes[0].items()} if spec.p0_shapes else {}
    plan: list[tuple[dict[str, int], bool, dict[str, object]]] = [(base, False, attrs) for attrs in sets]
    tail = _tail_shape(spec, base)
    if tail is not None:
        plan += [(tail, True, attrs) for attrs in sets[:2]]
    ones = _ones_shape(spec, base) if version >= 19 else None
    if ones is not None:  # (version 19) a reshape's int on a decode row too (the other kinds get it from
        # `vary_unseen_attributes`, which a reshape's int does not take part in)
        plan += [(ones, False, attrs) for attrs in sets if any(ints.get(n) == "shape" for n in attrs)]
    return _planned_cases(spec, plan, case_cap(spec, spec_cases, version), {c.seed for c in spec_cases}, rng, first,
                          lambda attrs: _attrs_label(list(ints), attrs, version))


MAX_STRING_VALUES = 4
"""(version 19) Most other values of one str attribute that run (:func:`varied_strings`), in golden.py's source order."""
_V19_STREAM = 0x719
"""(version 19) The random stream of the str attribute cases' seeds: no draw of version 18 moves."""


def varied_strings(spec: Spec, wrapper_attrs: list[str], golden_keywords: list[str], golden_tree: object,
                   version: int = UNSEEN_VERSION) -> dict[str, list[str]]:
    """(version 19) The SPEC's str attributes that both the wrapper and golden() take, each with the other values
    golden.py compares it with (:func:`runtime.opdir._intattrs.string_attribute_values`: ``kind == "gelu_tanh"``, a
    ``match`` case, a dict indexed by it), at most :data:`MAX_STRING_VALUES`. Red team round 31
    (``act_kind_ignored``): a wrapper that took ``kind`` and computed the SPEC's silu for every value passed every seed.
    As for a bool (:func:`flipped_bools`), a wrapper that supports one value does not take the attribute (it is then
    the SPEC's, fixed); ``fixed_ints`` has no say here. A value golden refuses (a validation listing the values it
    rejects) or whose outputs are not of the SPEC's shapes is dropped when the cases run."""
    import ast

    from runtime.opdir._intattrs import string_attribute_values

    if version < 19 or not isinstance(golden_tree, ast.Module):
        return {}
    names = [n for n in wrapper_attrs if n in golden_keywords and type(spec.attrs.get(n)) is str]
    found = string_attribute_values(golden_tree, names, version)  # (v20) constants, tables, loops too
    out: dict[str, list[str]] = {}
    for name in names:
        others = [v for v in found[name] if v != spec.attrs[name]][:MAX_STRING_VALUES]
        if others:
            out[name] = others
    return out


def string_attribute_cases(spec: Spec, spec_cases: list[Case], strings: dict[str, list[str]], seed: int, first: int,
                           version: int = UNSEEN_VERSION) -> list[Case]:
    """(version 19) Each str attribute of ``strings`` (:func:`varied_strings`) at each of its other values, the others
    at the SPEC's: on the first SPEC shape with special values and on the attribute cases' tail shape
    (:func:`_tail_shape`), in every dtype; seeds from a stream of their own (every case before is version 18's). The
    value is in the case name (``unseen52-B64_V256-fp32-kindgelu_tanh``)."""
    if version < 19 or not strings or not (spec.p0_shapes or not spec.named_dims()):
        return []
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _STREAM, _V19_STREAM])
    base = {k: int(v) for k, v in spec.p0_shapes[0].items()} if spec.p0_shapes else {}
    tail = _tail_shape(spec, base)
    plan: list[tuple[dict[str, int], bool, dict[str, object]]] = []
    ones = _ones_shape(spec, base)
    for name, values in strings.items():
        for value in values:
            plan.append((base, True, {name: value}))
            plan += [(dims, False, {name: value}) for dims in (tail, ones) if dims is not None]
    return _planned_cases(spec, plan, case_cap(spec, spec_cases, version), {c.seed for c in spec_cases}, rng, first,
                          lambda attrs: "-".join(f"{k}{v}" for k, v in attrs.items()))


def _tiny(v: float, i: int, low: float, high: float) -> tuple[float, float]:
    """The factor range of set ``i`` for value ``v``: the set above the SPEC's (``i == 1``) takes a tiny value far up."""
    return ATTR_TINY_FACTORS if i == 1 and 0.0 < abs(v) < ATTR_TINY else (low, high)


def _ones_shape(spec: Spec, base: dict[str, int]) -> dict[str, int] | None:
    """(version 19) ``base`` with every dynamic axis at 1 - one decode step of one request -, None when that is
    ``base`` or the SPEC has no dynamic axis. Red team round 32 (s42): a one-row decode path built with the SPEC's group
    count, ``kind``, a ``max(cap, 1.0)`` guard or without ``unit_offset`` passed every seed of version 18 - the far and
    flipped sets, the str values and the reshape ints ran on the first SPEC shape and the tail shape only."""
    if not spec.dynamic_axes:
        return None
    dims = {**base, **{a: 1 for a in spec.dynamic_axes}}
    return None if dims == base else dims


def _tail_shape(spec: Spec, base: dict[str, int]) -> dict[str, int] | None:
    """(version 11) The attribute cases' shape with a partial last tile: the first SPEC shape that has one, else
    ``base`` with every dynamic axis padded as `runtime.opdir._cases.build_cases` pads; None when ``base`` has one
    already or the SPEC has no dynamic axis."""
    if not spec.dynamic_axes or _has_tail(spec, base):
        return None
    for sh in spec.p0_shapes:
        dims = {k: int(v) for k, v in sh.items()}
        if _has_tail(spec, dims):
            return dims
    dims = dict(base)
    for a in spec.dynamic_axes:
        dims[a] = dims[a] + _TAIL_PAD
    return dims


_REPEAT_STREAM = 0x2EC


def attribute_repeat(order: list[str], attribute_names: list[str], seed: int) -> list[str]:
    """(version 15) ``order`` (a :func:`call_plan`) with one more call of an attribute case (drawn from
    ``attribute_names``, its own random stream) at a drawn position after its first call; ``order`` itself when there
    is none. Red team s39 (``sc_cache_stores_spec_cap``): a kernel cache storing the SPEC-valued kernel under the
    caller's key was wrong only on a second call with the same shape and value - verification called each attribute
    case once, and only its two random repeats could land on one (lint PF11 refuses that cache now). One call, not
    every attribute case again: a cache keyed or stored wrongly for non-SPEC values is wrong on any of them, and the
    attribute cases are many (3-6 per dtype and shape) where the second calls would double their time."""
    pool = [n for n in attribute_names if n in order]
    if not pool:
        return order
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _REPEAT_STREAM])
    name = pool[int(rng.integers(0, len(pool)))]
    out = list(order)
    out.insert(int(rng.integers(out.index(name) + 1, len(out) + 1)), name)
    return out


def call_plan(names: list[str], seed: int, *, repeats: int = 1, repeatable: list[str] | None = None) -> list[str]:
    """The order of wrapper calls: every case once, shuffled by ``seed``, plus ``repeats`` extra calls of
    cases that already ran (the determinism / state-across-calls check), at seeded positions.

    Repeats are drawn from ``repeatable`` (default: all; the verifier leaves out cases over the unseen size cap,
    so a several-GB case runs once); its first entry is always repeated.
    """
    if not names:
        return []
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _STREAM + 1])
    order = [names[i] for i in rng.permutation(len(names))]
    pool = [n for n in (repeatable if repeatable is not None else names) if n in names] or names[:1]
    extra = [pool[0]] + [pool[int(i)] for i in rng.integers(0, len(pool), max(0, repeats - 1))]
    for name in extra:
        first = order.index(name)
        pos = int(rng.integers(first + 1, len(order) + 1))
        order.insert(pos, name)
    return order


_V22_STREAM = 0x722
COVER_PER_WINDOW = 2
"""(version 22) Distinct tails each window of a dynamic axis holds over the dtypes - at least one of 2..14 in each
dtype, this many in one dtype (:func:`cover_plan`)."""
MAX_COVER_PER_DTYPE_AXIS = 10
"""(version 22) At most this many cover calls per supported dtype and dynamic axis (:func:`cover_plan`; measured
over 10 seeds: 6-9 for one dtype and one axis, 4 per dtype for two dtypes, 3.5 per dtype and axis for 3 x 2)."""


def _windows(spec_sizes: set[int], top: int) -> list[tuple[int, int]]:
    """(version 22) The windows ``(lo, hi]`` of sizes a kernel's path may be chosen by: under a tile, up to two
    tiles, the doublings from two tiles to the SPEC's smallest size, between the SPEC's sizes, up to 2x and 4x the
    SPEC's largest, and above 4x up to ``top``; a window that cannot hold two tails of a tile is merged into the next."""
    t = TAIL_MULTIPLE
    m, big = min(spec_sizes), max(spec_sizes)
    marks = {0, t, 2 * t, *spec_sizes, 2 * big, FILL_FACTOR * big, top}
    p = 4 * t
    while p < m:
        marks.add(p)
        p *= 2
    bounds = sorted(b for b in marks if 0 <= b <= top)
    out: list[tuple[int, int]] = []
    lo = bounds[0]
    for hi in bounds[1:]:
        if sum(1 for s in range(lo + 1, min(hi, lo + 2 * t) + 1) if s % t and s not in spec_sizes) >= 2 or hi == top:
            out.append((lo, hi))
            lo = hi
    return out


def _tail_span(lo: int, hi: int, r: int) -> tuple[int, int]:
    """(version 22) The least and the largest ``k`` with ``lo < k * 16 + r <= hi`` (empty when the first is larger)."""
    t = TAIL_MULTIPLE
    return max(0, (lo - r) // t + 1), (hi - r) // t


def _pick(lo: int, hi: int, r: int, spec_sizes: set[int], rng: np.random.Generator | None) -> int | None:
    """(version 22) A size in the window ``(lo, hi]`` with tail ``r``, none of the SPEC's, log-uniform over the window
    (a wide window above 4x is not all its top); None when the window has none. ``rng`` None: only whether it has one
    (draws nothing). Constant time: a several-GB SPEC's windows span millions of tiles."""
    t = TAIL_MULTIPLE
    k0, k1 = _tail_span(lo, hi, r)
    ks = [k for k in (k0, k0 + 1, k1 - 1, k1) if k0 <= k <= k1 and k * t + r not in spec_sizes]
    if not ks:
        return None
    if rng is None:
        return ks[0] * t + r
    v = float(np.exp(rng.uniform(np.log(k0 * t + r), np.log(k1 * t + r)))) if k1 > k0 else float(k0 * t + r)
    k = min(max(k0, round((v - r) / t)), k1)
    for cand in (k, k + 1, k - 1, *ks):
        if k0 <= cand <= k1 and cand * t + r not in spec_sizes:
            return cand * t + r
    return None


def cover_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str], drawn: list[Case], seed: int, cap: int,
               per_window: int = COVER_PER_WINDOW) -> list[tuple[dict[str, int], str]]:
    """(version 22, red team round 35) One call each, after every other case: on every dynamic axis, each window of
    sizes (:func:`_windows`) holds, in every dtype, a size with a tail of 2..14 (1 and 15 have classes of their own),
    and ``per_window`` distinct tails over the dtypes - the tails no size of the window, then of the axis, has first;
    then every tail 1..15 the axis has not had at all. The sizes the run drew already count (``drawn``).

    Why: a run held a few random tails, so a path picked by a window of sizes and wrong on some tails there passed a
    share of verifications in proportion - 33..63 rows with ``(n + 3) // 16`` 60% (version 21), 78..159 rows with
    ``(n + 2) // 16`` 7%, tails 10/12/14 anywhere 9.5%, a tail of 13 wrong except at the SPEC's 77 rows 52.5% (the
    sweep's fresh tail skips the SPEC's tails). Half the sizes take the other dynamic axes at unseen sizes of the run
    with a tail (a batched path wrong on another axis's tails)."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _V22_STREAM])
    plan: list[tuple[dict[str, int], str]] = []
    for a_i, axis in enumerate(spec.dynamic_axes):
        _cover_axis(spec, shapes, dtypes, drawn, axis, shapes[a_i % len(shapes)], cap, per_window, rng, plan)
    return plan[:MAX_COVER_PER_DTYPE_AXIS * len(dtypes) * max(1, len(spec.dynamic_axes))]


def _cover_axis(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str], drawn: list[Case], axis: str,
                base: dict[str, int], cap: int, per_window: int, rng: np.random.Generator,
                plan: list[tuple[dict[str, int], str]]) -> None:
    """(version 22) :func:`cover_plan` for one axis: appends to ``plan``."""
    t = TAIL_MULTIPLE
    spec_sizes = {int(sh[axis]) for sh in shapes if axis in sh}
    if not spec_sizes:
        return
    kept = bool(spec.outputs) and all(axis in o.shape for o in spec.outputs)
    top = max(FILL_FACTOR * max(spec_sizes), _POW2_KEPT if kept else 0)
    others = {a: sorted({int(c.dims[a]) for c in drawn if a in c.dims and int(c.dims[a]) % t}
                        - {int(sh.get(a, -1)) for sh in shapes}) for a in spec.dynamic_axes if a != axis}
    had: dict[str, set[int]] = {d: set() for d in dtypes}  # the axis's sizes per dtype (none of the SPEC's)
    for c in drawn:
        if axis in c.dims and int(c.dims[axis]) not in spec_sizes and c.dtype in had:
            had[c.dtype].add(int(c.dims[axis]))

    def add(size: int, dtype: str) -> bool:
        joint = {a: v[int(rng.integers(0, len(v)))] for a, v in others.items() if v} if len(plan) % 2 else {}
        dims = _fit(spec, {**base, **joint, axis: size}, axis, dtype, cap) or _fit(
            spec, {**base, axis: size}, axis, dtype, cap)
        if dims is None or dims in shapes or (dims, dtype) in plan:
            return False
        plan.append((dims, dtype))
        had[dtype].add(int(dims[axis]))
        return True

    wins = _windows(spec_sizes, top)
    for lo, hi in wins:
        for dtype in [str(d) for d in rng.permutation(dtypes)]:
            if _bytes(spec, {**base, axis: lo + 1}, dtype) > cap:  # the window is over the case cap: halving would
                continue  # land below it (a several-GB SPEC's windows above its own size)
            while True:
                # tails 1 and 15 have classes of their own in every run: a path avoids them first
                have = {s % t for s in had[dtype] if lo < s <= hi and 1 < s % t < t - 1}
                in_window = {s % t for d in dtypes for s in had[d] if lo < s <= hi and s % t}
                if have and len(in_window) >= per_window or len(have) >= per_window:
                    break
                on_axis = {s % t for d in dtypes for s in had[d]}
                free = [r for r in range(2, t - 1) if r not in have and _pick(lo, hi, r, spec_sizes, None) is not None]
                if not free:
                    break
                order = rng.permutation(len(free))
                r = min((free[i] for i in order), key=lambda r: (r in in_window, r in on_axis))
                size = _pick(lo, hi, r, spec_sizes, rng)
                if size is None or not add(size, dtype) or not lo < int(plan[-1][0][axis]) <= hi:
                    break
    missing = [r for r in range(1, t) if r not in {s % t for d in dtypes for s in had[d]}]
    for j, r in enumerate(missing):
        lo, hi = wins[int(rng.integers(0, len(wins)))]
        size = _pick(lo, hi, r, spec_sizes, rng) or _pick(0, top, r, spec_sizes, rng)
        if size is not None:
            add(size, dtypes[(j + int(rng.integers(0, len(dtypes)))) % len(dtypes)])


_V23_STREAM = 0x723
BLOCK_PERIODS = (1536, 768, 512, 384, 256, 192, 128, 96, 64, 48, 32)
"""(version 23) The periods a "one past a block" size is taken from, most blocks first: ``n = m * L + 1`` is one row
past a whole number of blocks for every block size dividing ``L`` (1536: 32, 48, 64, 96, 128, 192, 256, 384, 512 and
768 at once)."""
BLOCK_SIZES = (32, 48, 64, 96, 128, 192, 256, 384, 512, 768)
"""(version 23) The block sizes (two to 48 tiles of 16) a kernel's path may walk; a window's one-past sizes are chosen
so that every block size up to the window's size is one of their periods' divisors."""
BLOCK_PERIODS_V24 = (3840, 1920, 1536, 960, 768, 640, 512, 480, 384, 320, 256, 240, 192, 160, 128, 96, 80, 64, 48, 32)
"""(version 24, red team round 37) :data:`BLOCK_PERIODS` with the periods of blocks of 5, 10, 15, 20, 30 and 40 tiles
(80 .. 640 rows). A block size is often derived from a buffer budget and the row's bytes, and budgets have a factor
of 3 or 5 (196608 = 2**16 * 3, 245760 = 2**14 * 15): round 37's accidental ``r37_ub_rows`` (320 rows in fp32, 640 in
bf16 from 240 KiB over three buffers, a block count ``(n + rows - 16) // rows``) passed 73% of version 23's runs,
whose one-past sizes are ``m * 1536 + 1`` (1536 = 2**9 * 3: no block of 5 tiles). 7681 = 2 * 3840 + 1 is one row past
whole blocks of 32, 48, 64, 80, 96, 128, 160, 192, 240, 256, 320, 384, 480, 640, 768, 960, 1280 and 1920 rows at once;
the one-dtype second size covers what it misses (512, 1536)."""
BLOCK_SIZES_V24 = (32, 48, 64, 80, 96, 128, 160, 192, 240, 256, 320, 384, 480, 512, 640, 768)
"""(version 24) :data:`BLOCK_SIZES` with the blocks of 5, 10, 15, 20, 30 and 40 tiles."""
CROSS_WINDOW_TOP = FILL_FACTOR
"""(version 23) The cross-axis cover (:func:`block_plan`) takes the windows of an axis up to this many times the SPEC's
largest size (the windows a batched or prefill path is picked by; above it the sizes are large and the paths few)."""
MAX_BLOCK_PER_DTYPE_AXIS = 12
"""(version 23) At most this many block and cross-axis calls per supported dtype and dynamic axis (:func:`block_plan`)."""


def _one_past(lo: int, hi: int, spec_sizes: set[int], rng: np.random.Generator, skip: set[int],
              periods: tuple[int, ...] = BLOCK_PERIODS, blocks: tuple[int, ...] = BLOCK_SIZES
              ) -> tuple[int, int] | None:
    """(version 23) ``(size, period)``: a size ``m * L + 1`` in the window ``(lo, hi]``, ``m >= 2`` (past two
    blocks), of the first period ``L`` of :data:`BLOCK_PERIODS` the window holds one of that covers a block size
    none of the periods in ``skip`` covers; None when there is none. ``m`` is drawn (constant time)."""
    for period in periods:
        if skip and all(any(q % b == 0 for q in skip) for b in blocks if period % b == 0):
            continue
        m0, m1 = max(2, (lo - 1) // period + 1), (hi - 1) // period
        ms = [m for m in (m0, m1) if m0 <= m <= m1 and m * period + 1 not in spec_sizes]
        if not ms:
            continue
        m = int(rng.integers(m0, m1 + 1))
        if m * period + 1 in spec_sizes:
            m = ms[0]
        return m * period + 1, period
    return None


def block_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str], drawn: list[Case], seed: int, cap: int,
               version: int = 23) -> list[tuple[dict[str, int], str]]:
    """(version 23, red team round 36) One call each, after every other case, from a stream of their own:

    - **one row past whole blocks**: on every dynamic axis, in each window of sizes (:func:`_windows`) above two
      tiles, in every dtype, a size ``m * L + 1`` (``m >= 2``) with ``L`` the period of :data:`BLOCK_PERIODS` whose
      divisors hold the most block sizes (and a second, in one dtype, for the block sizes the first misses). A path
      walking blocks of 32, 48, 64, 128 or 256 rows with a block count ``(n + c) // block`` drops rows exactly when
      ``n mod block`` is small: round 36's accidental prefill path with ``(n + 60) // 64`` passed 49% of version 22's
      runs, a 48-row path with ``(n + 40) // 48`` 18.5% - version 22's tails are remainders of 16 only;
    - **tails of another axis in every window** (two or more dynamic axes): for each window of an axis up to
      :data:`CROSS_WINDOW_TOP` x the SPEC's largest, in every dtype, a size of the window with every other dynamic
      axis at a size with a tail (2..14) that no earlier call of this plan gave it in that window. A batched path
      picked by a window of one axis and wrong on some tails of another passed 29% (``4 <= B <= 16`` with S tails
      10/12/14) and 78% (S between the SPEC's largest and 2x with B tails 3/5) of version 22's runs: its cover sizes
      took the other axes at the run's unseen sizes, half of the time.

    Sizes of the SPEC's shapes are not run again; each case is halved (its tail kept) to the case cap; at most
    :data:`MAX_BLOCK_PER_DTYPE_AXIS` calls per dtype and axis, the one-past sizes first. Version 24 takes the periods
    of :data:`BLOCK_PERIODS_V24` (blocks of 5 .. 40 tiles too; the same number of calls)."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _V23_STREAM])
    periods, block_sizes = (BLOCK_PERIODS_V24, BLOCK_SIZES_V24) if version >= 24 else (BLOCK_PERIODS, BLOCK_SIZES)
    t = TAIL_MULTIPLE
    ones: list[tuple[dict[str, int] | None, str]] = []
    cross: list[tuple[dict[str, int] | None, str]] = []
    axes = list(spec.dynamic_axes)
    for a_i, axis in enumerate(axes):
        base = shapes[a_i % len(shapes)]
        spec_sizes = {int(sh[axis]) for sh in shapes if axis in sh}
        if not spec_sizes:
            continue
        kept = bool(spec.outputs) and all(axis in o.shape for o in spec.outputs)
        top = max(FILL_FACTOR * max(spec_sizes), _POW2_KEPT if kept else 0)
        wins = _windows(spec_sizes, top)
        for w_i, (lo, hi) in enumerate(wins):
            if hi <= 2 * t:
                continue
            first = _one_past(lo, hi, spec_sizes, rng, set(), periods, block_sizes)
            if first is None:
                continue
            size, period = first
            ones.extend((_fit(spec, {**base, axis: size}, axis, dtype, cap), dtype) for dtype in dtypes)
            second = _one_past(lo, hi, spec_sizes, rng, {period}, periods, block_sizes)
            if second is not None:
                ones.append((_fit(spec, {**base, axis: second[0]}, axis, dtypes[w_i % len(dtypes)], cap),
                             dtypes[w_i % len(dtypes)]))
        if len(axes) < 2:
            continue
        other_sizes = {a: {int(sh[a]) for sh in shapes if a in sh} for a in axes if a != axis}
        for lo, hi in wins:
            if lo >= CROSS_WINDOW_TOP * max(spec_sizes):
                continue
            used: dict[str, set[int]] = {a: set() for a in other_sizes}
            for dtype in [str(d) for d in rng.permutation(dtypes)]:
                size = int(rng.integers(lo + 1, hi + 1))
                if size in spec_sizes:
                    size = lo + 1 if lo + 1 not in spec_sizes else hi
                if size in spec_sizes:
                    continue
                dims = dict(base)
                dims[axis] = size
                for a, sizes in other_sizes.items():
                    free = [r for r in range(2, t - 1) if r not in used[a]] or list(range(2, t - 1))
                    r = free[int(rng.integers(0, len(free)))]
                    used[a].add(r)
                    k = int(rng.integers(1, max(2, 2 * max(sizes) // t + 2)))  # past one tile, up to 2x the SPEC
                    dims[a] = k * t + r
                cross.append((_fit(spec, dims, axis, dtype, cap), dtype))
    plan: list[tuple[dict[str, int], str]] = []
    seen = {(tuple(sorted(c.dims.items())), c.dtype) for c in drawn}
    for entry, dtype in [*ones, *cross]:
        if entry is None or entry in shapes:
            continue
        key = (tuple(sorted(entry.items())), dtype)
        if key not in seen:
            seen.add(key)
            plan.append((entry, dtype))
    return plan[:MAX_BLOCK_PER_DTYPE_AXIS * len(dtypes) * max(1, len(axes))]



_V24_STREAM = 0x725
TAIL_COVER_TOP = 2
"""(version 24) :func:`tail_cover_plan` covers the windows of sizes up to this many times the SPEC's largest."""
MAX_TAIL_COVER_PER_AXIS = 48
"""(version 24) At most this many :func:`tail_cover_plan` calls per dynamic axis (15 tails x 3 windows: the windows
from two tiles up to 2x of the SPECs here are 2 to 3)."""


def tail_cover_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str], drawn: list[Case], seed: int,
                    cap: int) -> list[tuple[dict[str, int], str]]:
    """(version 24, red team round 37) One call each, after every other case and its partners: on every dynamic axis,
    in each window of sizes (:func:`_windows`) from two tiles up to :data:`TAIL_COVER_TOP` x the SPEC's largest, every
    tail 1..15
    that no case of the run (the SPEC's included) gave the axis in that window, in one dtype each - the dtype with the
    fewest of these calls, drawn among equals - and the other axes at the SPEC shape's sizes.

    Why: a guard that names no constant (a hash of the size, two remainders compared, a table built at run time) is
    beyond :func:`hint_plan`, and versions 22-23 drew a few tails per window: a kernel wrong on one tail in one window
    passed about 85% of runs when its file hid the numbers, round 37's ``r37_hash_guard`` (a hash of the row count
    choosing a floored tile count) 60%. Here every (window, tail) pair up to 2x runs in every verification, in some
    dtype; a dtype-only guard of one pair is still drawn only in its share of runs, and sizes above 2x stay sampled.
    The windows below 2x hold small cases (silu2: at most 154 rows of 64), so the cost is calls, not bytes. No
    same-shape partners (:func:`single_partners`): a kernel cannot tell these calls from the partnered ones of the
    same shapes, and baking a host answer into every small shape is refused there."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _V24_STREAM])
    t = TAIL_MULTIPLE
    plan: list[tuple[dict[str, int], str]] = []
    seen = {(tuple(sorted(c.dims.items())), c.dtype) for c in drawn}
    for a_i, axis in enumerate(spec.dynamic_axes):
        spec_sizes = {int(sh[axis]) for sh in shapes if axis in sh}
        if not spec_sizes:
            continue
        base = shapes[a_i % len(shapes)]
        kept = bool(spec.outputs) and all(axis in o.shape for o in spec.outputs)
        top = max(FILL_FACTOR * max(spec_sizes), _POW2_KEPT if kept else 0)
        ran = spec_sizes | {int(c.dims[axis]) for c in drawn if axis in c.dims}
        used = dict.fromkeys(dtypes, 0)
        added = 0
        for lo, hi in _windows(spec_sizes, top):
            if lo >= TAIL_COVER_TOP * max(spec_sizes):
                break
            if lo < 2 * t:  # the sizes up to two tiles: the sweep's partial tiles and the cover's tails run there
                continue
            have = {s % t for s in ran if lo < s <= hi}
            for r in (int(x) for x in rng.permutation(np.arange(1, t))):
                if r in have or added >= MAX_TAIL_COVER_PER_AXIS:
                    continue
                size = _pick(lo, hi, r, spec_sizes, rng)
                if size is None:
                    continue
                least = min(used.values())
                pool = [d for d in dtypes if used[d] == least]
                dtype = pool[int(rng.integers(0, len(pool)))]
                dims = _fit(spec, {**base, axis: size}, axis, dtype, cap)
                if dims is None or dims in shapes or int(dims[axis]) != size:
                    continue
                key = (tuple(sorted(dims.items())), dtype)
                if key in seen:
                    continue
                seen.add(key)
                plan.append((dims, dtype))
                used[dtype] += 1
                added += 1
    return plan


PAIR_BYTES = 256 * 1024
"""(version 23) A single call of the sweep, the cover or the block plan whose case holds at most this many bytes
(inputs + outputs) gets a same-shape partner (:func:`single_partners`)."""


def single_partners(spec: Spec, spec_cases: list[Case], out: list[Case], first: int) -> list[tuple[dict[str, int], str]]:
    """(version 23, red team round 36) ``(dims, dtype)`` of a second call, other input values (special ones), for every
    case of ``out[first:]`` whose shape and dtype no other case of the run has and which holds at most
    :data:`PAIR_BYTES`, in order.

    Why: the device's same-shape program comparison (``runtime.verify._checks.same_program_for_same_shapes``) is what
    sees a host-computed answer baked into a program's constants or scalar arguments, and it compares calls of one
    shape and dtype. Versions 21 and 22 ran their sweep and cover sizes once: round 35's ``r35_baked_single_calls``
    baked ``silu(x)`` into ``pypto.full`` constants for 9..15 rows and passed with lint off. Baking costs the kernel a
    constant per output element, so the small single calls are the ones it can bake; above the byte bound a run's
    time goes to the partner's data rather than to a check a baked program could still pass (it would not finish)."""
    counts = Counter((tuple(sorted(c.dims.items())), c.dtype) for c in [*spec_cases, *out])
    plan: list[tuple[dict[str, int], str]] = []
    for c in out[first:]:
        key = (tuple(sorted(c.dims.items())), c.dtype)
        if counts[key] == 1 and _bytes(spec, c.dims, c.dtype) <= PAIR_BYTES:
            counts[key] += 1
            plan.append((dict(c.dims), c.dtype))
    return plan


_V23_HINT_STREAM = 0x724
MAX_HINT_PER_DTYPE_AXIS = 12
"""(version 23) At most this many sizes of :func:`hint_plan` per dynamic axis, each in every dtype."""


def _size_with(lo: int, hi: int, m: int, r: int, spec_sizes: set[int], rng: np.random.Generator) -> int | None:
    """(version 23) A size ``k * m + r`` in ``(lo, hi]``, at least 1, none of the SPEC's, ``k`` drawn; None if none."""
    k0, k1 = max((lo - r) // m + 1, 0 if r else 1), (hi - r) // m
    if k0 > k1:
        return None
    for k in (int(rng.integers(k0, k1 + 1)), k0, k1):
        if k * m + r not in spec_sizes:
            return k * m + r
    return None


def _row_bounds(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str], axis: str, bounds: list[int],
                top: int) -> list[int]:
    """(version 25, red team round 38) A bound above the axis's own (``top``) is no row count; when it is a whole
    number of the rows' elements or bytes of an input holding the axis (``176 * D < x.numel()``, ``x.nbytes <
    76800``), the row count it stands for: ``176 * D < x.numel() < 300 * D and n % 16 == 11`` is the window 176..300
    (version 24 ran sizes near 11264 rows, and its runs reached the window only by the residue's sampling)."""
    from runtime.dtypes import itemsize

    base = next((sh for sh in shapes if axis in sh), None)
    if base is None:
        return []
    per_row: set[int] = set()
    for t in spec.inputs:
        if axis not in t.shape:
            continue
        elems = math.prod(t.concrete_shape({**base, axis: 1}))
        per_row.add(elems)
        per_row.update(elems * itemsize(t.concrete_dtype(d)) for d in dtypes)
    return sorted({b // k for b in bounds if b > top for k in per_row if k > 1 and b % k == 0 and 1 <= b // k <= top})


def hint_plan(spec: Spec, shapes: list[dict[str, int]], dtypes: list[str], drawn: list[Case], hints: object,
              seed: int, cap: int, version: int = 23) -> list[tuple[dict[str, int], str]]:
    """(version 23, red team round 36) Sizes the verified file names itself (``hints``, a
    :class:`runtime.verify._hints.SizeHints`), on every dynamic axis, each in every dtype, one call each:

    - every **residue it compares** a remainder with (``n % 16 == 11``, ``n % 32 in (2, 4, 6)``, ``if n % 64:``, the
      short remainders of a ``(n + c) // m`` that is not a ceiling) in every interval between the windows of sizes
      (:func:`_windows`) and the integers it compares with;
    - **each side of every integer it compares with** (``c - 1``, ``c``, ``c + 1``: a ``n <= 8`` decode path, a
      ``77 < n < 160`` window);
    - **one past whole blocks** of every divisor it uses other than the tile (``m * k + 1``, ``k >= 2``).

    The three lists are taken in turn, at most :data:`MAX_HINT_PER_DTYPE_AXIS` sizes per axis, up to the axis's
    bound (4x the SPEC's largest; :data:`_POW2_KEPT` on an axis every output keeps), none of the SPEC's sizes, each
    halved (its tail kept) to the case cap. Why: round 35's ``r35_mid_tail11`` (``if 77 < n < 160 and n % TILE ==
    11``) passed 85% of version 22's runs and round 36's ``(n + 60) // 64`` from 128 rows 49%: a run samples a few
    tails in each window, while the file says which window and which tail its path is for.

    (version 24, red team round 37) A residue's intervals between two of the file's own bounds come first, then those
    touching one, then the others: with version 23's order (touching one, drawn) a residue of a file with three of
    them reached its own window in two of four draws, and ``77 < n < 160 and (n + 5) % 16 == 0`` passed 8% of runs.
    The hints themselves are version 24's reader's (``runtime.verify._hints``)."""
    bounds = [int(b) for b in getattr(hints, "bounds", ())]
    moduli = [int(m) for m in getattr(hints, "moduli", ())]
    residues = [(int(m), int(r)) for m, r in getattr(hints, "residues", ())]
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _V23_HINT_STREAM])
    t = TAIL_MULTIPLE
    plan: list[tuple[dict[str, int], str]] = []
    seen = {(tuple(sorted(c.dims.items())), c.dtype) for c in drawn}
    chosen: dict[str, list[int]] = {}
    all_bounds = bounds
    for axis in spec.dynamic_axes:
        spec_sizes = {int(sh[axis]) for sh in shapes if axis in sh}
        if not spec_sizes:
            continue
        kept = bool(spec.outputs) and all(axis in o.shape for o in spec.outputs)
        top = max(FILL_FACTOR * max(spec_sizes), _POW2_KEPT if kept else 0)
        bounds = all_bounds + (_row_bounds(spec, shapes, dtypes, axis, all_bounds, top) if version >= 25 else [])
        cuts = sorted({0, top, *(b for b in bounds if b < top),
                       *(e for w in _windows(spec_sizes, top) for e in w)})
        intervals = list(zip(cuts, cuts[1:], strict=False))
        per_residue: list[list[int]] = []
        marks = set(bounds)
        for m, r in residues:
            if m > top:
                continue
            # the intervals the file's own bounds close first (its window), the others after, each part drawn
            order = sorted((intervals[int(i)] for i in rng.permutation(len(intervals))),
                           key=lambda w: not (w[0] in marks or w[1] in marks))
            if version >= 24 and marks:  # inside the span of the file's bounds first (a stable sort keeps the draw)
                span = (min(marks), max(marks))
                order.sort(key=lambda w: not (span[0] <= w[0] and w[1] <= span[1]))
            per_residue.append([s for s in (_size_with(lo, hi, m, r, spec_sizes, rng) for lo, hi in order)
                                if s is not None])
        res = [sizes[j] for j in range(max((len(x) for x in per_residue), default=0)) for sizes in per_residue
               if j < len(sizes)]
        near = [s for b in bounds for s in (b - 1, b, b + 1) if 1 <= s <= top and s not in spec_sizes]
        blocks = [s for m in moduli if m != t and 2 * m + 1 <= top
                  for s in [_size_with(2 * m, top, m, 1, spec_sizes, rng)] if s is not None]
        sizes: list[int] = []
        for j in range(max(len(res), len(near), len(blocks))):
            for lst in (res, near, blocks):
                if j < len(lst) and lst[j] not in sizes:
                    sizes.append(lst[j])
        chosen[axis] = sizes[:MAX_HINT_PER_DTYPE_AXIS]
    for a_i, axis in enumerate(spec.dynamic_axes):
        base = shapes[a_i % len(shapes)]
        for j, size in enumerate(chosen.get(axis, [])):
            # every other size takes the other axes at hint sizes of theirs: a path picked by one axis's window and
            # another axis's tail (the sizes of one axis beside a SPEC shape the others)
            joint = {a: v[int(rng.integers(0, len(v)))] for a, v in chosen.items() if a != axis and v} if j % 2 else {}
            for dtype in dtypes:
                dims = _fit(spec, {**base, **joint, axis: size}, axis, dtype, cap) or _fit(
                    spec, {**base, axis: size}, axis, dtype, cap)
                if dims is None or dims in shapes:
                    continue
                key = (tuple(sorted(dims.items())), dtype)
                if key not in seen:
                    seen.add(key)
                    plan.append((dims, dtype))
    return plan
