"""The classes of bug the fresh gym corpus (``gym_corpus_fresh``) found bisect missing, on the real gym kernels
(vendor code read from ``$FORGE_SHARED/gym``, bugs planted at test time; the full corpus is
``bench/bisect_gym_corpus.py --corpus fresh``):

* ``fag_helper_sub``, ``fag_dv_scale``: flash_attention_score_grad's kernel parameters ``q``/``k``/``v`` are named
  like golden locals and were taken for checkpoints - poisoned with NaN in the sandbox although the wrapper fills
  them with the inputs: every bug was "NaN first appears at the view of q" (line 280). A parameter holding a case
  input is an input (not poisoned, not a checkpoint); the helper's swapped ``sub`` and the ``dv`` scale are named;
* ``fag_d_axis``, ``lstm_rms_keepdim``: a reduction over the wrong axis / with ``keepdim`` dropped makes the kernel
  raise at the op that combines it (57 in the helper, 65): the reduction is named;
* ``fag_d_bf16``: a mixed-dtype error in the helper; the statement that uses un-cast the expression the kernel casts
  everywhere else is named (was line 46, a value cast to bf16 for another reason);
* ``fag_wrapper_ss``: the wrapper passes ``softmax_max`` as ``softmax_sum``: its line is named (was the kernel's
  ``div`` by it);
* ``as_wrapper_pad``: the wrapper pads the scores with 0 instead of -1e9 (not localized: nothing in the kernel
  departs from a golden it can be mapped to); a replay with the padding set to -inf repairs every output: the line
  that sets the pad value is named;
* ``ll_bias_row``: a Python loop assembles every bias row at ``[0, 0]``; NaN appears where the unwritten rows are
  read (that op was named): the write stuck at one offset is named;
* ``rms_core_arg``: the helper is called with the wrong feature count; the helper's division is named, and its call
  site is now found for a kernel decorated ``@pypto.frontend.jit(runtime_options=...)``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from gym_corpus_fresh import BUGS, import_op, materialize

from runtime.bisect import bisect

pytestmark = pytest.mark.slow




def test_fresh_corpus_is_other_kinds_than_the_first() -> None:
    from gym_corpus import BUGS as FIRST

    assert len(BUGS) >= 20 and len({b.id for b in BUGS}) == len(BUGS)
    assert not {b.id for b in BUGS} & {b.id for b in FIRST}
    assert {"wrapper", "helper", "keepdim_dropped", "swapped_operands", "wrong_axis", "tail_only"} <= {b.kind for b in BUGS}


@pytest.mark.parametrize("bug_id", ["fag_helper_sub", "fag_dv_scale", "fag_d_axis", "lstm_rms_keepdim", "fag_d_bf16",
                                    "fag_wrapper_ss", "as_wrapper_pad", "ll_bias_row", "rms_core_arg"])
def test_fresh_bug_is_named_at_its_line(op_root: Path, tmp_path: Path, bug_id: str, golden_cache: dict) -> None:
    bug = next(b for b in BUGS if b.id == bug_id)
    d, stage, (lo, hi) = materialize(bug, import_op(bug.op, op_root), tmp_path)
    rep = bisect(d, stage, golden_cache=golden_cache, timeout=600.0)
    f = rep.first_divergence
    assert f is not None, rep.summary + "\n" + "\n".join(rep.evidence)
    assert lo <= (f.line or 0) <= hi or lo <= (f.call_site or 0) <= hi, \
        f"{bug_id}: named line {f.line}, bug on {lo}-{hi}: {rep.summary} {rep.evidence}"
    assert f.status not in ("match", "input", "const"), rep.to_json()
    if bug_id.startswith("fag_"):
        # q/k/v hold the inputs: never checkpoints, never poisoned
        assert not any(c.name in ("q", "k", "v") for c in rep.checkpoints), rep.checkpoints
        assert not any("NaN first appears" in e for e in rep.evidence), rep.evidence
