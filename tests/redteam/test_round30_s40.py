"""Accident round 30 (session 40): the REAL gym kernels as a model would rewrite them - plausible accidental edits
that must be refused, and honest rewrites that must PASS, each verified on seeds 0, 11 and 12345.

The kernels are the vendor's own, read at run time from ``$FORGE_SHARED/gym`` (``<repo>/../shared/gym``); nothing of
them is in the repository. Each operator is imported once per session with ``python -m orchestrator import`` as
``runs.tsv`` runs it (``orchestrator.adapters.gym.import_gym_op``), and a candidate is that op dir with text
substitutions applied to ``<op>_impl.py`` (each ``old`` must occur exactly once: a changed gym fails loudly). The
tests skip, saying so, without the gym or torch.

Measured before this session's fixes (verify, unseen drawing version 15):

- ``sl_eps_state_for_cell`` (sum_lstm normalising the cell path with ``eps_state``; both eps are 1e-6 in the SPEC)
  passed every seed. A SPEC of static shapes (every one-case gym import) got no attribute case at all - only the
  "below" set on its last unseen case, never the set far above a tiny ``eps`` with tiny rows. Unseen drawing version 16
  (``runtime.opdir._unseen.attribute_cases``) runs them on the static shape: FAIL_NUMERIC since. The same cases refuse
  the vendor's own mhc_sinkhorn (``h / row_sum + eps`` where its golden has ``h / (row_sum + eps)``: 0.028 apart at
  eps 6.4e-4), and its golden's form (``mh_h_golden_row_step``) passes: tests/gym/test_gym_operators.py records it.
- ``as_h_pad_left`` (attn_softmax padded on the left, ``torch.cat([pad, scores])``, its result sliced from the right)
  was FAIL_CHEAT: the sandbox's finder looked for a padded input in the top-left corner only, so the kernel argument
  was "host data". It now also tries the input at the end and centred on each axis
  (``runtime.sandbox._finder._pad_offsets``, ``tests/sandbox/test_finder_pads_s40.py``).

Open (strict xfail, ``ROUTER_TIES``): two honest rewrites of llada2_gate_select (the bias row broadcast instead of
assembled row by row; the routed scale folded into the denominator) are refused on one seed each: an expert picked
on a float32 near-tie of the biased score, whose unbiased weight then departs - the tie rule cannot see the biased
score. ``ll_mask_zero`` (dropped groups filled with 0.0, round 28's ``gg_mask_zero``) passes every seed and is right
on this SPEC's domain: the imported ``expert_bias`` range (+-0.037, the gym test's draw) keeps sigmoid + bias > 0.

Edits that look wrong and are right on the SPEC's domain (PASS is correct, kept as such): the softmax's shift by the
first tile's max only (any shift is exact where nothing overflows; the SPEC's scores cannot) and the row mean as
``4 / D_GATE_4`` (= 1 / H exactly). Sinkhorn's column step without eps passed version 15 too (O(eps) apart), but on
the vendor's row step, which version 16 refuses.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from test_boundary_corpus import _POLICY

from runtime.verify import VerifySettings, verify

ROOT = Path(__file__).resolve().parents[2]
GYM = (Path(os.environ.get("FORGE_SHARED") or ROOT.parent / "shared") / "gym").resolve()
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (GYM / "runs.tsv").is_file(), reason=f"the gym corpus is not here ({GYM}; set FORGE_SHARED)"),
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="gym operators are torch; torch is not "
                       "installed (pip install torch==2.13.0, a CPU build)"),
]

REFUSED = "refused"
# (candidate, operator, [(old, new), ...], expected): REFUSED = a FAIL_* verdict on every seed
_V = "valid_shape=[actual_b, actual_d])"
_P3 = "            r = pypto.sub(r, gmax)\n            r = pypto.exp(r)\n            r = pypto.div(r, tsum)"
_ROW = "            comb_flag = comb_flag / row_sum + eps\n            col_sum"
_PAD = ("        pad = torch.full(\n            (M, padded_S - S), FILL_VAL, dtype=torch.bfloat16, device=scores.device"
        "\n        )\n        scores_padded = torch.cat([scores, pad], dim=1)")
WRONG = [
    # sigmoid: [B, 16384] fp32 in [16, 512] tiles, B in {16, 1, 64}
    ("sg_valid_full_tile", "sigmoid", [(_V, "valid_shape=[TILE_B, actual_d])")]),
    ("sg_no_valid_shape", "sigmoid", [("[b_idx * TILE_B, d_idx * TILE_D],\n                " + _V,
                                       "[b_idx * TILE_B, d_idx * TILE_D])")]),
    ("sg_tail_min_B", "sigmoid", [("(B - b_idx * TILE_B).min(TILE_B)", "(B - b_idx * TILE_B).min(B)")]),
    # attn_softmax: [1, S] bf16, tiles of 64, padded by the wrapper with -1e9, scale 0.0625
    ("as_fill_minus100", "attn_softmax", [("FILL_VAL = -1e9", "FILL_VAL = -100.0")]),
    ("as_tiles_plus3", "attn_softmax", [("n_tiles = (S + S_TILE - 1) // S_TILE", "n_tiles = max((S + 3) // S_TILE, 1)")]),
    ("as_pad_left_slice_left", "attn_softmax", [("torch.cat([scores, pad], dim=1)", "torch.cat([pad, scores], dim=1)")]),
    ("as_scale_twice_p3", "attn_softmax", [(_P3, _P3.replace("pypto.sub(r, gmax)", "pypto.sub(pypto.mul(r, scale), gmax)"))]),
    # rms_norm: [1, 64, 256, 256] fp32, over the 64 channels, eps 1e-5
    ("rn_eps_outside_sqrt", "rms_norm", [("    mean_sq_eps = mean_sq + eps\n    rms = pypto.sqrt(mean_sq_eps)",
                                          "    mean_sq_eps = mean_sq\n    rms = pypto.sqrt(mean_sq_eps) + eps")]),
    ("rn_eps_squared", "rms_norm", [("    mean_sq_eps = mean_sq + eps\n", "    mean_sq_eps = mean_sq + eps * eps\n")]),
    # mhc_sinkhorn: [8, 4, 4] fp32, eps 1e-6, 20 iterations
    ("mh_one_extra_iter", "mhc_sinkhorn", [("for _ in range(num_iters - 1):\n            row_sum",
                                            "for _ in range(num_iters):\n            row_sum")]),
    ("mh_iters_fixed", "mhc_sinkhorn", [("for _ in range(num_iters - 1):\n            row_sum",
                                         "for _ in range(19):\n            row_sum")]),
    ("mh_valid_full", "mhc_sinkhorn", [("valid_shape=[t_valid, hc*hc])\n        comb_flag = pypto.transpose",
                                        "valid_shape=[tile_t, hc*hc])\n        comb_flag = pypto.transpose")]),
    ("mh_max_axis0", "mhc_sinkhorn", [("pypto.amax(comb_flag, 1, True)", "pypto.amax(comb_flag, 0, True)")]),
    # llada2_gate_select: [T, 2048] bf16 router, sigmoid + bias, 8 groups, top-4 groups, top-8, renormalised x 2.5
    ("ll_weights_biased", "llada2_gate_select", [("pypto.gather(scores, 1, picks)", "pypto.gather(scores_aug, 1, picks)")]),
    ("ll_bias_one_row", "llada2_gate_select", [("for tmp_idx in range(tile_batch):",
                                                "for tmp_idx in range(min(tile_batch, 1)):")]),
    ("ll_out_offset_times_tile", "llada2_gate_select", [
        ("topk_weights[bs_idx:bs_idx + tile_batch, :] = tw_scaled\n        topk_ids[bs_idx:bs_idx + tile_batch, :]",
         "topk_weights[bs_idx * tile_batch:bs_idx * tile_batch + tile_batch, :] = tw_scaled\n        "
         "topk_ids[bs_idx * tile_batch:bs_idx * tile_batch + tile_batch, :]")]),
    # sum_lstm: fp16 [32, 4H], H = 4096, alpha 0.1, eps_cell = eps_state = 1e-6
    ("sl_eps_outside_sqrt", "sum_lstm", [("    y = pypto.add(y, epsilon)\n    y = pypto.sqrt(y)",
                                          "    y = pypto.sqrt(y)\n    y = pypto.add(y, epsilon)")]),
    ("sl_eps_squared", "sum_lstm", [("    y = pypto.add(y, epsilon)\n", "    y = pypto.add(y, epsilon * epsilon)\n")]),
    ("sl_eps_state_for_cell", "sum_lstm", [("rms_norm_pure(pre_c, config.eps_cell)",
                                            "rms_norm_pure(pre_c, config.eps_state)")]),
    ("sl_wstate_for_wcell", "sum_lstm", [("pypto.mul(c_cand_norm, w_cell_b)", "pypto.mul(c_cand_norm, w_state_b)")]),
    ("sl_alpha_on_states", "sum_lstm", [("z4_scaled = pypto.mul(z4_tile, config.alpha)\n        fused = pypto.add("
                                         "states_tile, z4_scaled)", "z4_scaled = pypto.mul(states_tile, config.alpha)"
                                         "\n        fused = pypto.add(z4_tile, z4_scaled)")]),
]
HONEST = [
    ("sg_h_tile_32x256", "sigmoid", [("TILE_B = 16\nTILE_D = 512", "TILE_B = 32\nTILE_D = 256")]),
    ("as_h_pad_left", "attn_softmax", [("torch.cat([scores, pad], dim=1)", "torch.cat([pad, scores], dim=1)"),
                                       ("return out_padded[:, :S]", "return out_padded[:, padded_S - S:]")]),
    ("mh_h_golden_row_step", "mhc_sinkhorn", [(_ROW, _ROW.replace("comb_flag / row_sum + eps",
                                                                 "comb_flag / (row_sum + eps)"))]),
    # measured on seed 0 (the three seeds are this test's)
    ('as_h_finfo_fill', 'attn_softmax', [('FILL_VAL = -1e9', 'FILL_VAL = float(torch.finfo(torch.bfloat16).min)')]),
    ('as_h_extra_tile', 'attn_softmax', [('n_tiles = (S + S_TILE - 1) // S_TILE', 'n_tiles = S // S_TILE + 1')]),
    ('as_h_no_max_shift', 'attn_softmax', [('            r = pypto.sub(r, gmax)\n            r = pypto.exp(r)\n            ts =', '            r = pypto.exp(r)\n            ts ='), ('            r = pypto.sub(r, gmax)\n            r = pypto.exp(r)\n            r = pypto.div(r, tsum)', '            r = pypto.exp(r)\n            r = pypto.div(r, tsum)')]),
    ('as_h_recip_mul', 'attn_softmax', [('r = pypto.div(r, tsum)', 'r = pypto.mul(r, pypto.div(pypto.full([1], 1.0, pypto.DT_FP32), tsum))')]),
    ('as_h_F_pad', 'attn_softmax', [('        pad = torch.full(\n            (M, padded_S - S), FILL_VAL, dtype=torch.bfloat16, device=scores.device\n        )\n        scores_padded = torch.cat([scores, pad], dim=1)', '        scores_padded = torch.nn.functional.pad(scores, (0, padded_S - S), value=FILL_VAL)')]),
    ('as_h_new_full', 'attn_softmax', [('        pad = torch.full(\n            (M, padded_S - S), FILL_VAL, dtype=torch.bfloat16, device=scores.device\n        )', '        pad = scores.new_full((M, padded_S - S), FILL_VAL)')]),
    ('as_h_padded_buffer_copy', 'attn_softmax', [('        pad = torch.full(\n            (M, padded_S - S), FILL_VAL, dtype=torch.bfloat16, device=scores.device\n        )\n        scores_padded = torch.cat([scores, pad], dim=1)', '        scores_padded = torch.full((M, padded_S), FILL_VAL, dtype=torch.bfloat16)\n        scores_padded[:, :S] = scores')]),
    ('as_h_out_contiguous', 'attn_softmax', [('return out_padded[:, :S]', 'return out_padded[:, :S].contiguous()')]),
    ('as_h_always_pad_copy', 'attn_softmax', [('    else:\n        scores_padded = scores\n', '    else:\n        scores_padded = scores.clone()\n')]),
    ('sg_h_loops_swapped', 'sigmoid', [('    for b_idx in pypto.loop(bs_loop, name="loop_b", idx_name="b_idx"):\n        for d_idx in pypto.loop(ds_loop, unroll_list=[64, 16, 4], name="loop_d", idx_name="d_idx"):', '    for d_idx in pypto.loop(ds_loop, name="loop_d", idx_name="d_idx"):\n        for b_idx in pypto.loop(bs_loop, name="loop_b", idx_name="b_idx"):')]),
    ('sg_h_assemble', 'sigmoid', [('out[b_idx * TILE_B:, d_idx * TILE_D:] = tile_result', 'pypto.assemble(tile_result, [b_idx * TILE_B, d_idx * TILE_D], out)')]),
    ('sg_h_torch_empty', 'sigmoid', [('out = torch.empty_like(x)', 'out = torch.empty(x.shape, dtype=x.dtype)')]),
    ('sl_h_rsqrt', 'sum_lstm', [('    y = pypto.sqrt(y)\n\n    output = pypto.div(x_fp32, y)', '    y = pypto.rsqrt(y)\n\n    output = pypto.mul(x_fp32, y)')]),
    ('sl_h_mean_after_sum', 'sum_lstm', [('    y = pypto.mul(y, 1.0 / x.shape[-1])\n    y = pypto.sum(y, -1, keepdim=True)', '    y = pypto.sum(y, -1, keepdim=True)\n    y = pypto.div(y, float(x.shape[-1]))')]),
    ('as_h_valid_tail', 'attn_softmax', [('    M = scores.shape[0]\n', '    M = scores.shape[0]\n    S = scores.shape[1]\n'), ('                scores, [1, S_TILE], [m_idx, s_off], valid_shape=[1, S_TILE]\n            )\n            r = pypto.cast(row, pypto.DT_FP32)\n            r = pypto.mul(r, scale)\n            tm', '                scores, [1, S_TILE], [m_idx, s_off], valid_shape=[1, (S - s_off).min(S_TILE)]\n            )\n            r = pypto.cast(row, pypto.DT_FP32)\n            r = pypto.mul(r, scale)\n            tm'), ('                scores, [1, S_TILE], [m_idx, s_off], valid_shape=[1, S_TILE]\n            )\n            r = pypto.cast(row, pypto.DT_FP32)\n            r = pypto.mul(r, scale)\n            r = pypto.sub(r, gmax)\n            r = pypto.exp(r)\n            ts', '                scores, [1, S_TILE], [m_idx, s_off], valid_shape=[1, (S - s_off).min(S_TILE)]\n            )\n            r = pypto.cast(row, pypto.DT_FP32)\n            r = pypto.mul(r, scale)\n            r = pypto.sub(r, gmax)\n            r = pypto.exp(r)\n            ts'), ('                scores, [1, S_TILE], [m_idx, s_off], valid_shape=[1, S_TILE]\n            )\n            r = pypto.cast(row, pypto.DT_FP32)\n            r = pypto.mul(r, scale)\n            r = pypto.sub(r, gmax)\n            r = pypto.exp(r)\n            r = pypto.div', '                scores, [1, S_TILE], [m_idx, s_off], valid_shape=[1, (S - s_off).min(S_TILE)]\n            )\n            r = pypto.cast(row, pypto.DT_FP32)\n            r = pypto.mul(r, scale)\n            r = pypto.sub(r, gmax)\n            r = pypto.exp(r)\n            r = pypto.div'), ('    if padded_S > S:\n', '    if False:\n'), ('out_padded = torch.empty(M, padded_S,', 'out_padded = torch.empty(M, S,')]),
    # look wrong, right on the SPEC's domain (module docstring)
    ("as_h_first_tile_shift", "attn_softmax", [("gmax[:] = pypto.maximum(gmax, tm)", "gmax[:] = gmax")]),
    ("sl_h_mean_constant", "sum_lstm", [("pypto.mul(y, 1.0 / x.shape[-1])", "pypto.mul(y, 4.0 / D_GATE_4)")]),
]
# honest rewrites of llada2_gate_select refused on a near-tie (open, strict xfail): the ids are picked by the BIASED
# score, the weights are the UNBIASED one. Where two experts' biased scores are within float32 rounding (the
# kernel's matmul sums in another order than torch's linear; at T = 1024 a near-tie is likely), the kernel may pick
# the other one; the verifier's tie rule explains a departing id only where the float output is close, and the
# unbiased weights of two experts whose biased scores tie are not. Needs the selection key (scores + bias) to be known
# to the comparator (a golden output or a SPEC hint): left for a decision. The vendor's own kernel is exposed alike;
# which draw hits one depends on the file's bytes (the unseen seed hashes them).
ROUTER_TIES = [
    ("ll_h_bias_broadcast", "llada2_gate_select", [("scores_aug = pypto.add(scores, bias_tile)",
                                                    "scores_aug = pypto.add(scores, bias_2d)")]),
    ("ll_h_scale_in_denom", "llada2_gate_select", [
        ("tw_norm = pypto.div(tw, denom)\n        tw_scaled = pypto.mul(tw_norm, routed_scaling_factor)",
         "tw_norm = pypto.div(tw, pypto.mul(denom, 1.0 / routed_scaling_factor))\n        "
         "tw_scaled = pypto.mul(tw_norm, 1.0)")]),
]
CASES = [(*w, REFUSED) for w in WRONG] + [(*h, "PASS") for h in HONEST] + [
    pytest.param(*h, "PASS", id=h[0], marks=pytest.mark.xfail(strict=True, reason="a near-tie of the biased router "
                                                              "score; the weights are unbiased (ROUTER_TIES)"))
    for h in ROUTER_TIES]


def _runs() -> dict[str, tuple[str, str]]:
    out = {}
    for line in (GYM / "runs.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, folder, command, _signal = line.split("\t")
            out[name] = (folder, command)
    return out


@pytest.fixture(scope="session")
def gym_ops(tmp_path_factory: pytest.TempPathFactory):
    """``op -> imported op dir``, each gym operator imported once per session, on first use."""
    from orchestrator.adapters.gym import import_gym_op

    root = tmp_path_factory.mktemp("round30_gym")
    done: dict[str, Path] = {}

    def get(op: str) -> Path:
        if op not in done:
            folder, command = _runs()[op]
            parts = folder.split("/", 1)
            import_gym_op(GYM / "ops" / op, root / op, command=command, cwd=parts[1] if len(parts) > 1 else None,
                          timeout=900)
            done[op] = root / op
        return done[op]

    return get


def _candidate(src_dir: Path, dest: Path, op: str, edits: list[tuple[str, str]]) -> Path:
    shutil.copytree(src_dir, dest)
    impl = dest / f"{op}_impl.py"
    text = impl.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, f"the gym's {op} changed: {old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    impl.write_text(text, encoding="utf-8")
    return impl


@pytest.mark.parametrize(("candidate", "op", "edits", "expected"), CASES,
                         ids=[c[0] if isinstance(c, tuple) else c.id for c in CASES])
def test_round30_candidate_gets_its_verdict_on_three_seeds(gym_ops, tmp_path: Path, candidate: str, op: str,
                                                           edits: list[tuple[str, str]], expected: str) -> None:
    impl = _candidate(gym_ops(op), tmp_path / op, op, edits)
    for seed in (0, 11, 12345):
        report = verify(impl.parent, impl, settings=VerifySettings(sandbox=_POLICY), unseen_seed=seed)
        got = "PASS" if report.verdict == "PASS" else REFUSED if report.verdict.startswith("FAIL") else report.verdict
        assert got == expected, (candidate, seed, report.verdict, [r[:200] for r in report.reasons[:3]])
