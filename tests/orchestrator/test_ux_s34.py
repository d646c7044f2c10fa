"""Small things a user reads (session 34): the delivered README's SPEC values, the progress line's module steps."""

from __future__ import annotations

from orchestrator.core.cleanup import render_readme


def test_the_delivered_readme_writes_spec_values_as_a_reader_would() -> None:
    """Before: ``- p0_shapes: `[{'B': 4, 'D': 64}, {'B': 1, 'D': 64}]``` (Python's repr of the front matter)."""
    spec = {"inputs": [{"name": "x", "shape": ["B", "D"], "dtype": "fp32"}],
            "outputs": [{"name": "y", "shape": ["B", "D"], "dtype": "fp32"}],
            "p0_shapes": [{"B": 4, "D": 64}, {"B": 1, "D": 64}], "dims": {"D": [64, 128]},
            "dynamic_axes": ["B"], "supported_dtypes": ["fp32", "bf16"]}
    text = render_readme("silu", spec, level="L1", module_count=1, verdict="PASS", evidence="0" * 64)
    assert "- p0_shapes: `B=4, D=64; B=1, D=64`" in text
    assert "- dims: `D=[64, 128]`" in text
    assert "- dynamic_axes: `B`" in text
    assert "- supported_dtypes: `fp32, bf16`" in text
    assert "{'" not in text and "['" not in text


def test_the_progress_line_shows_the_module_on_every_module_step() -> None:
    from orchestrator.core.graph import MODULE_NODES, MODULE_STEPS, NODES
    from orchestrator.ui.progress import step_text

    assert set(MODULE_STEPS) <= MODULE_NODES <= set(NODES)
    values = {"modules": [{"name": "exp", "attempts": 1, "budget": 5}, {"name": "sum", "attempts": 0, "budget": 5}],
              "active": 2}
    for node in MODULE_STEPS:
        assert "M2/2 sum" in step_text(node, values), node
    assert "M2/2" not in step_text("cleanup", values)
