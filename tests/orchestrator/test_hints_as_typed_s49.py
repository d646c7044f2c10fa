"""``report`` and ``show --gate`` of a folder that never ran name it as typed (UX audit s49).

``status``, ``approve``, ``reject`` and ``resume`` said ``start a run with `python -m orchestrator run ro/silu```
since s45, but ``report ro/silu`` and ``show ro/silu --gate`` gave the resolved absolute path in the command to
type (``run /tmp/.../ro/silu``) - another command than the one the user's own path makes.
"""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("command", [("report",), ("show", "--gate"), ("status",)])
def test_the_hint_names_the_op_dir_as_typed(tmp_path, cli, monkeypatch, command) -> None:
    (tmp_path / "my op").mkdir()
    monkeypatch.chdir(tmp_path)
    out = cli(command[0], "my op", *command[1:])
    assert out.returncode == 1
    assert out.stderr.strip().endswith("; start a run with `python -m orchestrator run 'my op'`"), out.stderr
