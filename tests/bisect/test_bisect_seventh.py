"""What the seventh gym corpus (``gym_corpus_seventh``, session 37) found bisect naming wrong, on small kernels.

* a constant the kernel reads from a configuration object (``eps = config.eps``) and applies in a helper
  (``mean_sq + eps`` inside ``rms_norm_core``): the helper's op was named, though it is right. Now
  (``_scalar.wrapper_scalar`` through ``_attribute_source``) the constant is followed from the helper's parameter to
  the kernel's argument and its ``config.<attr>`` read; when the golden is the same op with another constant, the
  wrapper line building the object is named (``RMSNormConfig(x.shape[1], eps)``: positional order), or the kernel
  line reading the wrong attribute (``eps = config.num_features``, s36's ``rms_eps_attr``);
* a tail bound one row short (``t_valid = (t - t_idx - 1).min(tile_t)``): the padding reaches the output and the
  emulator raises at the write; that line was named. Now (``_rules.static_poison_bound_source``) the one tail bound
  every ``valid_shape`` upstream of the written value takes (through in-place writes: ``assemble(v, .., tmp)``) is
  named.
"""

from __future__ import annotations

from pathlib import Path

from planting import plant

from runtime.bisect import bisect
from runtime.bisect._rules import static_poison_bound_source

DATA = Path(__file__).parent / "seventh_data"

_POISON = "write-back into 'out' carries 16 poisoned element(s): data from outside a valid_shape (padding)"

_TILED = '''
import pypto


@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32), out: pypto.Tensor([pypto.DYNAMIC, 16], pypto.DT_FP32)):
    t = x.shape[0]
    for s_idx in pypto.loop((t + 31) // 32, name="t_loop"):
        t_idx = s_idx * 32
        t_valid = (t - t_idx - 1).min(32)
        v = pypto.view(x, [32, 16], [t_idx, 0], valid_shape=[t_valid, 16])
        v = pypto.exp(v)
        tmp = pypto.Tensor([t, 16], dtype=pypto.DT_FP32)
        pypto.assemble(v, [t_idx, 0], tmp)
        out[:] = tmp
'''


def _planted(tmp: Path, name: str, old: str, new: str) -> tuple[Path, int]:
    return plant(DATA, tmp, name, old, new)


def test_a_config_built_with_its_fields_in_the_wrong_order_names_the_wrapper_line(tmp_path: Path,
                                                                                   golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "cfgnorm", "NormConfig(eps=eps, width=x.shape[1])", "NormConfig(x.shape[1], eps)")
    rep = bisect(op_dir, "cfgnorm_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("config.eps" in e for e in rep.evidence), rep.evidence


def test_a_kernel_reading_the_wrong_config_attribute_names_that_line(tmp_path: Path, golden_cache: dict) -> None:
    op_dir, line = _planted(tmp_path, "cfgnorm", "eps = config.eps", "eps = config.width")
    rep = bisect(op_dir, "cfgnorm_impl.py", golden_cache=golden_cache)
    f = rep.first_divergence
    assert f is not None and f.line == line, (rep.summary, rep.evidence)
    assert any("the wrong attribute" in e for e in rep.evidence), rep.evidence


def test_padding_reaching_an_output_names_the_tail_bound_upstream() -> None:
    line = next(i for i, ln in enumerate(_TILED.splitlines(), 1) if "t_valid =" in ln)
    err = next(i for i, ln in enumerate(_TILED.splitlines(), 1) if "out[:] = tmp" in ln)
    got = static_poison_bound_source(_TILED, err, _POISON)
    assert got is not None and got[0] == line, got
    # another error, or two different bounds upstream: no claim
    assert static_poison_bound_source(_TILED, err, "outside the destination extent") is None
    two = _TILED.replace("valid_shape=[t_valid, 16]", "valid_shape=[t_valid, w_valid]").replace(
        "        t_valid =", "        w_valid = (t - 1).min(16)\n        t_valid =")
    assert static_poison_bound_source(two, err + 1, _POISON) is None
