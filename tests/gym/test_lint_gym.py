"""Lint accepts legal gym-style PyPTO (issue #16): each rule fixed for the gym has a gym-shaped test here.

The kernels below are written the way gym operators write them: tile sizes from a config dataclass or from a
static ``shape[1]``, several jit kernels behind one dispatcher, dims from ``pypto.frontend.dynamic``, inputs
padded on the host, scalar attributes with host-side scalar arithmetic.
"""

from __future__ import annotations

from pathlib import Path

from runtime.lint import lint_source

CORPUS = Path(__file__).parent / "corpus_data"

HEAD = '''import numpy as np
import pypto

D = 64


'''

KERNEL = '''@pypto.frontend.jit
def k(x: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32), y: pypto.Tensor([pypto.DYNAMIC, D], pypto.DT_FP32)):
    TILES
    for i in pypto.loop(pypto.ceildiv(x.shape[0], 16), name="r", idx_name="i"UNROLL):
        xt = pypto.view(x, [16, D], [i * 16, 0], valid_shape=[(x.shape[0] - i * 16).min(16), D])
        BODY
        pypto.assemble(yt, [i * 16, 0], y)


def k_wrapper(x):
    y = np.empty_like(x)
    k(x, y)
    return y
'''


def kernel(tiles: str = "pypto.set_vec_tile_shapes(16, D)", body: str = "yt = pypto.exp(xt)", unroll: str = "",
           head: str = HEAD) -> str:
    return head + KERNEL.replace("TILES", tiles).replace("BODY", body).replace("UNROLL", unroll)


def findings(source: str, rule: str, filename: str = "k_impl.py") -> list:
    return [f for f in lint_source(source, filename, stage="final") if f.rule_id == rule and f.status != "PASS"]


def test_ol48_tile_rows_from_a_config_dataclass_and_a_static_shape_axis_are_compile_time() -> None:
    head = HEAD + ("from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass Cfg:\n"
                   "    rows: int = 16\n\n\nCFG = Cfg()\n\n\n")
    assert findings(kernel("pypto.set_vec_tile_shapes(CFG.rows, x.shape[1])", head=head), "OL48") == []
    assert findings(kernel("pypto.set_vec_tile_shapes(Cfg.rows, D)", head=head), "OL48") == []
    # the dynamic axis stays a runtime value: still refused
    bad = findings(kernel("pypto.set_vec_tile_shapes(x.shape[0], D)", head=head), "OL48")
    assert len(bad) == 1 and "x.shape[0]" in bad[0].message


def test_ol56_literal_and_named_multi_value_unroll_lists_fail_until_the_performance_stage(tmp_path: Path) -> None:
    """Issue #25: OL56 is stage-aware. Several ``unroll_list`` values (legal PyPTO: the gym's mhc_sinkhorn uses
    [1, 8]) FAIL in the design, module and final stages, are allowed in the performance stage and in imported
    code whose SPEC.md declares it already tuned; the message names the stage and the reason."""
    literal = findings(kernel(unroll=", unroll_list=[8, 1]"), "OL56")
    named = findings(kernel(unroll=", unroll_list=UNROLL", head=HEAD + "UNROLL = [8, 1]\n\n\n"), "OL56")
    assert [f.status for f in literal] == ["FAIL"] and [f.status for f in named] == ["FAIL"]
    assert literal[0].is_blocking and "FAIL in the final stage" in literal[0].message
    assert findings(kernel(unroll=", unroll_list=[1]"), "OL56") == []
    src = kernel(unroll=", unroll_list=[8, 1]")
    for stage in ("module", "final"):
        (hit,) = [f for f in lint_source(src, "k_impl.py", stage=stage) if f.rule_id == "OL56"]
        assert hit.status == "FAIL" and f"in the {stage} stage" in hit.message
    (perf,) = [f for f in lint_source(src, "k_impl.py", stage="performance") if f.rule_id == "OL56"]
    assert perf.status == "INFO" and not perf.is_blocking and "performance stage" in perf.message
    (tmp_path / "SPEC.md").write_text("---\nop_name: k\nimported: {source: gym, tuned: true}\n---\n")
    (tuned,) = [f for f in lint_source(src, "k_impl.py", stage="final", op_dir=tmp_path) if f.rule_id == "OL56"]
    assert tuned.status == "INFO" and "imported code declared already tuned" in tuned.message
    design = "# Design\n\n```python\nfor i in pypto.loop(n, unroll_list=[4, 2, 1]):\n    pass\n```\n"
    (d,) = [f for f in lint_source(design, "DESIGN.md", stage="design") if f.rule_id == "OL56"]
    assert d.status == "FAIL" and "in the design stage" in d.message


def test_pf01_vendor_housekeeping_imports_pass_only_at_module_level_in_imported_code(tmp_path: Path) -> None:
    """Issue #25: gym impls import os/sys/logging/struct/tempfile at module level (a build folder, ``sys.argv``
    run-mode switches, a logger, float bit tricks). In code whose SPEC.md declares ``imported:`` that is INFO;
    model-written code (no such SPEC.md), a function-level import, a module outside the list, and every banned
    *use* (PF02) still FAIL."""
    head = "import os\nimport struct\nfrom logging import getLogger\n" + HEAD
    src = kernel(head=head)
    plain = findings(src, "PF01")
    assert [f.status for f in plain] == ["FAIL", "FAIL", "FAIL"]
    (tmp_path / "SPEC.md").write_text("---\nop_name: k\nimported: {source: gym, tuned: true}\n---\n")
    vendor = [f for f in lint_source(src, "k_impl.py", stage="final", op_dir=tmp_path) if f.rule_id == "PF01"
              and f.status != "PASS"]
    assert [f.status for f in vendor] == ["INFO", "INFO", "INFO"] and not any(f.is_blocking for f in vendor)
    assert "imported code" in vendor[0].message
    inner = kernel(head=HEAD).replace("def k_wrapper(x):\n", "def k_wrapper(x):\n    import os  # noqa\n")
    socket = kernel(head="import socket\n" + HEAD)
    system = kernel(head="import os\n" + HEAD).replace("def k_wrapper(x):\n",
                                                        "def k_wrapper(x):\n    os.system('true')\n")
    for bad, rule in ((inner, "PF01"), (socket, "PF01"), (system, "PF02")):
        hits = [f for f in lint_source(bad, "k_impl.py", stage="final", op_dir=tmp_path) if f.rule_id == rule]
        assert any(f.status == "FAIL" for f in hits), (rule, hits)
    (tmp_path / "SPEC.md").write_text("---\nop_name: k\n---\n")  # not imported: FAIL again
    assert [f.status for f in lint_source(src, "k_impl.py", stage="final", op_dir=tmp_path)
            if f.rule_id == "PF01" and f.status != "PASS"] == ["FAIL", "FAIL", "FAIL"]


def test_pf01_a_side_effect_import_of_torch_npu_passes_in_imported_code_and_every_use_fails(tmp_path: Path) -> None:
    """Real gym kernels ``import torch_npu  # noqa: F401`` at module level (quant_batch_matmul, gated_delta_rule):
    INFO in imported code, whose sandbox serves the stand-in as a device host serves the real module. Any use of
    the name is a fact of the host (PF04; red team s19: ``torch_npu is None`` told the sandbox from a device)."""
    (tmp_path / "SPEC.md").write_text("---\nop_name: k\nimported: {source: gym, tuned: true}\n---\n")
    src = kernel(head="import torch_npu  # noqa: F401\n" + HEAD)
    hits = [f for f in lint_source(src, "k_impl.py", stage="final", op_dir=tmp_path) if f.status != "PASS"]
    assert [(f.rule_id, f.status) for f in hits if f.rule_id in ("PF01", "PF02", "PF04")] == [("PF01", "INFO")], hits
    probe = kernel(head="try:\n    import torch_npu\nexcept ImportError:\n    torch_npu = None\n" + HEAD).replace(
        "    k(x, y)\n", "    k(x, y) if torch_npu is None else None\n")
    op = kernel(head="import torch_npu\n" + HEAD).replace("    k(x, y)\n", "    k(torch_npu.npu_silu(x), y)\n")
    for bad in (probe, op):
        blocking = {f.rule_id for f in lint_source(bad, "k_impl.py", stage="final", op_dir=tmp_path) if f.is_blocking}
        assert "PF04" in blocking, blocking
    (tmp_path / "SPEC.md").write_text("---\nop_name: k\n---\n")  # model-written code: the import itself fails
    assert [f.status for f in lint_source(src, "k_impl.py", stage="final", op_dir=tmp_path)
            if f.rule_id == "PF01" and f.status != "PASS"] == ["FAIL"]


def test_ol02_message_for_a_rebound_input_talks_about_the_input() -> None:
    src = kernel(body="x = pypto.exp(xt)\n        yt = x")
    (hit,) = findings(src, "OL02")
    assert "input `x`" in hit.message and "output" not in hit.message
    out = kernel(body="yt = pypto.exp(xt)\n        y = yt")
    assert any("writes nothing to the output" in f.message for f in findings(out, "OL02"))


def test_ol29_accepts_dims_from_pypto_frontend_dynamic() -> None:
    head = HEAD + 'N = pypto.frontend.dynamic("N")\n\n\n'
    src = kernel(head=head).replace("pypto.Tensor([pypto.DYNAMIC, D]", "pypto.Tensor([N, D]")
    assert "pypto.DYNAMIC, D]" not in src
    assert findings(src, "OL29") == []
    static = kernel().replace("pypto.Tensor([pypto.DYNAMIC, D]", "pypto.Tensor([64, D]")
    assert [f.status for f in findings(static, "OL29")] == ["WARN"]


PAD_SLICE = '''
def k_wrapper(x):
    rows = (x.shape[0] + 15) // 16 * 16
    xp = np.zeros((rows, D), dtype=x.dtype)
    xp[: x.shape[0]] = x
    y = np.empty_like(xp)
    k(xp, y)
    return y[: x.shape[0]].copy()
'''
PAD_CONCAT = '''
def k_wrapper(x):
    rows = (x.shape[0] + 15) // 16 * 16
    xp = np.concatenate([x, np.zeros((rows - x.shape[0], D), dtype=x.dtype)])
    y = np.empty_like(xp)
    k(xp, y)
    return y[: x.shape[0]].copy()
'''


def _with_wrapper(wrapper: str) -> str:
    src = kernel()
    return src[: src.index("def k_wrapper")] + wrapper.lstrip("\n")


def test_ol62_padding_by_slice_assignment_is_layout_like_concatenate() -> None:
    assert findings(_with_wrapper(PAD_CONCAT), "OL62") == []
    assert findings(_with_wrapper(PAD_SLICE), "OL62") == []
    # computing into the buffer, or overwriting the output after the kernel, is still host math
    assert findings(_with_wrapper(PAD_SLICE.replace("xp[: x.shape[0]] = x", "xp[: x.shape[0]] = x * 2.0")), "OL62")
    assert findings(_with_wrapper(PAD_SLICE.replace("    return y[", "    y[: x.shape[0]] = x\n    return y[")),
                    "OL62")


def test_ol62_scalar_attribute_arithmetic_on_the_host_is_allowed_tensor_arithmetic_is_not() -> None:
    src = (CORPUS / "adamw" / "adamw_impl.py").read_text()
    assert findings(src, "OL62", "adamw_impl.py") == []  # 1.0 - beta1 ** step on float attributes
    bad = src.replace("adamw_kernel(param, grad,", "adamw_kernel(param * 1.0, grad,")
    assert findings(bad, "OL62", "adamw_impl.py")


def test_ol01_several_jit_kernels_behind_a_dispatcher_each_linted() -> None:
    src = (CORPUS / "silu" / "silu_impl.py").read_text() + "\n\ndef silu_wrapper(x):\n    return silu(x)\n"
    blocking = [f for f in lint_source(src, "silu_impl.py", stage="final") if f.status == "FAIL"
                and f.severity in ("S0", "S1")]
    assert blocking == []
    # every kernel is still linted: a fault in the second kernel is found
    broken = src.replace("        pypto.assemble(pypto.cast(yf, pypto.DT_BF16), [i * TILE_ROWS, 0], y)\n",
                         "        pypto.assemble(pypto.cast(yf, pypto.DT_BF16), [i * TILE_ROWS, 0], y)\n    return\n")
    assert any(f.rule_id == "OL03" and f.status == "FAIL" for f in lint_source(broken, "silu_impl.py", stage="final"))
