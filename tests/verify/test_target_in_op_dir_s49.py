"""A kernel named relative to the op dir is the op dir's, even beside a same-named file (session 49 user walk)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.verify._engine import VerifyUsageError, _step_paths


def _op(tmp_path: Path) -> Path:
    op = tmp_path / "silu"
    op.mkdir()
    (op / "silu_impl.py").write_text("# the op dir's kernel\n")
    (op / "stage1.py").write_text("# a stage\n")
    return op


def test_the_op_dirs_file_wins_over_a_stray_one_in_the_working_directory(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    op = _op(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "silu_impl.py").write_text("# a stray copy\n")
    (tmp_path / "stage1.py").write_text("# a stray stage\n")
    _, tgt, prev = _step_paths("silu", "silu_impl.py", "stage1.py")
    assert tgt.resolve() == (op / "silu_impl.py").resolve()
    assert prev is not None and prev.resolve() == (op / "stage1.py").resolve()


def test_paths_given_through_the_op_dir_or_absolute_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    op = _op(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert _step_paths("silu", "silu/silu_impl.py", None)[1] == Path("silu/silu_impl.py")
    assert _step_paths("silu", str(op / "silu_impl.py"), None)[1] == op / "silu_impl.py"
    (tmp_path / "other.py").write_text("# not in the op dir\n")
    with pytest.raises(VerifyUsageError, match="not inside the operator directory"):
        _step_paths("silu", "other.py", None)  # a file only the working directory has stays refused
