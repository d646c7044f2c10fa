"""``status`` of a run stopped by Ctrl-C in the middle of a step (UX audit s48/s49).

After a Ctrl-C during the designer's model call, ``status`` said ``run X stopped before design``: it read as if the
design had not begun, while the user had watched it run for a minute. The checkpoint cannot tell whether the next
step had begun (LangGraph checkpoints between steps), so ``status`` now says what is true either way, and what
``resume`` does with the step: it runs again from its start, the model call cut short made again.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.store.results import run_status


def test_an_interrupted_step_is_said_to_run_again(tmp_path: Path) -> None:
    op = tmp_path / "my op"
    op.mkdir()
    res = run_status(op, "20261207T000000-abcd", {"phase": "design", "node": "intake"}, ("design",), [])
    assert res.status == "interrupted"
    assert "stopped before" not in res.message
    assert "interrupted during or just before design" in res.message
    assert "(resume runs it again from its start; a model call cut short is made again)" in res.message
    assert "; continue it with `" in res.message  # the phrase every stopped run's status uses
    assert res.message.endswith(f"resume '{op}'`"), res.message  # quoted for the shell, one command
