"""Red team round 33 (session 43): a str attribute whose other values golden.py names without writing them beside the
parameter. Fixture ops and candidates are in ``fixture_s43/``.

Fixed (each got PASS on every seed of unseen drawing version 19; asserted refused on seeds 0, 11 and 12345):

- ``at_silu_only`` (act_table): the wrapper takes ``kind`` and always computes silu. golden.py looks the kind up with
  ``ACTIVATIONS.get(kind)`` in a table built by ``dict(silu=..., gelu_tanh=...)``: version 19 read only literals
  compared with the parameter (or the literal keys of a dict indexed by it), found no other value and ran none;
- ``rr_sum_only`` (row_reduce): the wrapper takes ``mode`` and always sums. golden.py checks ``mode not in MODES``
  (a module-level tuple) and finds its reduction by ``for name, fn in _REDUCE: if name == mode``.

Version 20 (``runtime.opdir._intattrs.string_attribute_values``, ``tests/verify/test_unseen_v20_s43.py``) also reads
the values of a constant the parameter is compared with or tested ``in``, of a name a loop binds from one, and the keys
of a table built by ``dict(...)`` or read with ``.get``: FAIL_NUMERIC on ``kind=gelu_tanh`` / ``mode=mean``.

- ``gn_groups_fixed`` (group_norm, round 31's kernel built for the SPEC's 8 groups, byte for byte): golden.py is the
  GroupNorm of round 32 with its group statistics broadcast back explicitly, as llada2_gate_select's gym golden
  expands its group mask - ``np.broadcast_to(mean, (b, num_groups, d // num_groups))``. That size kept the int at
  the SPEC's value (version 19 varied a reshape's int only); version 20 counts an expand's sizes as a reshape's
  (``IntRole.shape_only``), so ``num_groups`` runs at 2 or 4, 16 and 32 - and llada2's ``num_expert_group`` too
  (a shape int is now kept by an input's literal dim only, not by its [N, 8] output or its 8-row SPEC shape).

Honest: ``at_honest``, ``rr_honest`` (every value golden knows, unknown ones refused) and ``gn_honest`` PASS on the
same seeds; so does the gym's llada2_gate_select (its kernel takes any group count).

Open: a value golden.py never names at all (``kind.startswith("gelu")``, ``getattr(np, mode)``, a table filled at run
time) is still not run - verify cannot know it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_round10_s32 import verify_three_seeds

HERE = Path(__file__).resolve().parent / "fixture_s43"
REUSED = {"gn_groups_fixed": HERE.parent / "fixture_s41" / "candidates",
          "gn_honest": HERE.parent / "fixture_s42" / "candidates"}
"""candidates of earlier rounds run here unchanged, against this round's group_norm golden"""
FIXED = [("act_table", "at_silu_only", "FAIL_NUMERIC", "kindgelu_tanh"),
         ("row_reduce", "rr_sum_only", "FAIL_NUMERIC", "modemean"),
         ("group_norm", "gn_groups_fixed", "FAIL_NUMERIC", "num_groups")]
HONEST = [("act_table", "at_honest", "PASS", "kindgelu_tanh"), ("row_reduce", "rr_honest", "PASS", "modemax"),
          ("group_norm", "gn_honest", "PASS", "num_groups")]


@pytest.mark.slow
@pytest.mark.parametrize(("op", "candidate", "verdict", "where"), FIXED + HONEST)
def test_round33_candidate_gets_its_verdict_on_three_seeds(tmp_path: Path, op: str, candidate: str, verdict: str,
                                                           where: str) -> None:
    for seed, report in verify_three_seeds(tmp_path, _fixture(tmp_path, op, candidate), op, candidate):
        assert report.verdict == verdict, (seed, report.verdict, [r[:200] for r in report.reasons[:3]])
        # a case at a value version 20 added: failed (the hostile kernel is caught there), or ran and passed
        assert any(where in c.name and (c.status != "pass") == (verdict != "PASS") for c in report.cases), \
            (seed, [r[:200] for r in report.reasons[:3]])


def _fixture(tmp_path: Path, op: str, candidate: str) -> Path:
    """This round's fixture, or a copy of its op beside an earlier round's candidate (`REUSED`)."""
    if candidate not in REUSED:
        return HERE
    fixture = tmp_path / "fixture"
    shutil.copytree(HERE / op, fixture / op)
    (fixture / "candidates").mkdir()
    shutil.copyfile(REUSED[candidate] / f"{candidate}.py", fixture / "candidates" / f"{candidate}.py")
    return fixture
