"""A fifteenth corpus (session 43): three small rows, one per open item of the fourteenth corpus, planted in real gym
operators at test time (nothing of them is copied here; ``GymBug`` format of tests/bisect/gym_corpus.py, lines are the
vendor file's), in operators that bisect in seconds where the fourteenth's rows took minutes (gated_delta_rule):

- ``f15_lstm_rms_axis_neg2``: the RMSNorm helper's ``sum(y, -1)`` over ``-2`` (the rows of the unrolled tile): the
  reduction's operand is ``mul(x * x, 1 / H)``, a matching value times a scalar that has no golden of its own, and
  nothing after the sum has a golden either (item 1);
- ``f15_rms_mean_alias``: ``mean_sq = s / num_features`` written as the bare alias ``mean_sq = s`` - no op runs on
  the line, the ``add`` of ``eps`` reading ``mean_sq`` is the first op whose value departs (item 2);
- ``f15_as_wrapper_pad16``: attn_softmax's wrapper pads the scores to a multiple of 16 instead of ``S_TILE`` (64):
  a tail case's last 64-wide view then reads past the padded buffer (item 3).

Scored by ``tests/bisect/test_fifteenth_corpus_s43.py`` (before and after the session's change: see there).
"""

from __future__ import annotations

import gym_corpus_fresh as _fresh
from gym_corpus import GymBug

materialize = _fresh.materialize

BUGS: list[GymBug] = [
    GymBug("f15_lstm_rms_axis_neg2", "sum_lstm", "helper_wrong_axis", 60, "pypto.sum(y, -1, keepdim=True)",
           "pypto.sum(y, -2, keepdim=True)"),
    GymBug("f15_rms_mean_alias", "rms_norm", "bare_alias", 54, "mean_sq = s / num_features", "mean_sq = s"),
    GymBug("f15_as_wrapper_pad16", "attn_softmax", "wrapper_short_pad", 88, "padded_S = n_tiles * S_TILE",
           "padded_S = (S + 15) // 16 * 16"),
]
