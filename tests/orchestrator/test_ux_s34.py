"""Small things a user reads (session 34): the progress line's module steps, from one definition."""

from __future__ import annotations


def test_the_progress_line_shows_the_module_on_every_module_step() -> None:
    from orchestrator.core.graph import MODULE_NODES, MODULE_STEPS, NODES
    from orchestrator.ui.progress import step_text

    assert set(MODULE_STEPS) <= MODULE_NODES <= set(NODES)
    values = {"modules": [{"name": "exp", "attempts": 1, "budget": 5}, {"name": "sum", "attempts": 0, "budget": 5}],
              "active": 2}
    for node in MODULE_STEPS:
        assert "M2/2 sum" in step_text(node, values), node
    assert "M2/2" not in step_text("cleanup", values)
