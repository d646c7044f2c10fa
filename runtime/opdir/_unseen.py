"""Unseen cases: shapes, seeds and a call pattern the author of a kernel could not see (issue #24, item 4).

Why: the SPEC's cases are public. A kernel whose tile count is ``(n + 3) // 16`` is exact for ``n = 64`` and
``n = 77`` and drops rows for ``n = 70``; a kernel can fingerprint six public inputs; a kernel can change after
the N-th call. So every verification also runs cases drawn from a per-run seed that nobody saw in advance.

What :func:`unseen_cases` draws (``rng = default_rng([seed, 0x7e5])``), from the SPEC alone:

- per dynamic axis, seven sizes against :data:`~runtime.opdir._cases.TAIL_MULTIPLE` (16), see :func:`_axis_sizes`:
  a **tail of 1**, a **fill** size (half to all of what the byte cap allows, at most 4x the SPEC's largest),
  an **aligned** one, a **uniform tail**, **one less than a tile multiple**, a **small** one and a **larger**
  one; sizes already in the SPEC for that axis are skipped. The other dims come from a P0 shape (rotating);
- a **fresh-seed rerun** of every P0 shape, and every shape+dtype that has only one case in the run gets a
  second one with another seed: the verifier compares what the kernel sent to the device across calls of the
  same shape (a program that depends on input values is smuggling), which needs two calls per shape;
- dtypes and value bands rotate; seeds are drawn (>= 2**20, never a SPEC seed).

Bounds (stated in docs/verification.md): at most :data:`MAX_UNSEEN` unseen wrapper calls; each unseen case holds
at most :func:`case_cap` bytes of inputs + outputs (1.25x the largest SPEC case, at least 4 MiB, at most
:data:`CASE_BYTES_CAP` = 64 MiB); an axis size is halved (keeping its tail) until the case fits. SPEC shapes
over the cap get no fresh-seed rerun and no repeat. So unseen cases add at most 20 calls of at most 64 MiB each.

The call order (SPEC and unseen cases interleaved, plus repeats) is :func:`call_plan`'s: also drawn from the
seed, so the number and order of wrapper calls differ between verifications.
"""

from __future__ import annotations

import numpy as np

from runtime.opdir._cases import BANDS, TAIL_MULTIPLE, Case, _dims_label, _has_tail
from runtime.opdir._memory import case_bytes
from runtime.opdir._spec import Spec

__all__ = ["CASE_BYTES_CAP", "FILL_FACTOR", "MAX_UNSEEN", "TOTAL_BYTES_FLOOR", "UNSEEN_PREFIX", "call_plan", "case_cap",
           "draw_seed", "total_cap", "unseen_cases", "verification_seed"]

MAX_UNSEEN = 20
"""Most unseen wrapper calls in one verification (same-shape reruns included)."""
TOTAL_BYTES_FLOOR = 256 * 1024**2
"""All unseen cases together hold at most ``max(TOTAL_BYTES_FLOOR, largest SPEC case / 4)`` bytes of inputs +
outputs (:func:`total_cap`): the verifier holds every case at once, so for a several-GB op 20 unseen cases of
64 MiB each were a constant of about 1.25 GiB, several times over (inputs, golden and device outputs)."""
_EVERY_DTYPE = ("tail1", "small")
CASE_BYTES_CAP = 64 * 1024**2
"""Inputs + outputs of one unseen case stay under this unless the SPEC's own cases are bigger."""
UNSEEN_PREFIX = "unseen"
"""Unseen case names start with it: ``unseen3-B70_D64-fp32`` (no seed: the seed is never shown to agents)."""
_SEED_BASE = 1 << 20
_STREAM = 0x7E5


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


def _axis_sizes(spec: Spec, axis: str, rng: np.random.Generator) -> list[tuple[str, int]]:
    """(label, size) for ``axis``, most telling first, none of the SPEC's own; size ``0`` stands for the "fill"
    size, which :func:`unseen_cases` draws against the byte cap (it depends on the other dims and the dtype).

    - a **tail of 1** (16k + 1): a tile count ``(n + c) // 16`` is exact for every tail >= 16 - c and drops the
      last rows for every tail below it; only a tail of 1 catches every c < 15 whatever the seed;
    - **fill**: between half and all of the largest size that fits the byte cap (at most :data:`FILL_FACTOR` x
      the SPEC's largest): a kernel that is right only up to some size it clamps to must clamp above that;
    - an **aligned** size (16k with k odd, off the SPEC): a "fast path" taken on multiples of the tile that
      assumes 32-, 64-, ... row alignment is wrong on it;
    - a **uniform tail** (16k + r, r drawn from 2..14): every tail is as likely as any other;
    - **one less than a tile multiple** (16k - 1), a **small** size (1..8), a **larger** one (1.5x..3x the
      SPEC's largest, log-uniform, any remainder).

    ``k`` is drawn from 1 .. 2x the SPEC's largest size in tiles, so no size class stays near the SPEC's.
    (Held-out attack A1: the earlier draw never exceeded ~1.5x the SPEC, never drew a multiple of 16 and rarely
    an even tail - a kernel clamping its tile count or wrong on aligned sizes passed every seed.)
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
    larger = int(np.exp(rng.uniform(np.log(max(2.0, 1.5 * hi)), np.log(max(3.0, 3.0 * hi)))))
    out: list[tuple[str, int]] = []
    for label, size in (("tail1", tail_one), ("fill", 0), ("aligned", aligned), ("tail", uniform_tail),
                        ("tile-1", tile_minus_one), ("small", small), ("larger", larger)):
        if size not in seen and size not in [o[1] for o in out]:
            out.append((label, size))
    return out


def _fill(spec: Spec, dims: dict[str, int], axis: str, dtype: str, cap: int, rng: np.random.Generator) -> int:
    """A size for ``axis`` between half and all of the largest one whose case fits ``cap`` bytes (and at most
    :data:`FILL_FACTOR` x the SPEC's largest size), with a random remainder."""
    seen = [int(s[axis]) for s in spec.p0_shapes if axis in s] or [TAIL_MULTIPLE]
    top = FILL_FACTOR * max(seen)

    def fits(n: int) -> bool:
        probe = Case(name="probe", dims={**dims, axis: n}, dtype=dtype, seed=0, band=BANDS[0])
        return case_bytes(spec, probe) <= cap

    if not fits(1):
        return 0
    lo, hi = 1, top
    if not fits(hi):
        while hi - lo > 1:  # the largest size that fits: case bytes grow with the size
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        hi = lo
    return max(1, int(rng.integers(max(1, hi // 2), hi + 1)))


def _fit(spec: Spec, dims: dict[str, int], axis: str, dtype: str, cap: int) -> dict[str, int] | None:
    """``dims`` with ``axis`` halved (its tail kept) until the case holds at most ``cap`` bytes; None if never."""
    t = TAIL_MULTIPLE
    size = dims[axis]
    while True:
        trial = {**dims, axis: size}
        probe = Case(name="probe", dims=trial, dtype=dtype, seed=0, band=BANDS[0])
        if case_bytes(spec, probe) <= cap:
            return trial
        if size <= 1:
            return None
        size = max(1, (size // t // 2) * t + size % t) if size > t else max(1, size // 2)


def case_cap(spec: Spec, spec_cases: list[Case]) -> int:
    """Most bytes (inputs + outputs) one unseen case may hold: 1.25x the largest SPEC case, at least 4 MiB, at
    most :data:`CASE_BYTES_CAP`."""
    largest = max((case_bytes(spec, c) for c in spec_cases), default=0)
    return min(CASE_BYTES_CAP, max(CASE_BYTES_CAP // 16, int(largest * 1.25)))


def total_cap(spec: Spec, spec_cases: list[Case]) -> int:
    """Most bytes all unseen cases of one verification hold together (see :data:`TOTAL_BYTES_FLOOR`)."""
    largest = max((case_bytes(spec, c) for c in spec_cases), default=0)
    return max(TOTAL_BYTES_FLOOR, largest // 4)


def unseen_cases(spec: Spec, spec_cases: list[Case], seed: int) -> list[Case]:
    """The unseen cases of one verification (deterministic in ``seed``; see the module docstring)."""
    rng = np.random.default_rng([int(seed) & ((1 << 63) - 1), _STREAM])
    shapes = [dict(s) for s in spec.p0_shapes] or [{}]
    dtypes = list(spec.supported_dtypes)
    cap = case_cap(spec, spec_cases)
    budget = [total_cap(spec, spec_cases)]
    used_seeds = {c.seed for c in spec_cases}
    out: list[Case] = []

    def new_seed() -> int:
        while True:
            s = int(rng.integers(_SEED_BASE, 1 << 62))
            if s not in used_seeds:
                used_seeds.add(s)
                return s

    def fits(dims: dict[str, int], dtype: str, n: int = 1) -> bool:
        """``n`` more cases of this shape stay within the calls and the total byte budget."""
        size = case_bytes(spec, Case(name="probe", dims=dims, dtype=dtype, seed=0, band=BANDS[0]))
        return len(out) + n <= MAX_UNSEEN and n * size <= budget[0]

    def add(dims: dict[str, int], dtype: str) -> None:
        if not fits(dims, dtype):
            return
        budget[0] -= case_bytes(spec, Case(name="probe", dims=dims, dtype=dtype, seed=0, band=BANDS[0]))
        band = BANDS[len(out) % len(BANDS)]
        name = f"{UNSEEN_PREFIX}{len(out) + 1}-{_dims_label(spec, dims)}-{dtype}"
        out.append(Case(name=name, dims=dims, dtype=dtype, seed=new_seed(), band=band,
                        tail=_has_tail(spec, dims), unseen=True))

    planned: list[tuple[dict[str, int], str]] = []
    per_axis = [(a_i, axis, _axis_sizes(spec, axis, rng)) for a_i, axis in enumerate(spec.dynamic_axes)]
    offset = int(rng.integers(0, len(dtypes)))  # which dtype each size class gets is drawn too (attack A1b)
    for s_i in range(max((len(sizes) for _, _, sizes in per_axis), default=0)):  # round robin: most telling first
        for a_i, axis, sizes in per_axis:
            if s_i >= len(sizes):
                continue
            label, size = sizes[s_i]
            base = shapes[(a_i + s_i) % len(shapes)]
            # the two most telling classes run in every dtype: a dtype-specific path cannot hide from them
            for dtype in dtypes if label in _EVERY_DTYPE else [dtypes[(offset + a_i + s_i) % len(dtypes)]]:
                got = size or _fill(spec, base, axis, dtype, cap, rng)
                if not got or got in [int(sh.get(axis, -1)) for sh in shapes]:
                    continue
                dims = _fit(spec, {**base, axis: got}, axis, dtype, cap)
                if dims is not None and (dims, dtype) not in planned:
                    planned.append((dims, dtype))
    # two calls per new shape and dtype: the same-shape comparison needs a second value set
    for dims, dtype in planned[: MAX_UNSEEN // 2 - 1]:  # leaves room for the P0 reruns
        if fits(dims, dtype, 2):  # a pair or nothing: one call of a shape cannot be compared with another
            add(dims, dtype)
            add(dims, dtype)
    for s_i, base in enumerate(shapes[:2]):  # fresh seeds on the SPEC's own shapes (they have 3 seeds already)
        dtype = dtypes[s_i % len(dtypes)]
        probe = Case(name="probe", dims=dict(base), dtype=dtype, seed=0, band=BANDS[0])
        if case_bytes(spec, probe) <= cap:  # a several-GB SPEC case is not run again
            add(dict(base), dtype)
    groups: dict[tuple, int] = {}
    for c in [*spec_cases, *out]:
        key = (tuple(sorted(c.dims.items())), c.dtype)
        groups[key] = groups.get(key, 0) + 1
    for c in spec_cases:
        key = (tuple(sorted(c.dims.items())), c.dtype)
        if groups.get(key) == 1 and case_bytes(spec, c) <= cap:
            groups[key] = 2
            add(dict(c.dims), c.dtype)
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
