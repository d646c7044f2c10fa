"""Red team s22: unseen cases with every dynamic axis off the SPEC at once (unseen drawing version 3).

Every unseen shape of version 2 moved one dynamic axis away from a P0 shape. A kernel over [B, N] that drops a row
only when neither B nor N is a SPEC size - on purpose, or by accident in the corner tile that is partial on both
axes - passed every verification (``/tmp/s22/redteam``: PASS on seeds 0-3, wrong for a user at (37, 70)).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from verify_helpers import FIXTURES, KERNELS, make_op, settings

from runtime.opdir import TAIL_MULTIPLE, load_op_dir
from runtime.opdir._unseen import unseen_cases
from runtime.verify import verify

SEEDS = range(60)


def _off_everywhere(op, case) -> bool:
    """Every dynamic axis of ``case`` is off the SPEC's sizes and ends in a partial tile."""
    spec = op.spec
    return all(case.dims[a] not in {int(s[a]) for s in spec.p0_shapes} and case.dims[a] % TAIL_MULTIPLE
               for a in spec.dynamic_axes)


def test_every_seed_draws_a_shape_with_every_dynamic_axis_off_the_spec_in_a_tail() -> None:
    op = load_op_dir(FIXTURES / "gelu2d")
    spec_cases = op.cases()
    for seed in SEEDS:
        joint = [c for c in unseen_cases(op.spec, spec_cases, seed, version=3) if _off_everywhere(op, c)]
        assert len(joint) >= 2, seed  # a pair: the device's same-shape comparison needs two value sets
    # the gap it closes: version 2 drew no such shape for this SPEC on any seed
    assert not any(_off_everywhere(op, c) for seed in SEEDS
                   for c in unseen_cases(op.spec, spec_cases, seed, version=2))


def test_one_dynamic_axis_draws_what_version_2_drew() -> None:
    """Version 3 only adds the joint shape: a SPEC with one dynamic axis gets version 2's cases, seed for seed."""
    op = load_op_dir(FIXTURES / "silu")
    assert len(op.spec.dynamic_axes) == 1
    for seed in range(20):
        assert unseen_cases(op.spec, op.cases(), seed, version=3) == unseen_cases(op.spec, op.cases(), seed,
                                                                                  version=2), seed


@pytest.mark.heavy_in_ci
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_kernel_wrong_only_off_the_spec_on_every_axis_fails(tmp_path: Path, seed: int) -> None:
    op_dir = make_op(tmp_path, "gelu2d")
    shutil.copy(KERNELS / "s22_joint_axes_corner.py", op_dir / "gelu2d_impl.py")
    report = verify(op_dir, op_dir / "gelu2d_impl.py", settings=settings(), unseen_seed=seed)
    assert report.verdict == "FAIL_NUMERIC", (report.verdict, report.reasons[:3])
    assert all(c.status == "pass" for c in report.cases if not c.unseen)  # right on every public case
    op = load_op_dir(op_dir)
    failing = [c for c in report.cases if c.status != "pass"]
    # the kernel is wrong wherever both axes are off the SPEC (a tail or not: version 23 also draws whole-tile sizes
    # off the SPEC, e.g. (30, 96), and the kernel drops a row there too); right wherever either axis is a SPEC size
    spec = {a: {int(s[a]) for s in op.spec.p0_shapes} for a in op.spec.dynamic_axes}
    assert failing and all(set(c.dims) == {"B", "N"} and all(c.dims[a] not in spec[a] for a in spec) for c in failing)
    assert any(_off_everywhere(op, c) for c in failing)  # the joint tail shapes version 3 added are among them
